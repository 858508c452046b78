"""The Dask backend: each job is one Dask task that runs engine.launcher.run_job on a worker.

Driver side (``DaskBackend.run``): claim a job in the store, submit it with an explicit key
(never Dask's ``pure`` de-duplication), keep at most ``max_in_flight`` tasks out, collect them
through ``as_completed(...).add(...)``, score and record each outcome here - the driver stays
the only writer of the workspace. A worker that dies mid-job raises KilledWorker (the scheduler
runs with allowed-failures = 0): the attempt is recorded ``lost`` and the job resubmitted as
attempt + 1, up to engine.spec.MAX_AUTO_ATTEMPTS; a job whose worker left before starting it
(retired at its lifetime) goes back to the queue as the same attempt.

Every cluster start has a deadline and can be interrupted (engine.backends.dask_start); SLURM
worker jobs are submitted and watched by srtui (engine.backends.slurm_jobs). The worker side
is engine.backends.dask_worker.
"""

from __future__ import annotations

import concurrent.futures
import math
import sys
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
    load_cluster_config,
    local_kwargs,
    slurm_kwargs,
    ssh_kwargs,
)
from engine.backends.dask_start import (
    SSH_TOKEN_ENV,
    StartInterrupted,
    check_port_free,
    route_dask_logs,
    start_within,
    sweep_ssh_hosts,
)
from engine.backends.dask_worker import (
    TOPIC_PREFIX,
    allowed_failures,
    forget_run,
    run_on_worker,
    signal_run,
    synthetic_outcome,
    worker_ready,
)
from engine.backends.slurm_jobs import SlurmJobs, default_log_dir
from engine.launcher import JobOutcome, now_iso
from engine.scheduler import DataCache, JobSink, PlannedJob, RunState, finish_job, interleave
from engine.spec import MAX_AUTO_ATTEMPTS, JobSpec

__all__ = ["DaskBackend", "StartInterrupted"]

#: an attempt whose worker left before starting it is sent again this often, then counted lost
MAX_FREE_REQUEUES = 5

def _is_lost(exc: BaseException) -> bool:
    """Did the attempt die with its worker or connection (retry), rather than fail (record)?"""
    import asyncio

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    lost = (KilledWorker, CommClosedError, OSError, asyncio.CancelledError, concurrent.futures.CancelledError, TimeoutError)
    return isinstance(exc, lost) or type(exc).__name__ in ("FutureCancelledError", "CancelledError")


def _first_line(exc: BaseException) -> str:
    """The innermost cause, in one line (Dask wraps it: 'Cluster failed to start: ...')."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


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
        self.config: ClusterConfig | None = None if options.scheduler else load_cluster_config(options.cluster, options.cluster_config)
        self.cluster = None
        self.client = None
        self.slurm: SlurmJobs | None = None
        self.keep_open = False  # tests and benchmarks reuse one cluster across runs
        self.poll_s = 0.2
        self.recent = None  # Dask's last log lines, to quote a failure's cause
        self.seen_workers: set[str] = set()
        self.started = time.monotonic()

    @property
    def address(self) -> str:
        return self.options.scheduler or (self.cluster.scheduler_address if self.cluster else "")

    @property
    def kind(self) -> str:
        return self.config.kind if self.config else "scheduler"

    @property
    def where(self) -> str:
        return f"dask scheduler at {self.options.scheduler}" if self.options.scheduler else f"dask {self.kind} cluster"

    def expected_slots(self) -> int:
        return self.config.expected_slots() if self.config else 0

    # set-up ------------------------------------------------------------------------------------

    def prepare(self, specs: list[JobSpec]) -> None:
        """Check the jobs fit the cluster (SLURM walltime and memory), then start it if not yet
        up; BackendError before any job is submitted (and before anything is stored: the
        runner calls this before opening the store)."""
        if self.config is not None:
            check_limits(self.config, [s.limits for s in specs])
        if self.client is None:
            self._connect()

    def _connect(self) -> None:
        self.recent = route_dask_logs(self.options.log_path)
        token = uuid.uuid4().hex
        timeout = self.config.start_timeout if self.config else 60.0
        try:
            start_within(lambda: self._start(token), what=self.where, timeout=timeout, cancel=self.options.cancel,
                         cause=self._start_cause, abandon=lambda: self._abandon(token))
            if self.kind == "slurm":
                self._submit_slurm_jobs()
        except BackendError:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - any start-up failure is one line for the CLI
            self.close()
            cause = self.recent.cause() if self.recent else ""
            detail = _first_line(exc)
            if cause and (detail.endswith("Worker failed to start") or ":" not in detail):
                detail = cause  # Dask's 'Worker failed to start' hides the remote error
            raise BackendError(f"cannot use the {self.where}: {detail}") from None
        self.started = time.monotonic()

    def _start(self, token: str) -> None:
        """Runs in the start thread: the cluster, the client, the checks of the workers."""
        import dask
        from distributed import Client

        with dask.config.set(SCHEDULER_CONFIG):
            if self.config is None:
                self.client = Client(self.options.scheduler, timeout="10s")
            else:
                self.cluster = self._start_cluster(self.config, token)
                self.client = Client(self.cluster, timeout="30s")
        if self.config is None:
            failures = self.client.run_on_scheduler(allowed_failures)
            if failures != 0:
                raise BackendError(
                    f"the {self.where} re-runs tasks of dead workers (allowed-failures = {failures}); start it with "
                    "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 so srtui records and retries lost jobs itself"
                )
        if self.client.nthreads():
            self.client.run(worker_ready)

    def _start_cluster(self, config: ClusterConfig, token: str):
        if config.kind == "local":
            import logging

            from distributed import LocalCluster

            kwargs = local_kwargs(config, self.options.n_slots)
            return LocalCluster(**kwargs, preload=["engine.backends.dask_worker"], silence_logs=logging.CRITICAL)
        if config.kind == "ssh":
            try:
                import asyncssh  # noqa: F401
            except ImportError:
                raise BackendError("--cluster ssh needs asyncssh (pip install asyncssh)") from None
            from distributed import SSHCluster

            kwargs = ssh_kwargs(config)
            options = kwargs["scheduler_options"]
            check_port_free(options["host"], int(options["port"]), "scheduler")
            # every remote process carries the token: a start abandoned mid-way can be swept
            kwargs["remote_python"] = f"{SSH_TOKEN_ENV}={token} {kwargs.get('remote_python') or sys.executable}"
            return SSHCluster(**kwargs)
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise BackendError("--cluster slurm needs dask-jobqueue (pip install dask-jobqueue)") from None
        kwargs, _ = slurm_kwargs(config)
        options = kwargs["scheduler_options"]
        check_port_free(options.get("host", "127.0.0.1"), int(options["port"]), "scheduler")
        kwargs.setdefault("log_directory", str(default_log_dir(self.scratch_root)))
        return SLURMCluster(**kwargs)

    def _submit_slurm_jobs(self) -> None:
        kwargs, scale = slurm_kwargs(self.config)
        log_dir = Path(self.config.settings.get("log_directory") or default_log_dir(self.scratch_root))
        self.slurm = SlurmJobs(self.cluster.job_script(), log_dir, scale.get("jobs", scale.get("minimum_jobs", 1)),
                               self.config.worker_timeout, f"srtui-{uuid.uuid4().hex[:6]}")
        self.slurm.fill()

    def _start_cause(self) -> str:
        cause = self.recent.cause() if self.recent else ""
        if cause or self.config is None or self.config.kind != "ssh":
            return cause
        s = self.config.settings
        return f"no answer from {', '.join(dict.fromkeys(s['hosts']))} (is remote_python {s.get('remote_python', sys.executable)} right?)"

    def _abandon(self, token: str) -> None:
        """A start that never returned: sweep what it spawned on the SSH hosts."""
        if self.config is not None and self.config.kind == "ssh":
            kwargs = ssh_kwargs(self.config)
            sweep_ssh_hosts(kwargs["hosts"], kwargs["connect_options"], token)

    def close(self) -> None:
        if self.slurm is not None:
            self.slurm.cancel_all()
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # noqa: BLE001 - closing a broken cluster must not hide the real error
                    pass
        self.client = self.cluster = self.slurm = None

    # during the run ----------------------------------------------------------------------------

    def workers(self) -> list[str]:
        names = [str(w.get("name", addr)) for addr, w in self.client.scheduler_info(n_workers=-1).get("workers", {}).items()]
        self.seen_workers.update(names)
        return names

    def slots(self) -> int:
        live = sum(self.client.nthreads().values())
        return max(live, self.expected_slots(), 1)

    def tend(self, remaining: int) -> tuple[int, int]:
        """Keep the cluster serving the run: SLURM jobs replaced while ``remaining`` jobs are
        left, a deadline on the wait for a first worker. Returns (live workers, expected)."""
        live = self.workers()
        expected = self.expected_slots() or len(live)
        if self.slurm is not None:
            kwargs, scale = slurm_kwargs(self.config)
            cores = int(kwargs["cores"])
            low, high = (scale["jobs"], scale["jobs"]) if "jobs" in scale else (scale["minimum_jobs"], scale["maximum_jobs"])
            self.slurm.target = min(high, max(low, math.ceil(remaining / cores))) if remaining else 0
            self.slurm.tend(sorted(self.seen_workers), remaining > 0)
        elif not self.seen_workers and time.monotonic() - self.started > (self.config.worker_timeout if self.config else 60.0):
            raise BackendError(f"no worker joined the {self.where} within {self.config.worker_timeout if self.config else 60:g} s")
        return len(live), expected

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
        self.sends: dict[tuple[str, int], int] = {}  # times each attempt was handed to the scheduler
        self.workers_shown: tuple[int, int] | None = None

    def run(self, jobs: list[PlannedJob]) -> None:
        from distributed import as_completed

        todo = deque(jobs)
        self.client.subscribe_topic(TOPIC_PREFIX + self.token, lambda event: self.started.append(event[1]))
        completed = as_completed()
        try:
            self._loop(todo, completed)
        except BackendError as exc:  # the cluster failed for good: nothing claimed stays 'running'
            self._abort(str(exc))
            raise
        finally:
            self.recorder.shutdown(wait=True)
            self._check_recording()
            try:
                self.client.unsubscribe_topic(TOPIC_PREFIX + self.token)
            except Exception:  # noqa: BLE001 - a closed client has no subscription left
                pass
            for future in self.in_flight:  # only after an unexpected error: leave nothing running
                future.cancel()
            self._tell_workers("forget")

    def _loop(self, todo: deque, completed) -> None:
        from distributed import wait

        cancel_sent = force_sent = False
        tended, limit = 0.0, 1
        while True:
            if time.monotonic() - tended > 2:  # clusters grow and shrink (SLURM jobs come and go)
                tended, limit = time.monotonic(), self._tend(len(todo) + len(self.in_flight))
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
            self._drain_started()
            done = [(f, self.in_flight.pop(f)) for f in completed.next_batch(block=False) if f in self.in_flight]
            outcomes = [(job, self._outcome(future, job)) for future, job in done]  # not in_flight: cancelled, recorded
            for job, outcome in outcomes:
                if outcome.status == "requeue":  # its worker left before starting it: same attempt
                    self._send(job, completed)
                elif outcome.status == "lost":  # recorded before its retry claims the job again
                    self._finish(job, outcome)
                    self._queue_retry(job, todo)
            self._fill(todo, completed, limit)
            for job, outcome in outcomes:
                if outcome.status not in ("lost", "requeue"):  # scored and stored off this loop
                    self.recording.append(self.recorder.submit(self._finish, job, outcome))
            self._check_recording()

    def _tend(self, remaining: int) -> int:
        """Let the backend keep the cluster up, tell the store how many workers there are;
        returns how many tasks may be out at once."""
        live, expected = self.backend.tend(0 if self.cancel.is_set() else remaining)
        if (live, expected) != self.workers_shown:
            self.workers_shown = (live, expected)
            report = getattr(self.sink, "workers", None)
            if report is not None:
                report(live, expected)
        config = self.backend.config
        return config.max_in_flight if config and config.max_in_flight else self.backend.slots()

    def _abort(self, why: str) -> None:
        """Record every claimed job as interrupted (resumed by the next run) with the cause."""
        if self.in_flight:
            self.client.cancel(list(self.in_flight))
        for future, job in list(self.in_flight.items()):
            del self.in_flight[future]
            self._finish(job, synthetic_outcome(job.job_id, job.attempt, "interrupted", f"the cluster failed: {why}",
                                                self.claimed_at.get(job.job_id, now_iso())))

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
        self._send(job, completed)

    def _send(self, job: PlannedJob, completed) -> None:
        """Hand a claimed job to the scheduler (again, after its worker retired)."""
        self.sends[(job.job_id, job.attempt)] = self.sends.get((job.job_id, job.attempt), 0) + 1
        payload = replace(job.payload, data_path=None, data_bytes=Path(job.data_path).read_bytes())
        future = self.client.submit(
            run_on_worker, payload, self.token,
            key=f"srtui-{job.job_id}-a{job.attempt}-{self.token[:8]}-{self.sends[(job.job_id, job.attempt)]}", pure=False, retries=0,
        )
        self.in_flight[future] = job
        completed.add(future)

    def _outcome(self, future, job: PlannedJob) -> JobOutcome:
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a task failure is a record, never a crash
            started_at = self.claimed_at.get(job.job_id, now_iso())
            if _is_lost(exc):
                key = (job.job_id, job.attempt)
                if key not in self.started_keys and self.sends.get(key, 0) < MAX_FREE_REQUEUES and not self.cancel.is_set():
                    return synthetic_outcome(job.job_id, job.attempt, "requeue", "its worker left before starting it", started_at)
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
