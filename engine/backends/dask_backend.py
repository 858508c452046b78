"""The Dask backend: each job is one Dask task that runs engine.launcher.run_job on a worker.

Driver side (``DaskBackend.run``): claim a job in the store, submit it with an explicit key
(never Dask's ``pure`` de-duplication), keep at most ``max_in_flight`` tasks out, collect them
through ``as_completed(...).add(...)``, score and record each outcome here - the driver stays
the only writer of the workspace. A worker that dies mid-job raises KilledWorker (the scheduler
runs with allowed-failures = 0): the attempt is recorded ``lost`` and the job resubmitted as
attempt + 1, up to engine.spec.MAX_AUTO_ATTEMPTS.

Worker side (``run_on_worker``): the job's npz travels inside its payload (``data_bytes``: no
shared filesystem, no scattered data to lose with a worker; in-flight work is bounded, so is
the memory it holds), the job runs in a scratch dir under the worker's local directory with
every limit of the local backend, and the outcome returns as plain data. Ctrl-C reaches running
jobs through ``client.run`` (a per-run flag the job polls), never by killing worker threads.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import shutil
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from engine import proctree
from engine.backends import BackendError, BackendOptions
from engine.backends.dask_config import (
    SCHEDULER_CONFIG,
    ClusterConfig,
    check_limits,
    job_span_s,
    load_cluster_config,
    local_kwargs,
    slurm_kwargs,
    ssh_kwargs,
)
from engine.launcher import JobOutcome, JobPayload, now_iso, run_job
from engine.scheduler import (
    DataCache,
    JobSink,
    PlannedJob,
    RunState,
    finish_job,
    interleave,
    usable_cores,
)
from engine.spec import MAX_AUTO_ATTEMPTS, JobSpec, Limits

TOPIC_PREFIX = "srtui-started-"

# --- worker side ---------------------------------------------------------------------------------

_flags_lock = threading.Lock()
_run_flags: dict[str, tuple[threading.Event, threading.Event]] = {}


def _flags(run_token: str) -> tuple[threading.Event, threading.Event]:
    """(cancel, force) events of one run in this worker process."""
    with _flags_lock:
        return _run_flags.setdefault(run_token, (threading.Event(), threading.Event()))


def signal_run(run_token: str, which: str) -> None:
    """Called on every worker by the driver (client.run): 'cancel' or 'force' this run's jobs."""
    cancel, force = _flags(run_token)
    (force if which == "force" else cancel).set()


def forget_run(run_token: str) -> None:
    with _flags_lock:
        _run_flags.pop(run_token, None)


def dask_setup(worker) -> None:  # noqa: ARG001 - Dask preload hook for LocalCluster workers
    """Local workers share the terminal's process group: Ctrl-C is the driver's to handle."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_core(name: Any) -> int | None:
    """A distinct core per worker on one host: the worker's trailing number (LocalCluster 0, 1;
    SLURM 'job-3'), modulo the cores this worker may use (its SLURM cpuset, say)."""
    match = re.search(r"(\d+)$", str(name))
    cores = usable_cores()
    return cores[int(match.group(1)) % len(cores)] if match and cores else None


def synthetic_outcome(job_id: str, attempt: int, status: str, error: str, started_at: str, host: str = "") -> JobOutcome:
    """An outcome for an attempt that produced none (worker died, cancelled before starting)."""
    return JobOutcome(job_id, attempt, status, host, started_at, now_iso(), 0.0, error=error)


def _retire_if_short(worker, limits: Limits) -> None:
    """A worker with a lifetime (SLURM walltime) starts no job it could not finish: it retires
    and the task goes back to the scheduler for a younger worker."""
    lifetime = getattr(worker, "lifetime", None)
    if not lifetime:
        return
    import psutil
    from distributed import Reschedule

    age = time.time() - psutil.Process().create_time()
    if age + job_span_s(limits) > lifetime:
        worker.loop.add_callback(worker.close_gracefully, reason="srtui: too little lifetime left for a job")
        raise Reschedule()


def run_on_worker(payload: JobPayload, run_token: str) -> JobOutcome:
    """The Dask task: run one job here under its limits and return the outcome as data."""
    from distributed import get_worker

    worker = get_worker()
    cancel, force = _flags(run_token)
    if cancel.is_set():
        return synthetic_outcome(payload.job_id, payload.attempt, "interrupted",
                                 "stopped by the driver (Ctrl-C) before it started", now_iso(), socket.gethostname())
    _retire_if_short(worker, Limits.from_dict(payload.spec["limits"]))
    scratch = Path(worker.local_directory) / "srtui-jobs" / f"{payload.job_id}-a{payload.attempt}"
    topic = TOPIC_PREFIX + run_token

    def started(pid: int) -> None:
        worker.log_event(topic, {"job_id": payload.job_id, "attempt": payload.attempt, "pid": pid})

    try:
        return run_job(payload, scratch, core=worker_core(worker.name), cancel=cancel, force=force, on_start=started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # logs and results came back in the outcome


def _allowed_failures(dask_scheduler) -> int:
    return dask_scheduler.allowed_failures


def _worker_ready() -> str:
    """Proves the worker imports this engine (it unpickles this function) and can run jobs."""
    import engine.worker  # noqa: F401

    return socket.gethostname()


# --- driver side ---------------------------------------------------------------------------------


def _is_lost(exc: BaseException) -> bool:
    """Did the attempt die with its worker or connection (retry), rather than fail (record)?"""
    import asyncio
    import concurrent.futures

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    lost = (KilledWorker, CommClosedError, OSError, asyncio.CancelledError, concurrent.futures.CancelledError, TimeoutError)
    return isinstance(exc, lost) or type(exc).__name__ in ("FutureCancelledError", "CancelledError")


class DaskBackend:
    """Runs planned jobs as Dask tasks on a scheduler we connect to or a cluster we start."""

    name = "dask"

    def __init__(self, options: BackendOptions, scratch_root: Path) -> None:
        if options.scheduler and options.cluster:
            raise BackendError("give either --scheduler (a running scheduler) or --cluster (start one), not both")
        if options.scheduler and options.cluster_config:
            raise BackendError("--cluster-config goes with --cluster local|ssh|slurm, not with --scheduler")
        self.options = options
        self.scratch_root = scratch_root
        self.config: ClusterConfig | None = None if options.scheduler else load_cluster_config(options.cluster or "local", options.cluster_config)
        self.cluster = None
        self.client = None
        self.keep_open = False  # tests and benchmarks reuse one cluster across runs
        self.poll_s = 0.2
        if self.config is None or self.config.kind != "slurm":
            self._connect()  # set up now, before the store is touched; SLURM waits for prepare()

    @property
    def address(self) -> str:
        return self.options.scheduler or (self.cluster.scheduler_address if self.cluster else "")

    # set-up ------------------------------------------------------------------------------------

    def prepare(self, specs: list[JobSpec]) -> None:
        """Check the jobs fit the cluster (SLURM walltime and memory), then start it if not yet
        up; BackendError before any job is submitted (before anything is stored if called
        before the store is opened)."""
        if self.config is not None:
            check_limits(self.config, [s.limits for s in specs])
        if self.client is None:
            self._connect()

    def _connect(self) -> None:
        import dask
        from distributed import Client

        kind = self.config.kind if self.config else "scheduler"
        where = self.options.scheduler or f"{kind} cluster"
        try:
            with dask.config.set(SCHEDULER_CONFIG):
                if self.config is None:
                    self.client = Client(self.options.scheduler, timeout="10s")
                else:
                    self.cluster = self._start_cluster(self.config)
                    self.client = Client(self.cluster)
            if self.config is None:
                failures = self.client.run_on_scheduler(_allowed_failures)
                if failures != 0:
                    raise BackendError(
                        f"the scheduler at {where} re-runs tasks of dead workers (allowed-failures = {failures}); start it with "
                        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 so srtui records and retries lost jobs itself"
                    )
            if self.client.nthreads():
                self.client.run(_worker_ready)
        except BackendError:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - any start-up failure is one line for the CLI
            self.close()
            raise BackendError(f"cannot use the dask {where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None

    def _start_cluster(self, config: ClusterConfig):
        if config.kind == "local":
            from distributed import LocalCluster

            return LocalCluster(**local_kwargs(config, self.options.n_slots), preload=[__name__], silence_logs=logging.CRITICAL)
        if config.kind == "ssh":
            try:
                import asyncssh  # noqa: F401
            except ImportError:
                raise BackendError("--cluster ssh needs asyncssh (pip install asyncssh)") from None
            from distributed import SSHCluster

            return SSHCluster(**ssh_kwargs(config))
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise BackendError("--cluster slurm needs dask-jobqueue (pip install dask-jobqueue)") from None
        kwargs, scale = slurm_kwargs(config)
        cluster = SLURMCluster(**kwargs)
        # adaptive even at a fixed size: workers that reach their lifetime are replaced
        low, high = (scale["jobs"], scale["jobs"]) if "jobs" in scale else (scale["minimum_jobs"], scale["maximum_jobs"])
        cluster.adapt(minimum_jobs=low, maximum_jobs=high)
        return cluster

    def close(self) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # noqa: BLE001 - closing a broken cluster must not hide the real error
                    pass
        self.client = self.cluster = None

    def _slots(self) -> int:
        live = sum(self.client.nthreads().values())
        return max(live, self.config.expected_slots() if self.config else 1, 1)

    # the run -----------------------------------------------------------------------------------

    def run(
        self,
        jobs: list[PlannedJob],
        sink: JobSink,
        state: RunState,
        cancel: threading.Event,
        force: threading.Event,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.prepare([job.spec for job in jobs])
        try:
            _DaskRun(self, sink, state, cancel, force, on_change).run(interleave(jobs))
        finally:
            if not self.keep_open:
                self.close()


class _DaskRun:
    """One run's bookkeeping on the driver: the calling thread claims and submits, one recorder
    thread scores and records finished attempts (lost ones are recorded before their retry)."""

    def __init__(self, backend: DaskBackend, sink: JobSink, state: RunState, cancel, force, on_change) -> None:
        self.backend, self.client = backend, backend.client
        self.sink, self.state, self.cancel, self.force = sink, state, cancel, force
        self.on_change = on_change or (lambda: None)
        self.token = uuid.uuid4().hex
        self.data_cache = DataCache()
        self.in_flight: dict[Any, PlannedJob] = {}  # future -> job
        self.claimed_at: dict[str, str] = {}
        self.started: deque = deque()  # (job_id, attempt, pid) from the workers' start events
        self.started_keys: set[tuple[str, int]] = set()
        # one recorder thread: scoring (the first parse imports sympy) and SQLite writes happen
        # beside the loop that feeds the workers; the sink is thread-safe (LocalBackend's slots)
        self.recorder = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="srtui-dask-record")
        self.recording: list[concurrent.futures.Future] = []

    def run(self, jobs: list[PlannedJob]) -> None:
        from distributed import as_completed, wait

        todo = deque(jobs)
        self.client.subscribe_topic(TOPIC_PREFIX + self.token, lambda event: self.started.append(event[1]))
        completed = as_completed()
        slots, slots_checked = self.backend._slots(), time.monotonic()
        cancel_sent = force_sent = False
        try:
            while True:
                if time.monotonic() - slots_checked > 5:  # clusters grow and shrink (adaptive SLURM)
                    slots, slots_checked = self.backend._slots(), time.monotonic()
                limit = self.backend.config.max_in_flight if self.backend.config and self.backend.config.max_in_flight else slots
                self._fill(todo, completed, limit)
                self._drain_started()
                if self.cancel.is_set() and not cancel_sent:
                    cancel_sent = True
                    self._cancel_outstanding()
                if self.force.is_set() and not force_sent:
                    force_sent = True
                    self._tell_workers("force")
                if not self.in_flight:
                    break
                try:
                    wait(list(self.in_flight), timeout=self.backend.poll_s, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    pass
                done = [(f, self.in_flight.pop(f)) for f in completed.next_batch(block=False) if f in self.in_flight]
                outcomes = [(job, self._outcome(future, job)) for future, job in done]  # not in_flight: cancelled, recorded
                for job, outcome in outcomes:
                    if outcome.status == "lost":  # recorded before its retry claims the job again
                        self._finish(job, outcome)
                        self._queue_retry(job, todo)
                self._fill(todo, completed, limit)
                for job, outcome in outcomes:
                    if outcome.status != "lost":  # scored and stored off this loop: workers never wait for it
                        self.recording.append(self.recorder.submit(self._finish, job, outcome))
                self._check_recording()
        finally:
            self.recorder.shutdown(wait=True)
            self._check_recording()
            self.client.unsubscribe_topic(TOPIC_PREFIX + self.token)
            for future in self.in_flight:  # only after an unexpected error: leave nothing running
                future.cancel()
            self._tell_workers("forget")

    def _check_recording(self) -> None:
        """Re-raise here a failure to record (a store error must stop the run, as locally)."""
        for future in [f for f in self.recording if f.done()]:
            self.recording.remove(future)
            future.result()

    def _fill(self, todo: deque, completed, limit: int) -> None:
        while todo and not self.cancel.is_set() and len(self.in_flight) < limit:
            self._submit(todo.popleft(), completed)

    def _queue_retry(self, job: PlannedJob, todo: deque) -> None:
        if job.attempt < MAX_AUTO_ATTEMPTS and not self.cancel.is_set():
            with self.state.lock:
                self.state.total += 1  # each attempt is a unit of work in the progress
            todo.appendleft(PlannedJob(job.spec, job.job_id, job.attempt + 1, replace(job.payload, attempt=job.attempt + 1), job.data_path))

    def _submit(self, job: PlannedJob, completed) -> None:
        started_at = now_iso()
        if not self.sink.claim(job, started_at, self.backend.address):
            with self.state.lock:
                self.state.total -= 1  # another driver runs it
            return
        self.claimed_at[job.job_id] = started_at
        with self.state.lock:
            self.state.running[job.job_id] = (job, time.monotonic())
        self.on_change()
        payload = replace(job.payload, data_path=None, data_bytes=Path(job.data_path).read_bytes())
        future = self.client.submit(
            run_on_worker, payload, self.token,
            key=f"srtui-{job.job_id}-a{job.attempt}-{self.token[:8]}", pure=False, retries=0,
        )
        self.in_flight[future] = job
        completed.add(future)

    def _outcome(self, future, job: PlannedJob) -> JobOutcome:
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a task failure is a record, never a crash
            started_at = self.claimed_at.get(job.job_id, now_iso())
            if _is_lost(exc):
                self._sweep(job)
                return synthetic_outcome(job.job_id, job.attempt, "lost", f"the dask worker running it died: {type(exc).__name__}: {exc}", started_at)
            return synthetic_outcome(job.job_id, job.attempt, "error", f"dask task failed: {type(exc).__name__}: {exc}", started_at)

    def _finish(self, job: PlannedJob, outcome: JobOutcome) -> None:
        finish_job(job, outcome, self.sink, self.state, self.data_cache, self.on_change)

    def _drain_started(self) -> None:
        while self.started:
            msg = self.started.popleft()
            key = (msg.get("job_id"), msg.get("attempt"))
            self.started_keys.add(key)
            job = next((j for j in self.in_flight.values() if (j.job_id, j.attempt) == key), None)
            if job is not None and isinstance(msg.get("pid"), int):
                self.sink.started(job, msg["pid"])  # a pid on the worker's host

    def _cancel_outstanding(self) -> None:
        """Ctrl-C: running jobs are terminated on their workers (and come back 'interrupted');
        tasks that have not started are cancelled and recorded here."""
        self._tell_workers("cancel")
        self._drain_started()
        waiting = [f for f, j in self.in_flight.items() if (j.job_id, j.attempt) not in self.started_keys]
        if waiting:
            self.client.cancel(waiting)
        for future in waiting:
            job = self.in_flight.pop(future)
            self._finish(job, synthetic_outcome(job.job_id, job.attempt, "interrupted",
                                                "stopped by the driver (Ctrl-C) before it started", self.claimed_at.get(job.job_id, now_iso())))

    def _tell_workers(self, which: str) -> None:
        try:
            if which == "forget":
                self.client.run(forget_run, self.token)
            else:
                self.client.run(signal_run, self.token, which)
        except Exception:  # noqa: BLE001 - a worker that is gone has no job to stop
            pass

    def _sweep(self, job: PlannedJob) -> None:
        """Kill what a dead worker's job left behind (escaped processes whose worker is gone):
        every live worker sweeps its host, and so does the driver for a local cluster."""
        prefix = job.payload.workspace_token + ":"
        try:
            self.client.run(proctree.sweep_orphans, prefix)
        except Exception:  # noqa: BLE001
            pass
        if self.backend.config is not None and self.backend.config.kind == "local":
            proctree.sweep_orphans(prefix)
