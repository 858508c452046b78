"""The symbolic-solution checks of the SRBench releases, each as its code defines it, and srtui's
corrected check (docs/scoring.md, "Expression metrics per release" and its table of where each published
number comes from).

- ``srbench2021``: ``assess_symbolic_model.py`` and ``collate_groundtruth_results.py`` (branch
  master). Only when test R2 > 0.5: the rounded ``truth - model`` is 0 or constant after
  ``simplify(ratio=1)`` and rounding, or the rounded ``model / truth`` is constant; never when the
  cleaned model prints ``0``/``nan`` or could not be made. SRBench 2.0's ground-truth pipeline
  runs this same code, so it is 2.0's published verdict too (``PUBLISHED``).
- ``srbench2022``: competition-2022 ``metrics/evaluation.py`` ``symbolic_equivalence``: the model
  is not ``0`` and ``truth - model`` is ``0`` or constant or ``model / truth`` constant (sympy
  ``is_constant(simplify=False)``, then after ``simplify`` ``is_constant()``).
- ``srbench2025:evaluation``: 2.0's ``metrics/evaluation.py``: as 2022 but rounding (1e-4) the
  difference and ratio first and without the ``0`` test; shipped, not published: the named
  variant ``srbench2025.symbolic_solution:evaluation`` (``VARIANTS``).
- 2021's and 2.0's truth is read as ``symbolic_utils.get_sym_model`` reads it (:func:`sym_model`).
- ``corrected`` (the published checks): the model is not constant, and the rounded, simplified
  difference is constant or the rounded, simplified ratio a non-zero constant (floats rounded
  *after* simplify, so float noise cannot hide a solution).

The numeric screen (:func:`varies_beyond_noise`) evaluates truth and model at fixed random points
in 30-digit precision; when difference and ratio both vary by more than float-coefficient noise
could explain, neither is constant after simplify (and rounding), so the simplify is skipped
with the same verdict (tests/unit/test_releases.py checks this property on near-solutions).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.sympy_view import parse_sympy_view
from srtui.results.metrics.profiles import Profile
from srtui.results.metrics.releases import PI_LITERAL, SPECS, Release, round_floats, shared_simplify

#: the screen's tolerance: sympy's simplify cancels float coefficients approximately and some
#: checks round floats after it, so only a change beyond 1 % of |truth| + |model| counts
WIDE = 1e-2


@dataclass(frozen=True)
class Check:
    """One symbolic-solution check as a release's code defines it."""

    name: str
    release: str  # whose model clean-up (``Release``) it checks
    code: str  # the reference file and function
    assess: bool  # assess_symbolic_model.py's test (2021, 2.0 published), else metrics/evaluation.py's
    truth_as_sym_model: bool  # truth read by get_sym_model (2021, 2.0), else the release's clean-up
    round_terms: bool = False  # evaluation.py of 2.0 rounds difference and ratio before testing
    zero_model: bool = True  # the model ``0`` can be a solution (2022 tests that it is not)
    corrected: bool = True  # srtui's corrected variant is computed alongside (the published checks)


CHECKS = {
    c.name: c
    for c in (
        Check(
            "srbench2021",
            "srbench2021",
            "experiment/assess_symbolic_model.py assess_symbolic_model_from_file + "
            "postprocessing/collate_groundtruth_results.py",
            assess=True,
            truth_as_sym_model=True,
        ),
        Check(
            "srbench2022",
            "srbench2022",
            "competition-2022/experiment/metrics/evaluation.py symbolic_equivalence",
            assess=False,
            truth_as_sym_model=False,
            zero_model=False,
        ),
        Check(
            "srbench2025:evaluation",
            "srbench2025",
            "experiment/metrics/evaluation.py symbolic_equivalence",
            assess=False,
            truth_as_sym_model=True,
            round_terms=True,
            corrected=False,
        ),
    )
}
#: the check behind each release's published verdict. SRBench 2.0 ships metrics/evaluation.py, but
#: its ground-truth pipeline runs assess_symbolic_model.py and collate_groundtruth_results.py,
#: 2021's code (the same test, clean-up and truth reading), so its verdict is 2021's check
PUBLISHED = {"srbench2021": "srbench2021", "srbench2022": "srbench2022", "srbench2025": "srbench2021"}
#: named variants of a release's verdict (``<release>.symbolic_solution:<variant>``): other checks it ships
VARIANTS = {"srbench2025": {"evaluation": "srbench2025:evaluation"}}
#: the checks run per model: every published check and every variant, once each
CHECK_NAMES = tuple(dict.fromkeys([*PUBLISHED.values(), *(c for v in VARIANTS.values() for c in v.values())]))


def sym_model(truth: str, features: Sequence[str]) -> sp.Expr:
    """The ground truth as SRBench 2021 and 2.0 read it (``symbolic_utils.get_sym_model``, the same
    code on both branches): every ``pi`` in the formula string replaced by ``3.1415926535``
    before parsing (a text replacement, as theirs), then ``round_floats`` (``Float(round(c, 3), 3)``),
    never simplified. A Gaussian's ``1/sqrt(2*pi)`` is therefore the Float 0.399."""
    return _sym_model(truth, tuple(features))


@lru_cache(maxsize=256)
def _sym_model(truth: str, features: tuple[str, ...]) -> sp.Expr:
    return round_floats(parse_sympy_view(truth.replace("pi", PI_LITERAL), features, "python"), 1e-4, True)


@lru_cache(maxsize=256)
def _truth(truth: str, features: tuple[str, ...], check: str) -> sp.Expr:
    c = CHECKS[check]
    if c.truth_as_sym_model:
        return _sym_model(truth, features)
    r = SPECS[c.release]
    return r.clean(r.read(truth, features, "python"))


# --- the numeric screen --------------------------------------------------------------------------


def _points(symbols: Sequence[sp.Symbol], k: int = 4) -> list[dict[sp.Symbol, sp.Float]]:
    rng = random.Random(20260423)
    return [{s: sp.Float(rng.uniform(0.3, 1.9), 30) for s in symbols} for _ in range(k)]


def _values(expr: sp.Basic, syms: Sequence[sp.Symbol]) -> list[complex | None]:
    out: list[complex | None] = []
    for p in _points(syms):
        try:
            v = complex(sp.N(expr.xreplace(p), 30))
        except (TypeError, ValueError, ArithmeticError, RecursionError):
            v = None
        out.append(v if v is not None and np.isfinite(v.real) and np.isfinite(v.imag) else None)
    return out


def varies_beyond_noise(t: sp.Basic, m: sp.Basic, tol: float) -> tuple[bool, bool]:
    """(difference varies, ratio varies) measured against the size of truth and model themselves,
    for checks that round floats after simplify: coefficient noise of relative size ``tol`` can
    vanish there, so only a change larger than ``tol`` times |truth| + |model| counts (the ratio
    as |model - c * truth| with c its value at the first point: no pole amplifies noise)."""
    syms = sorted(t.free_symbols | m.free_symbols, key=str)
    if not syms:
        return False, False
    pairs = [(a, b) for a, b in zip(_values(t, syms), _values(m, syms)) if a is not None and b is not None]
    if len(pairs) < 2:
        return False, False
    (t0, m0), rest = pairs[0], pairs[1:]
    diff = any(abs((ti - mi) - (t0 - m0)) > tol * (abs(ti) + abs(mi) + abs(t0) + abs(m0)) for ti, mi in rest)
    if t0 == 0:
        return diff, False
    c = m0 / t0
    ratio = any(abs(mi - c * ti) > tol * (abs(mi) + abs(c * ti)) for ti, mi in rest)
    return diff, ratio


# --- symbolic solution ---------------------------------------------------------------------------


def _const(expr: sp.Basic, **flags: bool) -> bool:
    return bool(expr.is_constant(**flags))


def _check_evaluation(t: sp.Expr, m: sp.Expr, check: Check, screened_out: bool) -> tuple[bool, str]:
    """metrics/evaluation.py's symbolic_equivalence (the 2022 competition's; 2.0's rounds first
    and does not test that the model is not ``0``)."""
    # the screen goes first: sympy's is_constant(simplify=False) alone costs the screen many times
    # over (exact equals() of random values), and it says "constant" only of an expression whose
    # values the screen finds constant too
    if screened_out:
        return False, "screen: difference and ratio vary"
    diff, frac = t - m, m / t
    if check.round_terms:
        release = SPECS[check.release]
        diff, frac = release.rnd(diff), release.rnd(frac)
    how = "is_constant(simplify=False)"
    try:
        dc, fc = _const(diff, simplify=False), _const(frac, simplify=False)
        if not dc and not fc:
            how = "after simplify"
            try:
                diff = shared_simplify(diff)
                dc = _const(diff)
                if not dc:  # a constant difference decides the verdict: the ratio cannot change it
                    frac = shared_simplify(frac)
                    fc = _const(frac)
            except Exception:  # noqa: BLE001 - the reference gives up on a failing simplify, keeping what it has
                pass
    except Exception:  # noqa: BLE001 - any failure is recorded, never raised
        dc = fc = False
    ok = str(diff) == "0" or dc or fc
    if not check.zero_model:
        ok = ok and str(m) != "0"
    return bool(ok), f"{how}: difference constant {dc}, ratio constant {fc}"


def _check_assess(t: sp.Expr, m: sp.Expr, check: Check, screened_out: bool) -> tuple[bool, str]:
    """assess_symbolic_model.py's flags, combined as collate_groundtruth_results.py does (any flag,
    and a simplified model that is not ``0`` or ``nan``)."""
    if str(m) in ("0", "nan"):
        return False, "cleaned model is 0"
    if screened_out:  # before the rounding: its subs calls cost as much as the screen
        return False, "screen: difference and ratio vary"
    release = SPECS[check.release]
    diff, frac = release.rnd(t - m), release.rnd(m / t)
    z = c = f = False
    try:
        if not _const(diff) or _const(frac):
            diff = release.rnd(release.simplify(diff))
        z = str(diff) == "0"
        c = _const(diff)
        f = _const(frac)
    except Exception:  # noqa: BLE001 - any failure is recorded, never raised
        pass
    return bool(z or c or f), f"difference zero {z}, constant {c}; ratio constant {f}"


def _check_corrected(t: sp.Expr, m: sp.Expr, release: Release, screened_out: bool) -> tuple[bool, str]:
    if not m.free_symbols:
        return False, "constant model"
    if screened_out:
        return False, "screen: difference and ratio vary"
    diff, frac = t - m, m / t
    d = release.rnd(release.simplify(diff))
    if not d.free_symbols or _const(d):
        return True, f"truth - model = {d}"
    q = release.rnd(release.simplify(frac))
    if (not q.free_symbols or _const(q)) and q != 0:
        return True, f"model / truth = {q}"
    return False, "neither difference nor ratio is constant"


def check_of(name: str) -> Check:
    """A check by its name, or a release's published check by the release's name."""
    return CHECKS[PUBLISHED.get(name, name)]


def solution_op(
    text: str,
    truth: str,
    features: Sequence[str],
    dialect: str,
    check: str,
    model: sp.Expr | None = None,
    r2_test: float | None = None,
    screen: bool = True,
    simplified: bool = True,
) -> dict[str, Any]:
    """The verdict of one check (a name of ``CHECKS``, or a release: its published check) and,
    for a published check, srtui's corrected verdict; ``model`` is the cleaned model if known
    (``simplified=False``: the model the release keeps when its simplify runs out of time).
    The assess check (2021, 2.0) looks only at models with test R2 > 0.5."""
    c = check_of(check)
    r = SPECS[c.release]
    t = _truth(truth, tuple(features), c.name)
    if c.assess and not (r2_test is not None and r2_test > 0.5):
        return {
            Profile.REFERENCE: False,
            Profile.CORRECTED: False if c.corrected else None,
            "why": "assess_symbolic_model checks only models with test R2 > 0.5",
            "gate": False,
        }
    crashed = None
    if model is None:
        try:
            model = r.clean(r.read(text, features, dialect), simplified)
        except ExpressionError as exc:
            if not c.corrected:
                raise
            # the reference's clean-up raised: no simplified model, so no solution (collate's
            # NA test); srtui's corrected variant reads the tokens instead
            crashed = f"the model cannot be read as the reference reads it ({exc}): no simplified model"
            model = r.clean(r.read(text, features, dialect, as_code=False), simplified)
    # one screen for both checks: it depends on truth and model alone
    screened_out = screen and all(varies_beyond_noise(t, model, WIDE))
    if crashed:
        ref, why = False, crashed
    else:
        ref, why = (_check_assess if c.assess else _check_evaluation)(t, model, c, screened_out)
    out: dict[str, Any] = {Profile.REFERENCE: ref, Profile.CORRECTED: None, "why": why, "gate": True}
    if c.corrected:
        out[Profile.CORRECTED], out["why_corrected"] = _check_corrected(t, model, r, screened_out)
    return out
