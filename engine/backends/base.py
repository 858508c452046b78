"""What every backend shares: the planned job, the sink that records it, the live run state,
and the ``Backend`` protocol the run orchestration (runs.run) drives.

A backend is made by engine.backends.make_backend, ``prepare``d before the store is opened
(a bad cluster request then touches nothing), ``run`` once per batch of jobs (tuning, then the
final fits), and ``close``d by its owner in a ``finally`` whatever happened.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.errors import SrtuiError
from engine.launcher import JobOutcome, JobPayload
from engine.spec import JobSpec


class BackendError(SrtuiError, ValueError):
    """A backend that cannot be set up or goes down; one line for the CLI."""


@dataclass
class BackendOptions:
    kind: str = "local"
    n_slots: int = 1
    dask_scheduler: str | None = None  # dask: tcp://HOST:8786 of a running scheduler
    cluster: str | None = None  # dask: local | ssh | slurm
    cluster_config: Path | None = None  # dask: TOML with the cluster's settings
    cancel: threading.Event | None = None  # set by Ctrl-C: a cluster start in progress gives up
    log_path: Path | None = None  # dask: where Dask's own log lines go (not the terminal)


@dataclass
class PlannedJob:
    """A job claimed for a run: its payload, which carries the spec, the attempt and the data."""

    payload: JobPayload

    @property
    def spec(self) -> JobSpec:
        return self.payload.spec

    @property
    def job_id(self) -> str:
        return self.payload.job_id

    @property
    def attempt(self) -> int:
        return self.payload.attempt

    @property
    def data_path(self) -> str:
        return self.payload.data_path or ""

    @property
    def label(self) -> str:
        return f"{self.spec.method} / {self.spec.task} / seed {self.spec.seed}"


class SinkError(SrtuiError):
    """The sink cannot record (disk full, read-only file system, a broken database): one line.
    ``recorded`` says whether the job's outcome itself was committed (only its logs were not)."""

    def __init__(self, message: str, recorded: bool = False) -> None:
        super().__init__(message)
        self.recorded = recorded


class JobSink(Protocol):
    """Where job lifecycle events go (the store). Called from backend threads. A sink that
    cannot record raises SinkError; scheduling then stops (RunState.failure)."""

    def claim(self, job: PlannedJob, started_at: str, host: str) -> bool: ...
    def started(self, job: PlannedJob, pid: int) -> None: ...
    def finished(self, job: PlannedJob, outcome: JobOutcome, fields: dict[str, object]) -> None: ...
    def workers(self, live: int, expected: int) -> None: ...


class FollowUp(Protocol):
    """Work a finished job leaves for an idle slot (its metrics): picklable, computed wherever
    the backend runs jobs, with ``core`` the slot's core (None on a Dask worker)."""

    def compute(self, core: int | None, where: str, keep: bool = False) -> Any:
        """``keep``: the calling process computes follow-up after follow-up (a Dask worker) and
        may keep what it starts for the next one."""
        ...


class FollowUps(Protocol):
    """The driver's queue of follow-ups. A slot takes one only when no job is left to start (a
    follow-up never shares a core with a running job); the driver alone records the results."""

    @property
    def pending(self) -> int: ...
    def take(self, many: int = 1) -> FollowUp | None: ...
    def record(self, unit: Any, result: Any) -> None: ...
    def give_back(self, unit: Any, why: str) -> None: ...


@dataclass
class RunState:
    """Live counters of a run, for progress displays. Thread-safe through its lock."""

    total: int
    counts: Counter[str] = field(default_factory=Counter)
    running: dict[str, tuple[PlannedJob, float]] = field(default_factory=dict)
    recent_failures: list[tuple[PlannedJob, JobOutcome]] = field(default_factory=list)
    #: finished jobs not yet printed by a plain (piped) progress display: job, status, wall s;
    #: bounded so a display that never drains it (the live panel) holds no more than this
    finished: deque[tuple[PlannedJob, str, float]] = field(default_factory=lambda: deque(maxlen=10000))
    started: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: why the run cannot go on (the store cannot record): no new job starts once it is set
    failure: str | None = None
    #: jobs whose outcome could not be recorded even as an error (the run then exits non-zero)
    unrecorded: list[str] = field(default_factory=list)
    #: jobs whose metrics are computed / queued in this run (results.metrics_tasks), and their ETA
    metrics_done: int = 0
    metrics_total: int = 0
    metrics_eta_s: float | None = None

    def fail(self, message: str) -> None:
        with self.lock:
            self.failure = self.failure or message

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def throughput(self) -> float:
        """Finished jobs per minute."""
        elapsed = time.monotonic() - self.started
        return self.done / elapsed * 60 if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        return (self.total - self.done) / rate if self.done else None


class Backend(Protocol):
    """Runs planned jobs with the same job function everywhere (engine.launcher.run_job)."""

    name: str

    def prepare(self, specs: list[JobSpec]) -> None:
        """Check the jobs fit the backend and start what it needs (a cluster); BackendError
        before any job is claimed."""
        ...

    def run(
        self,
        jobs: list[PlannedJob],
        sink: JobSink,
        state: RunState,
        cancel: threading.Event,
        force: threading.Event,
        on_change: Callable[[], None] | None = None,
        follow_ups: FollowUps | None = None,
    ) -> None:
        """Run ``jobs`` until each is recorded through ``sink`` or ``cancel`` is set, and the
        ``follow_ups`` they leave in slots with no job to start; may be called again on the same
        backend (the final fits after the tuning, the metrics left at the end)."""
        ...

    def warm_up(self, fn: Callable[[int | None], object]) -> None:
        """Run ``fn(core)`` once in every worker process (``core`` the one its work is pinned
        to) before work that pays a start-up cost there (a metrics pass on a cluster); a local
        backend runs its work in this process: nothing."""
        ...

    def close(self) -> None:
        """Release what ``prepare`` started; safe to call twice and after a failed start."""
        ...
