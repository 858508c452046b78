"""Issue 27: a per-job barrier. An outcome that cannot be recorded as it came (a model with a lone
surrogate, which UTF-8 cannot store) is recorded as that job's error, text made storable, and the
slot goes on; a run exits non-zero only if a job could not be recorded at all."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import results_json, srtui

from srtui.engine.backends.base import Batch, DataCache, PlannedJob, RunState, finish_job
from srtui.engine.process.job_io import JobOutcome, JobPayload, now_iso
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store
from srtui.runs.sink import StoreSink

REGRESSOR = """
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
class Surrogate(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Surrogate()
def model(est, X=None):
    return "x1\\udc9b+x2"
"""


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_surrogate_model_is_recorded_and_both_slots_go_on(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "surrogate"
    folder.mkdir()
    (folder / "regressor.py").write_text(REGRESSOR)
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        "surrogate,probe-noop",
        "--tasks",
        "smoke-linear,smoke-interaction",
        "--seeds",
        "1",
        "--jobs",
        "2",
        "--oversubscribe",
        "--method-dir",
        str(folder),
        "--workspace",
        str(workspace),
    )
    assert proc.returncode == 0, proc.stderr
    rows = results_json(workspace)
    assert len(rows) == 4 and all(r["status"] not in ("running", "pending") for r in rows), rows
    for row in (r for r in rows if r["method"] == "surrogate"):
        assert row["model"] == "x1\\udc9b+x2", row


def _job(store: Store, tmp_path: Path) -> tuple[PlannedJob, str]:
    spec = JobSpec("t", "smoke-linear", "linear", 1, Limits(time_s=60, mem_mb=2000), "fp", "1.0")
    store.plan([spec])
    run_id = store.begin_run("t", "driver", "host", ["srtui"], now_iso())
    assert store.claim(spec.job_id, 1, run_id, now_iso(), "host")
    payload = JobPayload(spec, 1, store.workspace_id, data_path=str(tmp_path / "none.npz"))
    return PlannedJob(payload), run_id


def _outcome(job: PlannedJob, model: str) -> JobOutcome:
    return JobOutcome(job.job_id, 1, "ok", "host", now_iso(), now_iso(), 1.0, model=model, stderr=b"x")


class Refusing(StoreSink):
    """The real sink over the real store, made to fail as a bug in recording would (n times)."""

    def __init__(self, store: Store, run_id: str, failures: int) -> None:
        super().__init__(store, run_id)
        self.failures = failures

    def finished(self, job, outcome, fields) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise RuntimeError("a bug \x1b[2J while recording")
        super().finished(job, outcome, fields)


def test_the_barrier_records_the_job_as_an_error_in_storable_text(tmp_path: Path) -> None:
    store = Store(Workspace(tmp_path / "ws").ensure(), create=True)
    job, run_id = _job(store, tmp_path)
    state = RunState(total=1)
    finish_job(job, _outcome(job, "x1\udc9b+x2"), Refusing(store, run_id, 1), state, DataCache())
    assert state.unrecorded == [] and state.counts["error"] == 1
    row = store.conn.execute("SELECT status, error, model FROM jobs").fetchone()
    assert row[0] == "error" and "RuntimeError" in row[1] and "\x1b" not in row[1]
    assert row[2] == "x1\\udc9b+x2"
    store.close()


def test_a_job_that_cannot_be_recorded_at_all_is_counted(tmp_path: Path) -> None:
    store = Store(Workspace(tmp_path / "ws").ensure(), create=True)
    job, run_id = _job(store, tmp_path)
    state = RunState(total=1)
    finish_job(job, _outcome(job, "x1"), Refusing(store, run_id, 2), state, DataCache())
    assert state.unrecorded == [job.job_id] and state.failure is None
    store.close()


class Blocking(StoreSink):
    """The real sink, blocked in recording as a slot stuck on a hung disk or lock would be."""

    def __init__(self, store: Store, run_id: str) -> None:
        super().__init__(store, run_id)
        self.entered = threading.Event()
        self.release = threading.Event()

    def finished(self, job, outcome, fields) -> None:
        self.entered.set()
        self.release.wait(600)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("second_signal", [False, True])
def test_stopping_ends_the_run_within_the_grace_even_with_a_blocked_slot(tmp_path: Path, second_signal: bool) -> None:
    from srtui.engine.backends.local import FORCE_MARGIN_S, STOP_MARGIN_S, LocalBackend
    from srtui.runs.data import write_task_data
    from srtui.tasks.catalogue import TaskContext, get_task

    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    task = get_task("smoke-linear", TaskContext.for_workspace(ws.root))
    data = ws.data_cache / "d.npz"
    write_task_data(task, data)
    spec = JobSpec("t", "smoke-linear", "probe-noop", 1, Limits(time_s=60, mem_mb=2000, grace_s=1), "fp", "1")
    store.plan([spec])
    run_id = store.begin_run("t", "driver", "host", ["srtui"], now_iso())
    payload = JobPayload(spec, 1, store.workspace_id, data_path=str(data))
    sink = Blocking(store, run_id)
    cancel, force = threading.Event(), threading.Event()
    backend = LocalBackend(1, ws.jobs_dir)
    runner = threading.Thread(
        target=backend.run,
        args=([PlannedJob(payload)], Batch(sink, RunState(total=1), cancel, force)),
    )
    runner.start()
    assert sink.entered.wait(120), "the job never finished"
    t0 = time.monotonic()
    cancel.set()
    if second_signal:
        force.set()
    runner.join(60)
    took = time.monotonic() - t0
    sink.release.set()
    assert not runner.is_alive(), "the driver waited on a blocked slot"
    bound = FORCE_MARGIN_S if second_signal else 1 + STOP_MARGIN_S
    assert took < bound + 5, took  # far below the slot's 600 s
    store.close()
