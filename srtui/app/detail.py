"""One run in depth (expression, ground truth, predictions) and suite-level aggregates for plots.

No Textual here; called from thread workers. Model strings are untrusted: they are only read by
``engine.expression.parse_expression`` and shown as plain text, never as markup.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.errors import SrtuiError
from engine.pool import Bounded, render_timeout
from engine.textsafe import safe_value
from engine.workspace import Workspace
from results.queries import finished_jobs, job_metrics, metric_by_job
from srtui.app.data import Reader, job_row

if TYPE_CHECKING:
    from tasks.model import Task

#: at or above this many characters a model is shown as text, not pretty-printed
PRETTY_MAX_CHARS = 1000
#: significant digits of the rounded view; larger trees than SIMPLIFY_MAX_NODES are not simplified
ROUND_DIGITS = 4
SIMPLIFY_MAX_NODES = 300
EXPRESSION_METRICS = (
    ("r2_test", "R² test (method's predictions)"),
    ("r2_train", "R² train"),
    ("mse_test", "MSE test"),
    ("mae_test", "MAE test"),
    ("mse_train", "MSE train"),
    ("mae_train", "MAE train"),
    ("r2_test_expr", "R² test of the parsed expression"),
    ("fidelity_r2", "fidelity R² (expression vs method)"),
    ("max_abs_diff", "max |expression - method|"),
    ("expression_mismatch", "expression mismatch"),
    ("model_too_large", "model too large"),
)


#: the stored metrics (results.metrics) in words; any other name is shown with spaces for "_"
METRIC_LABELS = {
    "constant_model": "constant model",
    "diversity": "diversity (entropy of node labels)",
    "feature_absence": "features not used",
    "isclose_acc": "share of predictions close to truth",
    "nmse_test": "NMSE test",
    "nmse_train": "NMSE train",
    "r2_test_3": "R² test (3 decimals)",
    "simplicity": "simplicity (-log5 size, simplified)",
    "simplicity_unsimplified": "simplicity (-log5 size)",
    "size": "size (nodes)",
    "size_simplified": "size after simplify (nodes)",
    "symbolic_solution": "symbolic solution",
    "ted_norm": "tree edit distance to truth (normalised)",
    "solved_r2_095": "solved (R² > 0.95)",
    "solved_r2_099": "solved (R² > 0.99)",
    "solved_r2_0999": "solved (R² > 0.999)",
    "mse_train": "MSE train",
    "mae_train": "MAE train",
}


class DetailError(SrtuiError, ValueError):
    """The run cannot be shown (unknown job, no data); one line."""


@dataclass(frozen=True)
class Rendered:
    """An expression in every form the view offers."""

    text: str  # as the method printed it
    unicode: str | None = None  # 2-D pretty print, None when not pretty-printed
    ascii: str | None = None
    latex: str | None = None
    plain: str | None = None  # sympy's one-line form
    n_nodes: int | None = None
    error: str | None = None
    rounded_unicode: str | None = None  # the 2-D print with numbers to ROUND_DIGITS significant digits
    rounded_ascii: str | None = None
    unrendered: str | None = None  # why a parsed model is shown as text (printing ran out of time)

    @property
    def pretty(self) -> bool:
        return self.unicode is not None


@dataclass(frozen=True)
class ExpressionDetail:
    job: dict[str, Any]
    model: Rendered | None
    truth: Rendered | None
    metrics: tuple[tuple[str, str], ...]
    pareto: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


#: seconds sympy may spend printing (or simplifying) one model: a power tower of a few characters
#: (``2**(2**(2**(2**5))))``) makes it compute a number of billions of digits
RENDER_TIMEOUT_S = 5.0


def _forms(payload: tuple[str, str, tuple[str, ...], str]) -> Rendered:
    """In the printing process: ``render_forms`` or ``simplified_forms`` of one model."""
    kind, text, features, dialect = payload
    return (render_forms if kind == "render" else simplified_forms)(text, features, dialect)


@lru_cache(maxsize=1)
def _printer() -> Bounded:
    return Bounded(_forms, render_timeout(RENDER_TIMEOUT_S), preload=("srtui.app.detail",))


def _bounded(kind: str, text: str, features: tuple[str, ...], dialect: str) -> Rendered:
    """``kind`` of ``text`` printed in a process of its own under RENDER_TIMEOUT_S; on time out
    (or a crash) the model is shown as text, saying why."""
    result = _printer()((kind, text, tuple(features), dialect or "python"))
    if result.status == "ok" and isinstance(result.value, Rendered):
        return result.value
    why = f"printing took over {_printer().timeout:g} s" if result.status == "timeout" else str(result.value)
    return Rendered(text, unrendered=why)


def render(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """Every form of the model (``render_forms``), printed under a deadline."""
    return _bounded("render", text, features, dialect)


def simplified(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """The simplified model (``simplified_forms``), under a deadline."""
    return _bounded("simplify", text, features, dialect)


def render_forms(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """Parse with the one safe parser, then print 2-D (unicode and ASCII), LaTeX and plain.
    Unbounded on hostile input: called through ``render`` only."""
    import sympy as sp

    from engine.expression import ExpressionError, parse_expression

    try:
        parsed = parse_expression(text, features, dialect or "python")
    except ExpressionError as exc:
        return Rendered(text, error=str(exc))
    if parsed.expr is None:
        return Rendered(text, error=f"too large to parse ({len(text)} characters)")
    latex = sp.latex(parsed.expr)
    plain = sp.sstr(parsed.expr)
    if len(text) >= PRETTY_MAX_CHARS:
        return Rendered(text, latex=latex, plain=plain, n_nodes=parsed.n_nodes)
    uni = sp.pretty(parsed.expr, use_unicode=True, wrap_line=False)
    asc = sp.pretty(parsed.expr, use_unicode=False, wrap_line=False)
    rounded = round_numbers(parsed.expr)
    return Rendered(
        text,
        uni,
        asc,
        latex,
        plain,
        parsed.n_nodes,
        None,
        sp.pretty(rounded, use_unicode=True, wrap_line=False),
        sp.pretty(rounded, use_unicode=False, wrap_line=False),
    )


def round_numbers(expr: Any, digits: int = ROUND_DIGITS) -> Any:  # sympy ships no types
    """Every float of the tree to ``digits`` significant digits (17-digit floats hide the form)."""
    import sympy as sp

    return expr.xreplace({f: sp.Float(float(f"{float(f):.{digits}g}"), digits) for f in expr.atoms(sp.Float)})


def simplified_forms(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """The model after sympy's simplify (numbers rounded too); slow on large trees, so refused there.
    Unbounded on hostile input: called through ``simplified`` only."""
    import sympy as sp

    from engine.expression import ExpressionError, parse_expression

    try:
        parsed = parse_expression(text, features, dialect or "python")
    except ExpressionError as exc:
        return Rendered(text, error=str(exc))
    if parsed.expr is None or (parsed.n_nodes or 0) > SIMPLIFY_MAX_NODES:
        return Rendered(text, error=f"too large to simplify here (more than {SIMPLIFY_MAX_NODES} nodes)")
    expr = round_numbers(sp.simplify(round_numbers(parsed.expr)))
    return Rendered(
        text,
        sp.pretty(expr, use_unicode=True, wrap_line=False),
        sp.pretty(expr, use_unicode=False, wrap_line=False),
        sp.latex(expr),
        sp.sstr(expr),
        parsed.n_nodes,
    )


def _data_path(workspace: Workspace, fingerprint: str) -> Path:
    return workspace.data_cache / f"{fingerprint}.npz"


def task_arrays(workspace: Workspace, fingerprint: str) -> dict[str, np.ndarray] | None:
    from engine.untrusted import UntrustedFileError, open_regular

    try:  # a job may have put a FIFO or a link there: never followed, never waited on
        with open_regular(_data_path(workspace, fingerprint)) as fh, np.load(fh, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, UntrustedFileError, ValueError):
        return None


@lru_cache(maxsize=32)
def _task(root: str, name: str) -> Task | None:
    """The built task (ground truth, dates), or None. Tasks that need a download are read only
    from the workspace's task cache: looking at results never touches the network."""
    from tasks import cache
    from tasks.catalogue import TaskContext, TaskError, entry, get_task

    context = TaskContext.for_workspace(Path(root))
    try:
        if entry(name, context).offline:
            return get_task(name, context)
        files = sorted((Path(root) / "cache" / "tasks").glob(f"{name}-v*.npz"), key=lambda p: p.stat().st_mtime)
        return cache.load(files[-1]) if files else None
    except (TaskError, OSError, ValueError, KeyError):
        return None


def features_of(workspace: Workspace, job: dict[str, Any]) -> tuple[str, ...] | None:
    arrays = task_arrays(workspace, job["data_fingerprint"])
    if arrays is not None:
        return tuple(str(f) for f in arrays["feature_names"])
    task = _task(str(workspace.root), job["task"])
    return tuple(task.feature_names) if task is not None else None


def expression_detail(reader: Reader, job_id: str) -> ExpressionDetail:
    job = job_row(reader, job_id)
    if job is None:
        raise DetailError(f"no job {job_id} in this workspace")
    ws = reader.workspace
    notes: list[str] = []
    features = features_of(ws, job)
    model = None
    if job.get("model"):
        if features is None:
            model = Rendered(job["model"], error="the task's data is not in this workspace's cache")
        else:
            model = render(job["model"], features, job.get("dialect") or "python")
    task = _task(str(ws.root), job["task"])
    truth = None
    if task is not None and task.ground_truth:
        truth = render(task.ground_truth, tuple(task.feature_names), "python")
    elif task is None:
        notes.append("ground truth unavailable: the task cannot be built here")
    metrics = []
    for key, label in EXPRESSION_METRICS:
        value = job.get(key)
        metrics.append((label, _fmt(value)))
    if model is not None and model.n_nodes is not None:
        metrics.append(("model size (nodes)", str(model.n_nodes)))
    if job.get("model_error"):
        metrics.append(("model error", job["model_error"]))
    shown = {key for key, _ in EXPRESSION_METRICS}
    for name, value, detail in stored_metrics(reader, job_id):
        if name in shown or name.startswith("_"):
            continue  # the job's own columns above; "_version" is bookkeeping
        label = METRIC_LABELS.get(name, name.replace("_", " "))
        metrics.append((label, _fmt(value) + (f"  ({detail})" if detail else "")))
    pareto: tuple[dict[str, Any], ...] = ()
    if job.get("pareto"):
        try:
            pareto = tuple(safe_value(p) for p in json.loads(job["pareto"]) if isinstance(p, dict))
        except ValueError:
            notes.append("the stored Pareto front is not valid JSON")
    return ExpressionDetail(job, model, truth, tuple(metrics), pareto, tuple(notes))


def stored_metrics(reader: Reader, job_id: str) -> list[tuple[str, float | None, str | None]]:
    """Rows of the ``metrics`` table (results.metrics) for one job; empty before scoring."""
    with reader.lock:
        store = reader.store()
        return [] if store is None else job_metrics(store, job_id)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# --- plots ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PredictionSeries:
    job_id: str
    label: str
    y_train: np.ndarray
    pred_train: np.ndarray
    y_test: np.ndarray
    pred_test: np.ndarray
    dates_train: tuple[str, ...] | None = None
    dates_test: tuple[str, ...] | None = None


def prediction_series(reader: Reader, job_id: str) -> PredictionSeries:
    job = job_row(reader, job_id)
    if job is None:
        raise DetailError(f"no job {job_id} in this workspace")
    with reader.lock:
        store = reader.store()
        preds = None if store is None else store.predictions(job_id)
    if preds is None:
        raise DetailError(f"job {job_id} has no stored predictions (status {job['status']})")
    arrays = task_arrays(reader.workspace, job["data_fingerprint"])
    if arrays is None:
        raise DetailError("the task's data is not in this workspace's cache")
    task = _task(str(reader.workspace.root), job["task"])
    dates_train = dates_test = None
    if task is not None and task.dates_train is not None and task.dates_test is not None:
        dates_train, dates_test = tuple(map(str, task.dates_train)), tuple(map(str, task.dates_test))
    label = f"{job['method']} / {job['task']} / seed {job['seed']}"
    return PredictionSeries(
        job_id,
        label,
        arrays["y_train"],
        preds["train_pred"],
        arrays["y_test"],
        preds["test_pred"],
        dates_train,
        dates_test,
    )


@dataclass(frozen=True)
class SuiteAggregate:
    suite: str
    methods: tuple[str, ...]
    n_tasks: int
    thresholds: tuple[float, ...]
    #: method -> P[R² >= threshold] of the srbench2025 rule's performance profile
    profiles: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: method -> (median model size, median test R²) over its ok runs
    points: dict[str, tuple[float, float]] = field(default_factory=dict)
    front: tuple[str, ...] = ()
    profile: str = "reference"


_FINISHED_COLUMNS = ("job_id", "method", "task", "status", "r2_test", "model", "dialect", "data_fingerprint")


def suite_aggregate(reader: Reader, suite: str, max_parse: int = 2000, profile: str = "reference") -> SuiteAggregate:
    """Performance profiles (the srbench2025 rule's, under ``profile``) and the size/accuracy
    Pareto front of the methods from the medians over seeds (failed runs count as R² = -inf)."""
    from results.profiles import Profile
    from results.scoring.srbench2025 import performance_profiles
    from results.tables import runs_frame

    with reader.lock:
        store = reader.store()
        if store is None:
            raise DetailError("no workspace yet")
        rows = finished_jobs(store, suite, _FINISHED_COLUMNS)
        runs = runs_frame(store, suite) if rows else None
        stored = metric_by_job(store, suite, "size")
    if not rows or runs is None:
        raise DetailError(f"suite {suite} has no finished runs")
    thresholds = tuple(float(t) for t in np.round(np.linspace(0.0, 1.0, 21), 2))
    finished = runs[~runs["status"].isin(("pending", "running"))]
    table = performance_profiles(finished, np.asarray(thresholds), Profile(profile))
    per: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        r2 = row["r2_test"]
        ok = row["status"] == "ok" and r2 is not None and math.isfinite(r2)
        per.setdefault((row["method"], row["task"]), []).append(r2 if ok else -math.inf)
    methods = tuple(sorted({m for m, _ in per}))
    tasks = sorted({t for _, t in per})
    profiles = {
        m: tuple(0.0 if math.isnan(v) else float(v) for v in table.loc[m].to_numpy(dtype=float))
        if m in table.index
        else tuple(0.0 for _ in thresholds)
        for m in methods
    }
    sizes = _sizes(reader.workspace, rows, stored, max_parse)
    points = {}
    for m in methods:
        med = np.array([np.median(per[(m, t)]) if (m, t) in per else -np.inf for t in tasks])
        finite = med[np.isfinite(med)]
        if sizes.get(m) and finite.size:
            points[m] = (float(np.median(sizes[m])), float(np.median(finite)))
    front = tuple(
        m
        for m, (s, a) in points.items()
        if not any((s2 <= s and a2 >= a) and (s2 < s or a2 > a) for m2, (s2, a2) in points.items() if m2 != m)
    )
    return SuiteAggregate(
        suite,
        methods,
        len(tasks),
        thresholds,
        profiles,
        points,
        tuple(sorted(front, key=lambda m: points[m][0])),
        profile,
    )


def _sizes(
    workspace: Workspace, rows: list[dict[str, Any]], stored: dict[str, float], max_parse: int
) -> dict[str, list[float]]:
    """Model sizes of the ok runs per method: the stored metric, else (not scored yet) the same
    definition computed here, for at most ``max_parse`` models."""
    from engine.expression import ExpressionError
    from results.expr_metrics import node_count, parse

    sizes: dict[str, list[float]] = {}
    features: dict[str, tuple[str, ...] | None] = {}
    parsed = 0
    for row in rows:
        r2, fp, model = row["r2_test"], row["data_fingerprint"], row["model"]
        if row["status"] != "ok" or r2 is None or not math.isfinite(r2):
            continue
        if row["job_id"] in stored:
            sizes.setdefault(row["method"], []).append(stored[row["job_id"]])
            continue
        if not model or parsed >= max_parse:
            continue
        if fp not in features:
            arrays = task_arrays(workspace, fp)
            features[fp] = tuple(str(f) for f in arrays["feature_names"]) if arrays is not None else None
        names = features[fp]
        if names is None:
            continue
        parsed += 1
        try:
            parsed_expr = parse(model, names, row["dialect"] or "python")
            if parsed_expr.expr is not None:
                sizes.setdefault(row["method"], []).append(node_count(parsed_expr.expr))
        except ExpressionError:
            pass
    return sizes
