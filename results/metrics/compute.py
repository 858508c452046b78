"""Metrics of every run, computed after the fit and stored in the ``metrics`` table.

``compute_for_store`` is what `srtui run` calls at its end and `srtui rescore` calls on demand.
Accuracy metrics come from the stored predictions (with their row indices) against the task's
data file in the workspace cache; expression metrics from :mod:`srtui.results.metrics.expr_batch` (process pool,
per-operation deadline, cache by expression hash).

Accuracy metrics are declared in :mod:`srtui.results.metrics.accuracy` (what each is, its direction,
its golden values) and each is computed once: those whose home is the job's own row
(srtui.results.store.columns.ACCURACY) by the driver as the job ends (srtui.runs.sink), the others here into
the ``metrics`` table; a rescore of a scored job recomputes every one from the stored
predictions. ``r2_extrapolation`` and ``noise_robustness``, which need the task's property, are
computed here (``prepare_job``, ``noise_robustness``). The consumers read them all through
:mod:`srtui.results.metrics.pivot`.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.outcome_check import TaskArrays
from srtui.engine.task_files import TASK_FILES
from srtui.engine.untrusted import UntrustedFileError
from srtui.results.metrics import pivot
from srtui.results.metrics.accuracy import prediction_metrics
from srtui.results.metrics.declare import stored_names
from srtui.results.metrics.expr_batch import BatchStats, ExprCache, ModelItem, expression_metrics
from srtui.results.metrics.version import METRICS_VERSION
from srtui.results.store.columns import ACCURACY
from srtui.results.store.typed import task_infos, typed_rows

if TYPE_CHECKING:
    from srtui.results.store.store import Store
    from srtui.tasks.catalogue import TaskContext

#: jobs whose metrics are written together: an interrupted `srtui rescore` loses at most one batch
BATCH = 2_000
_HOST = os.uname().nodename


# --- the store ------------------------------------------------------------------------------


def _task_info(name: str, context: TaskContext) -> dict[str, Any]:
    from srtui.tasks.catalogue import get_task

    try:
        task = get_task(name, context)
    except Exception as exc:  # noqa: BLE001 - a task that cannot be rebuilt still gets its accuracy metrics
        return {"name": name, "unavailable": " ".join(str(exc).split())[:200]}
    info = task.summary()
    info["noiseless_task"] = (task.provenance or {}).get("noiseless_task")
    return info


def store_task_info(store: Store, names: list[str], data_dir: Path | None) -> dict[str, dict[str, Any]]:
    from srtui.tasks.catalogue import TaskContext

    have = task_infos(store)
    missing = [n for n in names if n not in have or "unavailable" in have[n]]
    if missing:
        context = TaskContext.for_workspace(store.workspace.root, data_dir)
        new = {n: _task_info(n, context) for n in missing}
        with store.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO task_info (task, info) VALUES (?, ?)",
                [(n, json.dumps(i, default=str)) for n, i in new.items()],
            )
        have.update(new)
    return have


def _arrays(store: Store, fingerprint: str, cache: dict[str, TaskArrays | None]) -> TaskArrays | None:
    if fingerprint not in cache:
        path = store.workspace.data_cache / f"{fingerprint}.npz"
        known = TASK_FILES.true_bytes(path)  # this driver wrote it: its bytes, not what a job left
        try:
            cache[fingerprint] = TaskArrays.from_npz(io.BytesIO(known[0])) if known else TaskArrays.load(str(path))
        except (OSError, UntrustedFileError, ValueError):
            cache[fingerprint] = None  # gone, or a FIFO, a link, a folder: its metrics wait for a run
    return cache[fingerprint]


def _stored(name: str) -> bool:
    """srtui's own names, and the per-release names the declarations store (srtui.results.metrics.declare.stored)."""
    if name.startswith("_"):
        return False  # _notes etc.: text, not metrics
    return "." not in name or name in stored_names()


def write_metrics(store: Store, rows: dict[str, dict[str, Any]]) -> None:
    """The metrics of each job; its accuracy, recomputed from the stored predictions, goes into
    the job's own row (stored once: srtui.results.store.columns), where it could be computed."""
    with store.transaction() as c:
        for job_id, metrics in rows.items():
            _srbench2021_size(metrics)  # the expression metrics are in: 2021's size over its node count
            c.execute("DELETE FROM metrics WHERE job_id = ?", (job_id,))
            kept = metrics.pop("_row_kept", False)  # the row's accuracy, as the sink wrote it
            accuracy = {} if kept else {k: metrics[k] for k in ACCURACY if metrics.get(k) is not None}
            if accuracy:  # the names are srtui.results.store.columns' own, never input
                c.execute(
                    f"UPDATE jobs SET {', '.join(f'{k} = ?' for k in accuracy)} WHERE job_id = ?",
                    (*map(float, accuracy.values()), job_id),
                )
            notes = metrics.pop("_notes", [])
            details = metrics.pop("_details", {})  # a metric's own why, shown beside its value
            vals: list[tuple[str, str, float | None, str | None]] = [
                (job_id, k, None if v is None else float(v), details.get(k))
                for k, v in metrics.items()
                if _stored(k) and k not in ACCURACY
            ]
            vals.append((job_id, "_version", float(METRICS_VERSION), "; ".join(notes) or None))
            vals.append((job_id, "_where", None, metrics.pop("_where", None) or f"{_HOST} (metrics pool)"))
            c.executemany("INSERT INTO metrics (job_id, name, value, detail) VALUES (?,?,?,?)", vals)


def finished_jobs(store: Store, suite: str | None = None) -> list[dict[str, Any]]:
    """The jobs whose metrics are computed: those that ended with a model or predictions."""
    present = {row[1] for row in store.conn.execute("PRAGMA table_info(jobs)")}
    cols = "job_id, suite, task, method, seed, status, model, dialect, data_fingerprint"
    cols += ", method_notes" if "method_notes" in present else ""
    cols += "".join(f", {name}" for name in ACCURACY if name in present)  # the job's row's, as the sink wrote them
    # scored before: a rescore, whose definitions may have changed since the sink's values
    cols += ", EXISTS (SELECT 1 FROM metrics m WHERE m.job_id = jobs.job_id AND m.name = '_version') AS scored"
    jobs = typed_rows(store.jobs(suite, columns=cols), required=("job_id", "task", "method"))
    return [j for j in jobs if j["status"] in ("ok", "invalid_model")]


def metrics_done(store: Store) -> set[str]:
    """Jobs whose metrics are stored at the current definition (METRICS_VERSION)."""
    q = "SELECT job_id FROM metrics WHERE name = '_version' AND value >= ?"
    return {r[0] for r in store.conn.execute(q, (METRICS_VERSION,))}


def compute_for_store(
    store: Store,
    workers: int | None = None,
    timeout: float = 10.0,
    only_missing: bool = True,
    suite: str | None = None,
    data_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Compute (or recompute) the metrics of the finished jobs of a workspace; returns a summary.

    ``only_missing`` skips jobs whose metrics exist at the current METRICS_VERSION. Expression
    operations run in ``workers`` processes (default: usable cores), each under ``timeout``
    seconds, cached in the ``expr_cache`` table.
    """
    if data_dir is None and os.environ.get("SRTUI_DATA_DIR"):
        data_dir = Path(os.environ["SRTUI_DATA_DIR"])
    say = progress or (lambda _m: None)
    jobs = finished_jobs(store, suite)
    todo = [j for j in jobs if j["job_id"] not in metrics_done(store)] if only_missing else jobs
    infos = store_task_info(store, sorted({j["task"] for j in jobs}), data_dir)
    by_id = {j["job_id"]: j for j in jobs}
    arrays: dict[str, TaskArrays | None] = {}
    total, models = BatchStats(), 0
    for start in range(0, len(todo), BATCH):  # each batch is written: an interrupted rescore resumes
        if len(todo) > BATCH:
            say(f"jobs {start + 1}-{min(start + BATCH, len(todo))} of {len(todo)}")
        n, stats = _compute_batch(store, todo[start : start + BATCH], by_id, infos, arrays, workers, timeout, say)
        models += n
        for name in ("computed", "cached", "timeouts", "errors"):
            setattr(total, name, getattr(total, name) + getattr(stats, name))
    return {
        "jobs": len(todo),
        "models": models,
        "computed": total.computed,
        "cached": total.cached,
        "timeouts": total.timeouts,
        "errors": total.errors,
    }


def _compute_batch(
    store: Store,
    todo: list[dict[str, Any]],
    jobs: dict[str, dict[str, Any]],
    infos: dict[str, dict[str, Any]],
    arrays: dict[str, TaskArrays | None],
    workers: int | None,
    timeout: float,
    say: Callable[[str], None],
) -> tuple[int, BatchStats]:
    """The metrics of some jobs, computed and written in one transaction."""
    rows: dict[str, dict[str, Any]] = {}
    items: list[tuple[str, ModelItem]] = []
    if todo:
        say(f"accuracy metrics of {len(todo)} job(s)")
    for j in todo:
        rows[j["job_id"]], item = prepare_job(store, j, infos.get(j["task"], {}), arrays)
        if item is not None:
            items.append((j["job_id"], item))
    stats = BatchStats()
    if items:
        say(f"expression metrics of {len(items)} model(s), {timeout:g} s per operation")
        results, stats = expression_metrics(
            [it for _, it in items], ExprCache(store.conn, store.lock), workers=workers, timeout=timeout
        )
        for (job_id, _), em in zip(items, results):
            notes = em.pop("_notes", [])
            rows[job_id].update(em)
            rows[job_id]["_notes"] += notes
    noise_robustness(store, rows, jobs, infos)
    write_metrics(store, rows)
    return len(items), stats


def prepare_job(
    store: Store, j: dict[str, Any], info: dict[str, Any], arrays: dict[str, TaskArrays | None]
) -> tuple[dict[str, Any], ModelItem | None]:
    """One finished job's accuracy metrics (from its stored predictions) and the model whose
    expression metrics are still to compute (None: no model, or no features to read it with)."""
    m: dict[str, Any] = {"_notes": []}
    data = _arrays(store, j["data_fingerprint"], arrays)
    pred = store.predictions(j["job_id"])
    if data is not None and pred is not None:
        # predictions are stored with row numbers: line them up with the data's rows
        tr = _aligned(data.train_index, pred["train_index"], pred["train_pred"])
        te = _aligned(data.test_index, pred["test_index"], pred["test_pred"])
        row = {k: j[k] for k in ACCURACY if j.get(k) is not None}
        if j.get("scored") or len(row) < len(ACCURACY):  # a rescore, or a row the sink left short: all
            m.update(prediction_metrics(data.y_train, tr, data.y_test, te))
        else:  # computed once: the row's as the job ended (srtui.runs.sink), the others here
            m.update(prediction_metrics(data.y_train, tr, data.y_test, te, only=pivot.in_metrics_table()))
            m.update(row, _row_kept=True)
        if info.get("property") == "extrapolation":
            m["r2_extrapolation"] = m["r2_test"]
    elif pred is None:
        m["_notes"].append("no predictions stored")
    else:
        m["_notes"].append("task data file missing from the workspace cache")
    features = tuple(data.feature_names) if data is not None else tuple(info.get("features") or ())
    m[_SIZE_2021] = model_size_2021(j, len(features))
    if j["model"] and features:
        unwanted = tuple(sorted(set(info.get("irrelevant_features") or ()) | set(info.get("shortcut_features") or ())))
        text = _as_printed(j["model"], j.get("method_notes"), m)
        truth = info.get("ground_truth")
        return m, ModelItem(text, features, j["dialect"] or "python", truth, unwanted, m.get("r2_test"))
    if not j["model"]:
        _blackbox_size(m, j.get("method_notes"))
    return m, None


def _as_printed(model: str, method_notes: str | None, m: dict[str, Any]) -> str:
    """The text whose expression metrics are taken: an SRBench method folder's model as it printed
    it (over the standardised data, before srtui composed the scalers in for the fidelity check),
    as SRBench 2.0 takes model_size of ``symbolic_model``; any other job's stored model."""
    try:
        printed = json.loads(method_notes).get("model_as_printed") if method_notes else None
    except (ValueError, AttributeError):
        printed = None
    if not isinstance(printed, str) or not printed:
        return model
    m["_notes"].append("expression metrics of the model as the method printed it (SRBench 2.0's model_size)")
    return printed


_SIZE_2021 = "_srbench2021_size"  # the value 2021 stored, until the expression metrics are in


def model_size_2021(j: dict[str, Any], n_features: int) -> tuple[float, str] | None:
    """(value, why) of SRBench 2021's ``model_size`` (evaluate_model.py at the published commit)
    where it is not the count of the model: ``complexity(best_est)`` when the method file defines
    it (its value in the job's notes), else the number of features (``complexity = None``: every
    method file or folder without one, and a built-in that declares it stands for such a file,
    as ``sgd`` for "Linear"). None: the nodes of the model as 2021 reads it (the expression metric)."""
    try:
        notes = json.loads(j.get("method_notes") or "{}")
    except ValueError:
        notes = {}
    complexity = notes.get("complexity") if isinstance(notes, dict) else None
    if isinstance(complexity, (int, float)) and not isinstance(complexity, bool) and math.isfinite(complexity):
        return float(complexity), "the method's complexity()"
    if j.get("dialect") == "srbench" or _declared_size_rule(str(j.get("method") or "")) == "features":
        return (float(n_features), "the number of features (no complexity())") if n_features else None
    return None


@functools.lru_cache(maxsize=64)
def _declared_size_rule(method: str) -> str:
    """A built-in's ``srbench2021_size`` (srtui.engine.methods.base.Method)."""
    from srtui.engine.methods import registry

    if method not in registry.BUILTIN:
        return "model"
    try:
        return registry.load(method).srbench2021_size
    except Exception:  # noqa: BLE001 - a method whose libraries are missing here: its model's count
        return "model"


def _srbench2021_size(row: dict[str, Any]) -> None:
    """``srbench2021.size`` is what 2021 stored (reference); srtui's count of the model, where
    there is one, stays as the corrected variant ``srbench2021.size:corrected``."""
    size = row.pop(_SIZE_2021, None)
    nodes = row.get("srbench2021.size")
    if nodes is not None:
        row["srbench2021.size:corrected"] = nodes
    if size is not None:
        row["srbench2021.size"], why = size
        row.setdefault("_details", {})["srbench2021.size"] = f"{why}, as 2021's evaluate_model.py stored it"


def _blackbox_size(m: dict[str, Any], method_notes: str | None) -> None:
    """A model-less job's size is its method's own complexity(est), as SRBench 2.0 records it when
    the model is "not implemented" (an SRBench method folder's ``complexity``)."""
    try:
        complexity = json.loads(method_notes).get("complexity") if method_notes else None
    except (ValueError, AttributeError):
        complexity = None
    if isinstance(complexity, (int, float)) and math.isfinite(complexity):
        m["size"] = float(complexity)
        m["_notes"].append("size from the method's complexity() (no symbolic model)")


def _aligned(data_index: np.ndarray, pred_index: np.ndarray, pred: np.ndarray) -> np.ndarray | None:
    if len(pred_index) != len(data_index):
        return None
    if np.array_equal(pred_index, data_index):
        return pred
    pos = {int(i): k for k, i in enumerate(pred_index)}
    try:
        return np.asarray([pred[pos[int(i)]] for i in data_index])
    except KeyError:
        return None


def noise_robustness(
    store: Store,
    rows: dict[str, dict[str, Any]],
    jobs: dict[str, dict[str, Any]],
    infos: dict[str, dict[str, Any]],
) -> None:
    """Needs the twin's test R2: read it from rows just computed or from the stored metrics."""
    need = [
        (jid, infos[jobs[jid]["task"]].get("noiseless_task"))
        for jid in rows
        if infos.get(jobs[jid]["task"], {}).get("property") == "noise_robustness"
    ]
    need = [(jid, twin) for jid, twin in need if twin and rows[jid].get("r2_test") is not None]
    if not need:
        return
    stored = dict(store.conn.execute("SELECT job_id, r2_test FROM jobs"))
    for jid, twin in need:
        method = jobs[jid]["method"]
        found = [
            rows[t]["r2_test"] if t in rows else stored.get(t)
            for t, j in jobs.items()
            if j["task"] == twin and j["method"] == method
        ]
        r2s = [float(r) for r in found if r is not None]
        base = float(np.median(r2s)) if r2s else None
        rows[jid]["noise_robustness"] = rows[jid]["r2_test"] / base if base and base > 0 else None
