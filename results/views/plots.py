"""What the plots show: one run's predictions against the truth (over dates for a time series),
and a suite's performance profiles and size/accuracy Pareto front of the methods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.workspace import Workspace
from results.store.queries import Reader, finished_jobs, metric_by_job, workspace_methods
from results.views.jobs import DetailError, built_task, job_row, task_arrays


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
    task = built_task(str(reader.workspace.root), job["task"])
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
    #: method -> (glyph, colour): its look in every figure of the workspace (method_looks)
    looks: dict[str, tuple[str, str]] = field(default_factory=dict)


def method_looks(reader: Reader, extra: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Each method's (terminal glyph, hex colour): the look its figures give it, a function of
    its name and the workspace's method set (results.outputs.figures.style.looks), so a method
    has the same colour and marker in the app's plots, every figure and the report."""
    from results.outputs.figures.style import looks

    with reader.lock:
        store = reader.store()
        methods = workspace_methods(store) if store is not None else ()
    return {m: (look.glyph, look.color) for m, look in looks(methods, extra=extra).items()}


_FINISHED_COLUMNS = ("job_id", "method", "task", "status", "r2_test", "model", "dialect", "data_fingerprint")


def suite_aggregate(reader: Reader, suite: str, max_parse: int = 2000, profile: str = "reference") -> SuiteAggregate:
    """Performance profiles (the srbench2025 rule's, under ``profile``) and the size/accuracy
    Pareto front of the methods from the medians over seeds (failed runs count as R² = -inf)."""
    from results.metrics.profiles import Profile
    from results.scoring.rules.srbench2025 import performance_profiles
    from results.scoring.tables import runs_frame

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
        method_looks(reader, methods),
    )


def _sizes(
    workspace: Workspace, rows: list[dict[str, Any]], stored: dict[str, float], max_parse: int
) -> dict[str, list[float]]:
    """Model sizes of the ok runs per method: the stored metric, else (not scored yet) the same
    definition computed here, for at most ``max_parse`` models."""
    from engine.expression import ExpressionError
    from results.metrics.expr_metrics import node_count, parse

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
