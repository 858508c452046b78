"""A fixed, synthetic workspace for the TUI tests (real SQLite store, real task data), and its test.

Rows go in through the store's own API (``Store.plan``/``claim``/``record``) with fixed times, so
screens rendered from it are the same on every machine (snapshot tests). Other TUI test modules
import ``seed_demo`` from here.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from srtui.engine.process import tree
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store, pack_predictions

#: "now" for the app's clock in tests: 95 s after the running job started
NOW_ISO = "2025-01-02T10:01:35+00:00"
FIXED_NOW = 1735812095.0
MARKUP_MODEL = "[bold]x0[/bold] + [/ x1 [red]"  # markup-like text that must render as itself
MARKUP_STDERR = 'Traceback (most recent call last):\n  File "[/]fit.py"\nValueError: [bold red]boom[/] \\[x]'
LIMITS = Limits(time_s=60, mem_mb=2000)


def _write_data(ws: Workspace, task) -> str:
    fp = task.fingerprint()
    path = ws.data_cache / f"{fp}.npz"
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
    path.write_bytes(buf.getvalue())
    return fp


def seed_demo(root: Path) -> Workspace:
    """Two smoke tasks x five methods, every kind of outcome, one running and one pending job."""
    from srtui.tasks.catalogue import TaskContext, get_task

    ws = Workspace(root).ensure()
    store = Store(ws, create=True)
    tasks = {name: get_task(name, TaskContext.for_workspace(root)) for name in ("smoke-linear", "smoke-interaction")}
    fps = {name: _write_data(ws, t) for name, t in tasks.items()}
    methods = ("linear", "ridge", "probe-noop", "probe-crash", "probe-sleep")
    specs = [JobSpec("smoke", t, m, 2082, LIMITS, fps[t], "1.0") for t in tasks for m in methods]
    store.plan(specs)
    # the run's driver is this (test) process, so the running job's driver is alive
    run_id = store.begin_run(
        "smoke", tree.driver_identity(), "demo-host", ["srtui", "run", "smoke"], "2025-01-02T10:00:00+00:00"
    )
    minute = 0
    for spec in specs:
        task = tasks[spec.task]
        if spec.method == "probe-sleep" and spec.task == "smoke-interaction":
            continue  # stays pending
        minute += 1
        started = f"2025-01-02T10:00:{minute:02d}+00:00"
        store.claim(spec.job_id, 1, run_id, started, "demo-host")
        if spec.method == "probe-sleep":
            continue  # stays running
        fields = {
            "status": "ok",
            "attempt": 1,
            "run_id": run_id,
            "returncode": 0,
            "wall_s": 1.5 + minute / 10,
            "cpu_s": 1.0,
            "peak_rss_mb": 80.0,
            "host": "demo-host",
            "started_at": started,
            "ended_at": f"2025-01-02T10:00:{minute + 5:02d}+00:00",
            "dialect": "python",
        }
        preds = None
        if spec.method in ("linear", "ridge"):
            shrink = 1.0 if spec.method == "linear" else 0.9
            fields.update(
                model=task.ground_truth if spec.method == "linear" else f"0.9*({task.ground_truth})",
                r2_test=1.0 if shrink == 1.0 else 0.97,
                r2_train=0.99,
                mse_test=0.01,
                mae_test=0.05,
                r2_test_expr=0.97,
                fidelity_r2=1.0,
                max_abs_diff=0.0,
                expression_mismatch=0,
                model_too_large=0,
                fit_s=0.5,
            )
            if spec.method == "ridge":
                fields["pareto"] = [
                    {"expression": "x0", "complexity": 1.0, "loss": 2.5},
                    {"expression": f"0.9*({task.ground_truth})", "complexity": 9.0, "loss": 0.01},
                ]
            preds = pack_predictions(task.train_index, task.y_train * shrink, task.test_index, task.y_test * shrink)
        elif spec.method == "probe-noop":
            fields.update(
                status="invalid_model", model=MARKUP_MODEL, model_error="cannot parse: unexpected '['", r2_test=-0.1
            )
        else:
            fields.update(
                status="crashed",
                returncode=-11,
                signal=11,
                stderr_tail=MARKUP_STDERR,
                error="the job crashed (signal 11)",
            )
        store.record(spec.job_id, fields, preds)
    from srtui.results.metrics.compute import compute_for_store

    compute_for_store(store, workers=1)  # the metrics table the leaderboards read
    store.close()
    return ws


def test_seed_demo_has_every_kind_of_job(tmp_path):
    ws = seed_demo(tmp_path / "ws")
    store = Store(ws, readonly=True)
    counts = store.status_counts()
    assert counts == {"ok": 4, "invalid_model": 2, "crashed": 2, "running": 1, "pending": 1}
    ridge = next(j for j in store.jobs() if j["method"] == "ridge")
    assert json.loads(ridge["pareto"])[0]["expression"] == "x0"
    assert store.predictions(ridge["job_id"]) is not None
    store.close()
