"""What every backend shares: the planned job, the sink that records it, the live run state,
the ``Backend`` protocol the run orchestration (srtui.runs.execution) drives, and what every
backend does with a returned outcome (``finish_job``: score, record, count).

A backend is made by srtui.engine.backends.make_backend, ``prepare``d before the store is opened
(a bad cluster request then touches nothing), ``run`` once per batch of jobs (tuning, then the
final fits), and ``close``d by its owner in a ``finally`` whatever happened.
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import JobSpec
from srtui.engine.task_files import TASK_FILES
from srtui.engine.textsafe import encodable, visible

if TYPE_CHECKING:  # the job machinery (numpy, psutil) loads when jobs run, not when a run is planned (#56)
    from srtui.engine.backends.recorder import Recorder
    from srtui.engine.outcome_check import Checker, TaskArrays
    from srtui.engine.process.job_io import JobOutcome, JobPayload


class BackendError(SrtuiError, ValueError):
    """A backend that cannot be set up or goes down; one line for the CLI."""


class ClusterLost(BackendError):
    """The cluster's scheduler went away mid-run: its running jobs are recorded ``lost`` (run
    again by the next run) and the run ends in one line with exit code 3."""

    exit_code = 3


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
    #: jobs whose metrics are computed / queued in this run (srtui.results.metrics.tasks), and their ETA
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


@dataclass
class Batch:
    """What a backend's ``run`` is handed besides the jobs, the same for every backend."""

    sink: JobSink  # where each job is claimed and its outcome recorded
    state: RunState
    cancel: threading.Event  # set: start nothing more, stop the running jobs within their grace
    force: threading.Event  # set: kill the running jobs now
    on_change: Callable[[], None] | None = None  # called when a job starts or finishes (a display)
    #: work the jobs leave (their metrics), done in slots with no job to start
    follow_ups: FollowUps | None = None


class Backend(Protocol):
    """Runs planned jobs with the same job function everywhere (srtui.engine.process.supervise.run_job)."""

    name: str

    def prepare(self, specs: list[JobSpec]) -> None:
        """Check the jobs fit the backend and start what it needs (a cluster); BackendError
        before any job is claimed."""
        ...

    def run(self, jobs: list[PlannedJob], batch: Batch) -> None:
        """Run ``jobs`` until each is recorded through ``batch.sink`` or ``batch.cancel`` is set,
        and the ``batch.follow_ups`` they leave in slots with no job to start; may be called again
        on the same backend (the final fits after the tuning, the metrics left at the end)."""
        ...

    def warm_up(self, fn: Callable[[int | None], object]) -> None:
        """Run ``fn(core)`` once in every worker process (``core`` the one its work is pinned
        to) before work that pays a start-up cost there (a metrics pass on a cluster); a local
        backend runs its work in this process: nothing."""
        ...

    def close(self) -> None:
        """Release what ``prepare`` started; safe to call twice and after a failed start."""
        ...


def interleave(jobs: list[PlannedJob]) -> list[PlannedJob]:
    """Round-robin over methods, so partial results cover every method evenly."""
    by_method: dict[str, list[PlannedJob]] = defaultdict(list)
    for job in jobs:
        by_method[job.spec.method].append(job)
    return [job for batch in zip_longest(*by_method.values()) for job in batch if job is not None]


def usable_cores() -> list[int]:
    """The cores this process may run on (cpuset/affinity aware, unlike os.cpu_count())."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # non-Linux
        return list(range(os.cpu_count() or 1))


class DataCache:
    """Task arrays for evaluation, loaded once per data file, and the checker that reads the
    models (in processes of its own: ``close`` it when the run ends)."""

    def __init__(self) -> None:
        from srtui.engine.outcome_check import Checker

        self._lock = threading.Lock()
        self._data: dict[str, TaskArrays] = {}
        self.checker: Checker = Checker()

    def close(self) -> None:
        self.checker.close()

    def get(self, path: str) -> TaskArrays:
        from srtui.engine.outcome_check import TaskArrays

        with self._lock:
            if path not in self._data:
                known = TASK_FILES.true_bytes(path)  # the bytes the driver wrote, not a job's
                self._data[path] = TaskArrays.from_npz(io.BytesIO(known[0])) if known else TaskArrays.load(path)
            return self._data[path]


def evaluate(job: PlannedJob, outcome: JobOutcome, cache: DataCache) -> dict[str, object]:
    from srtui.engine.scaling import SCALING_KEY

    try:
        data = cache.get(job.data_path)
        option = (job.spec.params or {}).get(SCALING_KEY)
        TASK_FILES.checked(job.data_path)  # the checker's process reads the file: made true again
        return cache.checker.score(outcome, data, job.data_path, option)
    except Exception as exc:  # noqa: BLE001 - a scoring bug must not lose the job's record
        outcome.status, outcome.error = "error", f"srtui failed to score the result: {type(exc).__name__}: {exc}"
        return {}


def fault(step: str) -> None:
    """A failure a test injects at ``step`` of a slot's loop (``SRTUI_TEST_FAULT=step,...``), the
    first time the step is reached in this process; nothing when the variable is not set."""
    wanted = os.environ.get("SRTUI_TEST_FAULT")
    if not wanted or step not in wanted.split(","):
        return
    with _FIRED_LOCK:
        if step in _FIRED:
            return
        _FIRED.add(step)
    raise RuntimeError(f"fault injected at {step}")


_FIRED: set[str] = set()
_FIRED_LOCK = threading.Lock()


def failed_outcome(job: PlannedJob, why: str, status: str = "error") -> JobOutcome:
    """The outcome of a job srtui could not run or finish (``why`` in one line)."""
    from srtui.engine.process.job_io import JobOutcome, now_iso

    now = now_iso()
    return JobOutcome(
        job.job_id,
        job.attempt,
        status,
        os.uname().nodename,
        now,
        now,
        0.0,
        error=visible(encodable(why), one_line=True)[:500],
    )


def settle(sink: JobSink, state: RunState) -> None:
    """Jobs a backend returned from with still marked running (a slot that ended with one, a
    lost worker) are recorded as errors saying so: a run never ends with a job ``running``."""
    with state.lock:
        left = list(state.running.values())
    for job, _ in left:
        outcome = failed_outcome(job, "srtui ended the job's slot before recording it")
        try:
            status = _record(job, outcome, {}, sink, state)
        except SinkError as exc:
            state.fail(str(exc))
            status = "interrupted"
        with state.lock:
            state.running.pop(job.job_id, None)
            state.counts[status] += 1


def finish_job(
    job: PlannedJob,
    outcome: JobOutcome,
    sink: JobSink,
    state: RunState,
    cache: DataCache,
    on_change: Callable[[], None] | None = None,
    recorder: Recorder | None = None,
) -> None:
    """What every backend does with a returned outcome: score it, record it, count it.
    A sink that cannot record stops the run (state.failure) instead of killing the caller.
    With a ``recorder`` (srtui.engine.backends.recorder: group commit), recording and counting are its."""
    from srtui.engine.process import phases

    fault("score")
    fields = evaluate(job, outcome, cache)
    phases.mark("scored")
    if recorder is not None:
        recorder.put(job, outcome, fields)
        return
    status = record_job(job, outcome, fields, sink, state)
    phases.mark("recorded")
    count_job(job, outcome, status, state, on_change)


def record_job(job: PlannedJob, outcome: JobOutcome, fields: dict[str, object], sink: JobSink, state: RunState) -> str:
    """Record one outcome; the status it is counted as (``interrupted``: its record failed)."""
    try:
        return _record(job, outcome, fields, sink, state)
    except SinkError as exc:
        state.fail(str(exc))
        return outcome.status if exc.recorded else "interrupted"  # the sink marks it so where it still can


def count_job(
    job: PlannedJob, outcome: JobOutcome, status: str, state: RunState, on_change: Callable[[], None] | None
) -> None:
    """A recorded job is reported: counted, off the running ones, told to the display."""
    with state.lock:
        state.running.pop(job.job_id, None)
        state.counts[status] += 1
        state.finished.append((job, status, outcome.wall_s))
        if outcome.status != "ok":
            state.recent_failures = ([*state.recent_failures, (job, outcome)])[-10:]
    if on_change:
        on_change()


def _record(job: PlannedJob, outcome: JobOutcome, fields: dict[str, object], sink: JobSink, state: RunState) -> str:
    """The per-job barrier: an outcome the sink fails on for any reason but the store's own
    (SinkError) is recorded as this job's error, its text made storable, and the slot goes on;
    a job that cannot be recorded even so is counted (the run then exits non-zero)."""
    from srtui.engine.process.job_io import JobOutcome

    try:
        fault("record")
        sink.finished(job, outcome, fields)
        return outcome.status
    except SinkError:
        raise
    except Exception as exc:  # noqa: BLE001 - one job's record must not end the slot or the run
        why = visible(encodable(f"srtui could not record the result: {type(exc).__name__}: {exc}"), one_line=True)
    failed = JobOutcome(
        job.job_id,
        job.attempt,
        "error",
        outcome.host,
        outcome.started_at,
        outcome.ended_at,
        outcome.wall_s,
        cpu_s=outcome.cpu_s,
        peak_rss_mb=outcome.peak_rss_mb,
        error=why[:500],
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        model=encodable(outcome.model),
        dialect=encodable(outcome.dialect),
    )
    try:
        sink.finished(job, failed, {})
        return failed.status
    except SinkError:
        raise
    except Exception:  # noqa: BLE001 - counted: the run says so and exits non-zero
        with state.lock:
            state.unrecorded.append(job.job_id)
        return "interrupted"
