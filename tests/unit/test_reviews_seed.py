"""A seeded workspace for the review tests: the simulated epidemic tasks (real task data) and the
nine SRBench 2022 real-world methods' names, with real expressions and their real predictions.

Rows go in through the store's API (``plan``/``claim``/``record``) and the metrics through
``srtui.results.metrics.compute.compute_for_store``, as `srtui run` does. Method k's model uses k + 1 lagged
features (so simplicity differs); each seed scales the coefficients a little (so the runs of
one (task, method) differ and the median rule has something to choose).
"""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

import numpy as np

from srtui.engine.expression import parse_expression
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store, pack_predictions

SRBENCH_METHODS = ("Bingo", "E2ET", "LassoCV", "PS-Tree", "QLattice", "geneticengine", "operon", "pysr", "uDSR")
TARGETS = ("cases", "hosp", "deaths")
SEEDS = (11, 22, 33)
LIMITS = Limits(time_s=60, mem_mb=2000)


def _write_data(ws: Workspace, task) -> str:
    fp = task.fingerprint()
    buf = io.BytesIO()
    np.savez(
        buf,
        X_train=task.X_train,
        y_train=task.y_train,
        X_test=task.X_test,
        y_test=task.y_test,
        train_index=task.train_index,
        test_index=task.test_index,
        feature_names=np.array(task.feature_names, dtype=str),
    )
    (ws.data_cache / f"{fp}.npz").write_bytes(buf.getvalue())
    return fp


def model_for(target: str, k: int, seed: int) -> str:
    scale = 1.0 + (seed % 7) / 100
    terms = [f"{0.9 * scale / (j + 1):.6f}*value_{target}_{14 + j}" for j in range(k + 1)]
    return " + ".join(terms) + f" + {k * 1.5 + seed / 100:.4f}"


def seed_review_workspace(root: Path, methods=SRBENCH_METHODS, targets=TARGETS, seeds=SEEDS) -> Workspace:
    from srtui.results.metrics.compute import compute_for_store
    from srtui.tasks.catalogue import TaskContext, get_task

    ws = Workspace(root).ensure()
    store = Store(ws, create=True)
    tasks = {t: get_task(f"demo-epidemic-{t}", TaskContext.for_workspace(root)) for t in targets}
    fps = {t: _write_data(ws, task) for t, task in tasks.items()}
    specs = [
        JobSpec("demo-realworld", f"demo-epidemic-{t}", m, s, LIMITS, fps[t], "1.0")
        for t in targets
        for m in methods
        for s in seeds
    ]
    store.plan(specs)
    run_id = store.begin_run("demo-realworld", "seed", "host", ["seed"], "2025-01-02T10:00:00+00:00")
    for spec in specs:
        target = spec.task.rsplit("-", 1)[1]
        task = tasks[target]
        k = methods.index(spec.method)
        model = model_for(target, k, spec.seed)
        parsed = parse_expression(model, task.feature_names, "python")
        pred_train, pred_test = parsed.evaluate(task.X_train), parsed.evaluate(task.X_test)
        store.claim(spec.job_id, 1, run_id, "2025-01-02T10:00:01+00:00", "host")
        fields = {
            "status": "ok",
            "attempt": 1,
            "run_id": run_id,
            "returncode": 0,
            "wall_s": 1.0,
            "cpu_s": 1.0,
            "peak_rss_mb": 50.0,
            "host": "host",
            "started_at": "2025-01-02T10:00:01+00:00",
            "ended_at": "2025-01-02T10:00:02+00:00",
            "dialect": "python",
            "model": model,
        }
        store.record(spec.job_id, fields, pack_predictions(task.train_index, pred_train, task.test_index, pred_test))
    store.end_run(run_id, "ok", "2025-01-02T10:01:00+00:00")
    compute_for_store(store, workers=1)
    store.close()
    return ws


_CACHE: dict[str, Path] = {}


def seeded_copy(dest: Path) -> Workspace:
    """A fresh copy of the seeded workspace (seeded once per test process: it takes seconds)."""
    if "ws" not in _CACHE:
        _CACHE["ws"] = Path(tempfile.mkdtemp(prefix="srtui-review-seed-")) / "ws"
        seed_review_workspace(_CACHE["ws"])
    shutil.copytree(_CACHE["ws"], dest)
    return Workspace(dest)


def test_seeded_workspace_has_metrics(tmp_path):
    from srtui.results.scoring.tables import runs_frame

    ws = seeded_copy(tmp_path / "ws")
    runs = runs_frame(Store(ws, readonly=True))
    assert len(runs) == len(SRBENCH_METHODS) * len(TARGETS) * len(SEEDS)
    assert runs["simplicity"].notna().all() and runs["r2_test"].notna().all()
    # a larger model is less simple
    simp = runs.groupby("method")["simplicity"].median()
    assert simp["uDSR"] < simp["Bingo"]
