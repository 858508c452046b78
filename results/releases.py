"""Expression metrics exactly as each SRBench release computes them (and SRSD's edit distance).

Every model and truth string is read by ``engine.expression.sympy_view`` (the tree sympy's parser
would build, never sympify). Per release (README "Expression metrics per release"):

- ``srbench2021`` (branch master, symbolic_utils/assess_symbolic_model): model read with every
  log/sqrt as PLOG/PSQRT and ``pi`` as 3.1415926535; floats below 1e-4 -> 0, others
  ``Float(round(c, 3), 3)`` (by sequential ``subs``); ``simplify(ratio=1)``. ``size`` = nodes of the
  read model, ``size_simplified`` = nodes of the cleaned model. Solution (only when test R2 > 0.5):
  rounded ``truth - model`` is 0 or constant after ``simplify(ratio=1)`` + rounding, or the rounded
  ``model / truth`` is constant; never when the cleaned model prints ``0``/``nan``.
- ``srbench2022`` (srcomp, competition-2022 metrics/evaluation.py): ``simplify`` then floats below
  1e-3 -> 0, others ``round(c, 3)``; simplicity = -round(log5(nodes), 1); feature absence on that
  model; truth read the same way. Solution: model is not ``0`` and ``truth - model`` is ``0`` or
  constant or ``model / truth`` constant (sympy ``is_constant(simplify=False)``, then after
  ``simplify`` ``is_constant()``). A simplify over 10 s (SIGALRM) leaves the model unsimplified.
- ``srbench2025`` (srbench_2025 metrics/evaluation.py, symbolic_utils): ``size`` = nodes of the model
  read with ``pi`` -> 3.1415926535 and 2021's rounding; simplicity of ``simplify(rounded model)``;
  solution as 2022 but rounding (1e-4) the difference and ratio before the check and no test
  that the model is not 0. A simplify over 60 s leaves the (rounded) model unsimplified.
- srtui's own deadline (one per model, ``expr_batch``) ends a simplify sooner: 2022 and 2.0 then
  keep the unsimplified model as their code would (``Release.simplify_limit``); 2021 has no limit,
  so its metrics record a timeout.
- ``corrected`` solution (each release's reading and rounding): the model is not constant, and
  the rounded, simplified difference is constant or the rounded, simplified ratio a non-zero
  constant (floats rounded *after* simplify, so float noise cannot hide a solution).

The numeric screen (:func:`varies_beyond_noise`) evaluates truth and model at fixed random points
in 30-digit precision; when difference and ratio both vary by more than float-coefficient noise
could explain, neither is constant after simplify (and rounding), so the simplify is skipped
with the same verdict (tests/test_releases.py checks this property on near-solutions).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from engine.expression.sympy_view import parse_sympy_view

PI_LITERAL = "3.1415926535"
RELEASES = ("srbench2021", "srbench2022", "srbench2025")
#: the screen's tolerance: sympy's simplify cancels float coefficients approximately and some
#: checks round floats after it, so only a change beyond 1 % of |truth| + |model| counts
WIDE = 1e-2


def node_count(expr: sp.Basic) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def simplicity(size: int | None) -> float | None:
    """-round(log5(size), 1) with numpy's rounding, as the 2022 and 2.0 code compute it."""
    if not size or size < 1:
        return None
    return float(-np.round(np.log(size) / np.log(5), 1))


def feature_absence(used: set[str], unwanted: Sequence[str]) -> float | None:
    """Share of the unwanted (irrelevant or shortcut) features the model leaves out."""
    unwanted = list(unwanted)
    if not unwanted:
        return None
    return sum(1 for f in unwanted if f not in used) / len(unwanted)


def round_floats(expr: sp.Basic, below: float, three_digits: bool) -> sp.Basic:
    """SRBench's round_floats: each Float of the original tree, in pre-order, substituted in turn
    (``subs`` re-evaluates: a zeroed term vanishes); tiny -> 0, else rounded to 3 decimals
    (``Float(round(c, 3), 3)`` in 2021/2.0 symbolic_utils, ``round(c, 3)`` in evaluation.py)."""
    out = expr
    for a in sp.preorder_traversal(expr):
        if isinstance(a, sp.Float):
            if abs(a) < below:
                new = sp.Integer(0)
            else:
                new = sp.Float(round(a, 3), 3) if three_digits else round(a, 3)
            out = out.subs(a, new)
    return out


@lru_cache(maxsize=64)
def _read(
    text: str, features: tuple[str, ...], dialect: str, plain_log_protected: bool, pi_value: str | None
) -> sp.Expr:
    # one model is read by several releases (and twice by 2.0) within one worker task
    return parse_sympy_view(text, features, dialect, plain_log_protected=plain_log_protected, pi_value=pi_value)


#: simplify results of this process, by (canonical tree, ratio): the releases' model clean-ups and
#: the reference and corrected checks often simplify the very same tree (a worker computes all of
#: one model's operations in one task, so they meet here)
_SIMPLIFIED: dict[tuple[str, float | None], sp.Basic] = {}
_SIMPLIFIED_MAX = 512


def shared_simplify(expr: sp.Basic, ratio: float | None = None) -> sp.Basic:
    """``sp.simplify(expr[, ratio])``, computed once per tree. The key is ``srepr`` (classes,
    arguments, Float precision and symbol assumptions), never the printed string, which can
    merge trees sympy treats differently."""
    key = (sp.srepr(expr), ratio)
    hit = _SIMPLIFIED.get(key)
    if hit is None:
        hit = sp.simplify(expr) if ratio is None else sp.simplify(expr, ratio=ratio)
        if len(_SIMPLIFIED) >= _SIMPLIFIED_MAX:
            del _SIMPLIFIED[next(iter(_SIMPLIFIED))]
        _SIMPLIFIED[key] = hit
    return hit


@dataclass(frozen=True)
class Release:
    name: str
    below: float  # floats below this magnitude become 0
    three_digits: bool  # Float(round(c, 3), 3) rather than round(c, 3)
    ratio: float | None  # simplify(ratio=...), None for sympy's default
    round_first: bool  # round the floats before simplify (2021, 2.0) or after (2022)
    pi_literal: bool  # pi read as 3.1415926535 for the simplified model and truth (2021)
    plain_log_protected: bool  # every log/sqrt read as PLOG/PSQRT (2021's clean-up)
    #: seconds the release's own code lets one simplify run (SIGALRM) before it keeps the model
    #: unsimplified; None: no limit (2021), so srtui's deadline can only record a timeout
    simplify_limit: float | None = None

    def read(self, text: str, features: Sequence[str], dialect: str, pi_literal: bool | None = None) -> sp.Expr:
        pi = self.pi_literal if pi_literal is None else pi_literal
        return _read(text, tuple(features), dialect, self.plain_log_protected, PI_LITERAL if pi else None)

    def rnd(self, expr: sp.Basic) -> sp.Basic:
        return round_floats(expr, self.below, self.three_digits)

    def simplify(self, expr: sp.Basic) -> sp.Basic:
        return shared_simplify(expr, self.ratio)

    def clean(self, expr: sp.Basic, simplified: bool = True) -> sp.Basic:
        """The model (or truth) as the release compares it; ``simplified=False``: as the release's
        code keeps it when its simplify runs out of time (rounded, unsimplified)."""
        if not simplified:
            return self.rnd(expr)
        return self.simplify(self.rnd(expr)) if self.round_first else self.rnd(self.simplify(expr))


SPECS = {
    "srbench2021": Release("srbench2021", 1e-4, True, 1, True, True, True),
    "srbench2022": Release("srbench2022", 1e-3, False, None, False, False, False, simplify_limit=10),
    "srbench2025": Release("srbench2025", 1e-4, False, None, True, False, False, simplify_limit=60),
}


def model_op(
    text: str,
    features: Sequence[str],
    dialect: str,
    release: str,
    unwanted: Sequence[str] = (),
    simplified: bool = True,
) -> dict[str, Any]:
    """Sizes, simplicity and feature absence of one model under one release (``simplified=False``:
    of the model the release keeps when its simplify runs out of time)."""
    r = SPECS[release]
    raw = r.read(text, features, dialect)
    if release == "srbench2025":  # 2.0's model_size: pi as a literal, 2021's rounding, no simplify
        size = node_count(round_floats(r.read(text, features, dialect, pi_literal=True), 1e-4, True))
    else:
        size = node_count(raw)
    clean = r.clean(raw, simplified)
    n = node_count(clean)
    used = {str(s) for s in clean.free_symbols}
    return {
        "size": size,
        "size_simplified": n,
        "simplicity": simplicity(n),
        "feature_absence": feature_absence(used, unwanted),
        "simplified": str(clean),
        "_expr": clean,
    }


@lru_cache(maxsize=256)
def _truth(truth: str, features: tuple[str, ...], release: str) -> sp.Expr:
    r = SPECS[release]
    t = r.read(truth, features, "python")
    return r.rnd(t) if release == "srbench2021" else r.clean(t)


# --- the numeric screen --------------------------------------------------------------------------


def _points(symbols: Sequence[sp.Symbol], k: int = 4) -> list[dict]:
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


def _const(expr: sp.Basic, **flags) -> bool:
    return bool(expr.is_constant(**flags))


def _check_2022(t: sp.Expr, m: sp.Expr, release: Release, screened_out: bool) -> tuple[bool, str]:
    """The 2022 competition's (and, rounding first and without the ``0`` test, 2.0's) check."""
    # the screen goes first: sympy's is_constant(simplify=False) alone costs the screen many times
    # over (exact equals() of random values), and it says "constant" only of an expression whose
    # values the screen finds constant too
    if screened_out:
        return False, "screen: difference and ratio vary"
    diff, frac = t - m, m / t
    if release.name == "srbench2025":
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
    if release.name == "srbench2022":
        ok = ok and str(m) != "0"
    return bool(ok), f"{how}: difference constant {dc}, ratio constant {fc}"


def _check_2021(t: sp.Expr, m: sp.Expr, release: Release, screened_out: bool) -> tuple[bool, str]:
    if str(m) in ("0", "nan"):
        return False, "cleaned model is 0"
    if screened_out:  # before the rounding: its subs calls cost as much as the screen
        return False, "screen: difference and ratio vary"
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


def solution_op(
    text: str,
    truth: str,
    features: Sequence[str],
    dialect: str,
    release: str,
    model: sp.Expr | None = None,
    r2_test: float | None = None,
    screen: bool = True,
    simplified: bool = True,
) -> dict[str, Any]:
    """Reference and corrected verdicts of one release; ``model`` is the cleaned model if known
    (``simplified=False``: the model the release keeps when its simplify runs out of time)."""
    r = SPECS[release]
    m = model if model is not None else r.clean(r.read(text, features, dialect), simplified)
    t = _truth(truth, tuple(features), release)
    if release == "srbench2021" and not (r2_test is not None and r2_test > 0.5):
        return {
            "reference": False,
            "corrected": False,
            "why": "2021 checks only models with test R2 > 0.5",
            "gate": False,
        }
    check = _check_2021 if release == "srbench2021" else _check_2022
    # one screen for both checks: it depends on truth and model alone
    screened_out = screen and all(varies_beyond_noise(t, m, WIDE))
    ref, why = check(t, m, r, screened_out)
    cor, why_c = _check_corrected(t, m, r, screened_out)
    return {"reference": ref, "corrected": cor, "why": why, "why_corrected": why_c, "gate": True}


# --- SRSD's normalised tree edit distance ------------------------------------------------------


def _srsd_prepare(expr: sp.Expr) -> sp.Expr:
    return expr.subs(sp.pi, sp.pi.evalf()).evalf().factor().simplify().subs(1.0, 1)


def srsd_tree(expr: sp.Basic) -> tuple:
    """Labels as SRSD's sympy2zss_module: every number ``Const``, symbols by name, else the class."""
    from sympy.utilities.misc import func_name

    if expr.is_number:
        label = "Const"
    elif isinstance(expr, sp.Symbol):
        label = str(expr)
    else:
        label = func_name(expr)
    return (label, *(srsd_tree(a) for a in expr.args))


def _apted(tree: tuple):
    from apted.helpers import Tree as ATree

    return ATree(tree[0], *(_apted(c) for c in tree[1:]))


def _tree_size(tree: tuple) -> int:
    return 1 + sum(_tree_size(c) for c in tree[1:])


@lru_cache(maxsize=256)
def _srsd_truth(truth: str, features: tuple[str, ...]) -> tuple:
    # a truth is compared with every model of its task: its factor().simplify() (a fifth of an
    # srsd operation) is computed once per worker; the tree is a pure function of the string
    return srsd_tree(_srsd_prepare(parse_sympy_view(truth, features, "python")))


def srsd_op(text: str, truth: str, features: Sequence[str], dialect: str) -> dict[str, Any]:
    """SRSD's edit distance d (unit costs, ordered trees) and min(d, n) / n, n = truth's nodes."""
    from apted import APTED

    m = srsd_tree(_srsd_prepare(parse_sympy_view(text, features, dialect)))
    t = _srsd_truth(truth, tuple(features))
    d = int(APTED(_apted(m), _apted(t)).compute_edit_distance())
    n = _tree_size(t)
    return {"ted": d, "ted_norm": min(d, n) / n}


# --- the stored names ----------------------------------------------------------------------------

#: bump when a definition here changes (cache keys follow it); bump results.metrics.METRICS_VERSION
#: too, by hand, so `srtui rescore` recomputes the stored jobs (3: protected operators are one
#: node of srtui's exact tree: the cached diversity of gplearn models changes)
DEFINITION_VERSION = 3
#: what the metrics table stores per release (``<release>.<metric>``); corrected variants add
#: ``:corrected`` to the name. The CLI shows every metric of every release.
STORED = {
    "srbench2021": ("size", "size_simplified", "symbolic_solution", "symbolic_solution:corrected"),
    "srbench2022": (
        "size_simplified",
        "simplicity",
        "symbolic_solution",
        "symbolic_solution:corrected",
        "feature_absence",
    ),
    "srbench2025": ("size", "simplicity", "symbolic_solution", "symbolic_solution:corrected"),
    "srsd": ("ted_norm", "ted"),
}
STORED_NAMES = frozenset(f"{r}.{m}" for r, ms in STORED.items() for m in ms)
METRICS = ("size", "size_simplified", "simplicity", "symbolic_solution", "feature_absence")


def assemble_release(
    rel: str,
    model: tuple[str, Any],
    solution: tuple[str, Any] | None,
    *,
    gate_applies: bool,
    r2_test: float | None,
    notes: list[str],
    kept: tuple[str, Any] | None = None,
) -> dict[str, Any]:
    """``<rel>.<metric>`` values from the model and solution operations' (status, value);
    ``kept``: after a timed-out simplify, the unsimplified model a release with a
    ``simplify_limit`` keeps (its values stand, as in that release's code)."""
    status, val = model
    timed_out = status == "timeout"
    if timed_out and kept is not None and kept[0] == "ok":
        limit = SPECS[rel].simplify_limit
        why = f"the unsimplified model, as that code keeps it after its own {limit:g} s"
        notes.append(f"{rel}: simplify ran out of srtui's deadline: {why}")
        status, val = kept
    out: dict[str, Any] = {f"{rel}.{k}": (val.get(k) if status == "ok" else None) for k in METRICS[:3] + METRICS[4:]}
    out[f"{rel}._timeout"] = timed_out
    if status != "ok":
        notes.append(f"{rel}: simplify {status}: {val}")
    if solution is None:
        return out
    s_status, s_val = solution
    if status == "timeout":
        s_status, s_val = "timeout", "not run: the model's simplify timed out"
    ok = s_status == "ok"
    ref, cor = (bool(s_val["reference"]), bool(s_val["corrected"])) if ok else (False, False)
    if rel == "srbench2021" and gate_applies and not (r2_test is not None and r2_test > 0.5):
        ref = cor = False
        notes.append(f"{rel}: solution not checked (test R2 {r2_test} is not above 0.5)")
    elif ok:
        notes.append(f"{rel}: {s_val['why']}; corrected: {s_val['why_corrected']}")
    else:
        notes.append(f"{rel}: symbolic-solution check {s_status}: {s_val}")
    out[f"{rel}.symbolic_solution"], out[f"{rel}.symbolic_solution:corrected"] = int(ref), int(cor)
    out[f"{rel}._solution_timeout"] = s_status == "timeout"
    return out
