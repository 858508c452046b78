"""A release's values of one model: every declared model metric (srtui.results.metrics.declare)
under that release's reading and cleaning (srtui.results.metrics.releases), and the row of
``<release>.<metric>`` values the metrics table stores. Above both modules, so neither imports
the other back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from srtui.results.metrics.declare import ModelView, model_metrics
from srtui.results.metrics.profiles import Profile
from srtui.results.metrics.releases import SPECS


def model_op(
    text: str,
    features: Sequence[str],
    dialect: str,
    release: str,
    unwanted: Sequence[str] = (),
    simplified: bool = True,
) -> dict[str, Any]:
    """The declared model metrics (results/metrics/declared/) of one model under one release
    (``simplified=False``: of the model the release keeps when its simplify runs out of time)."""
    r = SPECS[release]
    raw = r.read(text, features, dialect)
    view = ModelView(release, text, features, dialect, unwanted, raw, r.clean(raw, simplified))
    out = {m.name: m.compute(view) for m in model_metrics() if m.compute is not None}
    return out | {"simplified": str(view.clean), "_expr": view.clean}


#: bump when a reading or cleaning here changes (cache keys follow it; each metric's own version,
#: results/metrics/declared/, is added to it: srtui.results.metrics.declare.version_offset); bump
#: srtui.results.metrics.version.METRICS_VERSION too, by hand, so `srtui rescore` recomputes the stored
#: jobs (4: protected operators are one node of srtui's exact tree: the cached diversity of
#: gplearn models changes; 5: a deadline counts the worker's CPU time, srtui.engine.pool: the cached
#: timeouts of wall-clock deadlines are computed again)
DEFINITION_VERSION = 5
#: what the metrics table stores per release (``<release>.<metric>``) is declared with each metric
#: (srtui.results.metrics.declare.stored); corrected variants add ``:corrected`` to the name, a named
#: variant of the reference ``:<variant>`` (``VARIANTS``). The CLI shows every metric of every release.
_SOLUTION = ("symbolic_solution", Profile.CORRECTED.metric("symbolic_solution"))


def assemble_release(
    rel: str,
    model: tuple[str, Any],
    solution: tuple[str, Any] | None,
    *,
    gate_applies: bool,
    r2_test: float | None,
    notes: list[str],
    kept: tuple[str, Any] | None = None,
    variants: dict[str, tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    """``<rel>.<metric>`` values from the model operation's and the checks' (status, value):
    ``solution`` is the release's published check (``PUBLISHED``), ``variants`` its named
    variants' checks (``VARIANTS``); ``kept``: after a timed-out simplify, the unsimplified model
    a release with a ``simplify_limit`` keeps (its values stand, as in that release's code)."""
    status, val = model
    timed_out = status == "timeout"
    if timed_out and kept is not None and kept[0] == "ok":
        limit = SPECS[rel].simplify_limit
        why = f"the unsimplified model, as that code keeps it after its own {limit:g} s"
        notes.append(f"{rel}: simplify ran out of srtui's deadline: {why}")
        status, val = kept
    names = [m.name for m in model_metrics()]
    out: dict[str, Any] = {f"{rel}.{k}": (val.get(k) if status == "ok" else None) for k in names}
    out[f"{rel}._timeout"] = timed_out
    if status != "ok":
        notes.append(f"{rel}: simplify {status}: {val}")
    if solution is None:
        return out
    gated = gate_applies and not (r2_test is not None and r2_test > 0.5)
    ref, cor = _verdict(rel, solution, notes, gated, r2_test)
    out[f"{rel}.{_SOLUTION[0]}"], out[f"{rel}.{_SOLUTION[1]}"] = int(ref), int(bool(cor))
    out[f"{rel}._solution_timeout"] = solution[0] == "timeout"
    for variant, result in (variants or {}).items():
        out[f"{rel}.symbolic_solution:{variant}"] = int(_verdict(f"{rel}:{variant}", result, notes, False, None)[0])
        out[f"{rel}._solution_timeout"] |= result[0] == "timeout"
    return out


def _verdict(
    label: str, result: tuple[str, Any], notes: list[str], gated: bool, r2_test: float | None
) -> tuple[bool, bool | None]:
    """(reference, corrected) of one check's (status, value), with its note."""
    status, val = result
    if gated:
        notes.append(f"{label}: solution not checked (test R2 {r2_test} is not above 0.5)")
        return False, False
    if status != "ok":
        notes.append(f"{label}: symbolic-solution check {status}: {val}")
        return False, False
    corrected = val.get(Profile.CORRECTED)
    tail = f"; corrected: {val['why_corrected']}" if corrected is not None else ""
    notes.append(f"{label}: {val['why']}{tail}")
    return bool(val[Profile.REFERENCE]), None if corrected is None else bool(corrected)
