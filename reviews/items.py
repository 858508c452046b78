"""What an expert rates: one representative model per (task, method), frozen at creation.

The representative is the run the ``srbench2022-realworld`` rule itself uses (closest to the
median test R2, the competition's rule, or the best run, the paper's), so the R2 and simplicity
shown are the ones the leaderboard ranks (R2 to 3 decimals, the srbench2022 simplicity). The
frozen content holds everything the screen shows and nothing that names the method: the model in
``srtui.engine.expression.neutral``'s one rendering (no protected operator, the task's feature names,
one number format, sympy's term order; its size counted on that tree) with the one footnote
every item carries, and the plot data, copied in so later re-runs cannot change what was rated.
The method's raw string stays in the store (``jobs.model``) for the organiser.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.workspace import Workspace
from srtui.results.scoring.base import metric_column
from srtui.results.scoring.rules.srbench2022 import RELEASE
from srtui.results.scoring.rules.srbench2022 import _representative as representative
from srtui.results.store.store import Store
from srtui.reviews.storage import FrozenItem, ReviewError

if TYPE_CHECKING:
    from srtui.tasks.model import Task

#: at or above this many characters (of the rounded one-line form) a model is shown as "black-box"
BLACK_BOX_CHARS = 1000
BLACK_BOX = "black-box"
SELECT = ("median", "best")


def _round_sig(x: float, digits: int) -> float:
    return float(f"{x:.{digits}g}")


#: seconds sympy may spend printing one model (a power tower of a few characters takes hours)
PRINT_TIMEOUT_S = 10.0
_BLACK = {"expression": BLACK_BOX, "expression_ascii": BLACK_BOX, "plain": BLACK_BOX, "size": None, "black_box": True}


def _forms(payload: tuple[str, tuple[str, ...], str]) -> dict[str, Any]:
    from srtui.engine.expression.neutral import neutral_forms

    forms = neutral_forms(*payload, black_box_chars=BLACK_BOX_CHARS)
    return dict(_BLACK) if forms["black_box"] else forms


@lru_cache(maxsize=1)
def _printer() -> Any:  # srtui.engine.pool.Bounded, made on first use
    from srtui.engine.pool import Bounded, render_timeout

    return Bounded(
        _forms, render_timeout(PRINT_TIMEOUT_S), preload=("srtui.reviews.items", "srtui.engine.expression.neutral")
    )


def rounded_expression(text: str, features: tuple[str, ...], dialect: str) -> dict[str, Any]:
    """The model as every method's models are shown (``srtui.engine.expression.neutral``: no protected
    operator, the task's names, one number format, sympy's order), printed in a process of its
    own under PRINT_TIMEOUT_S: a model that takes longer is shown as a black box, as one too long
    to read (a raw string would name its method)."""
    result = _printer()((text, tuple(features), dialect))
    if result.status == "ok" and isinstance(result.value, dict):
        return result.value
    return dict(_BLACK)


def _num(v: Any, digits: int = 6) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return _round_sig(v, digits) if math.isfinite(v) else None


def _r2(v: Any) -> float | None:
    r = _num(v, 17)
    return None if r is None else round(r, 3)


def _horizon(task: Task) -> str | None:
    text = " ".join(str(v) for v in (task.provenance or {}).values()) + " " + (task.description or "")
    m = re.search(r"horizon (\d+)", text) or re.search(r"(\d+) days? ahead", text)
    return f"{m.group(1)} days" if m else None


def _task(workspace: Workspace, name: str) -> Task | None:
    from srtui.tasks.catalogue import TaskContext, TaskError, get_task

    try:
        return get_task(name, TaskContext.for_workspace(workspace.root))
    except (TaskError, OSError, ValueError, KeyError):
        return None


def _aligned(index: np.ndarray, pred_index: np.ndarray, pred: np.ndarray) -> np.ndarray:
    lookup = dict(zip(pred_index.tolist(), pred.tolist()))
    return np.array([lookup.get(i, np.nan) for i in index.tolist()], dtype=float)


def freeze(store: Store, rep: dict[str, Any], task_cache: dict[str, Any]) -> dict[str, Any]:
    """The content of one item: task, horizon, R2, simplicity, the expression, plot data."""
    from srtui.engine.expression.neutral import FOOTNOTE

    ws = store.workspace
    from srtui.engine.untrusted import UntrustedFileError, open_regular

    path = ws.data_cache / f"{rep['data_fingerprint']}.npz"
    try:  # never a FIFO or a link a job put there
        fh = open_regular(path)
    except (OSError, UntrustedFileError):
        raise ReviewError(
            f"the data of task {rep['task']} (job {rep['job_id']}) is not in the workspace cache at {path}"
        ) from None
    with fh, np.load(fh, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    features = tuple(str(f) for f in data["feature_names"])
    preds = store.predictions(rep["job_id"])
    if preds is None:
        raise ReviewError(f"job {rep['job_id']} ({rep['method']} on {rep['task']}) has no stored predictions")
    if rep["task"] not in task_cache:
        task_cache[rep["task"]] = _task(ws, rep["task"])
    task = task_cache[rep["task"]]
    dates_train = dates_test = None
    if task is not None and task.dates_train is not None and task.fingerprint() == rep["data_fingerprint"]:
        dates_train, dates_test = [str(d) for d in task.dates_train], [str(d) for d in task.dates_test]
    series = {
        "dates_train": dates_train,
        "dates_test": dates_test,
        "y_train": [_num(v) for v in data["y_train"]],
        "y_test": [_num(v) for v in data["y_test"]],
        "pred_train": [_num(v) for v in _aligned(data["train_index"], preds["train_index"], preds["train_pred"])],
        "pred_test": [_num(v) for v in _aligned(data["test_index"], preds["test_index"], preds["test_pred"])],
    }
    return {
        "task": rep["task"],
        "target": task.target_name if task is not None else None,
        "description": task.description if task is not None else "",
        "horizon": _horizon(task) if task is not None else None,
        # as the srbench2022-realworld rule ranks them: R2 to 3 decimals, the release's simplicity
        "r2_test": _r2(rep["r2_test"]),
        "simplicity": _num(rep.get("simplicity"), 3),
        **rounded_expression(rep.get("model") or "", features, rep.get("dialect") or "python"),
        "footnote": FOOTNOTE,
        "features": list(features),  # the task's, for the blinding check (srtui.reviews.blinding)
        "series": series,
    }


def _is_baseline(method: str) -> bool:
    from srtui.engine.methods.registry import MethodError, load

    try:
        return load(method).family == "baseline"
    except MethodError:
        return False


def build_items(
    store: Store,
    suite: str | None = None,
    tasks: list[str] | None = None,
    select: str = "median",
    include_baseline: bool = False,
    say: Callable[[str], None] = lambda _m: None,
) -> list[FrozenItem]:
    """One frozen item per (task, method) of the workspace's finished runs."""
    from srtui.results.scoring.tables import runs_frame

    if select not in SELECT:
        raise ReviewError(f"--select must be median or best, got {select!r}")
    runs = runs_frame(store, suite)
    if runs.empty:
        raise ReviewError(f"no runs{' of suite ' + suite if suite else ''} in the workspace")
    if "simplicity" not in runs.columns:
        from srtui.results.metrics.compute import compute_for_store

        say("computing the runs' metrics first (as `srtui rescore`)")
        compute_for_store(store, suite=suite)
        runs = runs_frame(store, suite)
    # the simplicity the session's rule ranks (srbench2022-realworld, profile reference)
    simplicity = metric_column(runs, RELEASE, "simplicity")
    runs["simplicity"] = runs[simplicity] if simplicity in runs.columns else np.nan
    if tasks:
        unknown = sorted(set(tasks) - set(runs["task"]))
        if unknown:
            raise ReviewError(
                f"no runs of task(s) {', '.join(unknown)} (tasks: {', '.join(sorted(runs['task'].unique()))})"
            )
        runs = runs[runs["task"].isin(tasks)]
    methods = sorted(runs["method"].unique())
    if not include_baseline:
        kept = [m for m in methods if not _is_baseline(m)]
        if not kept:
            raise ReviewError(
                f"every method here is a baseline ({', '.join(methods)}): add --include-baseline to review them"
            )
        runs = runs[runs["method"].isin(kept)]
    fps = dict(store.conn.execute("SELECT job_id, data_fingerprint FROM jobs"))
    items: list[FrozenItem] = []
    task_cache: dict[str, Any] = {}
    missing: list[str] = []
    for (task, method), frame in runs.groupby(["task", "method"]):
        best = representative(frame, select)
        if best is None:
            missing.append(f"{method} on {task}")
            continue
        rep = {str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in best.to_dict().items()}
        rep["data_fingerprint"] = fps[rep["job_id"]]
        items.append(
            FrozenItem(str(task), str(method), freeze(store, rep, task_cache), rep["job_id"], int(best["seed"]))
        )
    if missing:
        say(f"no successful run to review for: {', '.join(missing)}")
    if not items:
        raise ReviewError("no successful runs to review")
    return items


__all__ = ["BLACK_BOX", "BLACK_BOX_CHARS", "build_items", "freeze", "rounded_expression"]
