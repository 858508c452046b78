"""One run on the Dask backend, driver side: claim, submit, collect, record (see srtui.engine.backends.dask).

The calling thread claims jobs in the store and submits them; one recorder thread scores and
records finished attempts (lost ones are recorded before their retry). Every two seconds the
backend tends its cluster (SLURM jobs replaced, the wait for workers bounded) and the store learns
how many workers there are, for `srtui status`.
"""

from __future__ import annotations

import concurrent.futures
import time
import uuid
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from srtui.engine.backends.base import (
    BackendError,
    Batch,
    ClusterLost,
    DataCache,
    FollowUp,
    PlannedJob,
    SinkError,
    finish_job,
)
from srtui.engine.backends.dask_worker import (
    TOPIC_PREFIX,
    forget_run,
    run_follow_up,
    run_on_worker,
    signal_run,
    sweep_host,
    synthetic_outcome,
)
from srtui.engine.process.job_io import JobOutcome, now_iso
from srtui.engine.spec import MAX_AUTO_ATTEMPTS
from srtui.engine.task_files import job_data

if TYPE_CHECKING:
    from distributed import Future, as_completed

    from srtui.engine.backends.dask import DaskBackend

#: an attempt whose worker left before starting it is sent again this often, then counted lost
MAX_FREE_REQUEUES = 5
#: most follow-ups (jobs' metrics) in one Dask task
MAX_FOLLOW_UP_BATCH = 8


def follow_up_batch(pending: int, slots: int) -> int:
    """Follow-ups per Dask task: enough that a task's overhead (a round trip, the worker's
    processes for it) is shared, few enough that every slot gets about three tasks of what is
    queued, so the last ones end together."""
    return max(1, min(MAX_FOLLOW_UP_BATCH, pending // max(1, 3 * slots)))


def _is_lost(exc: BaseException) -> bool:
    """Did the attempt die with its worker or connection (retry), rather than fail (record)?"""
    import asyncio

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    lost = (
        KilledWorker,
        CommClosedError,
        OSError,
        asyncio.CancelledError,
        concurrent.futures.CancelledError,
        TimeoutError,
    )
    return isinstance(exc, lost) or type(exc).__name__ in ("FutureCancelledError", "CancelledError")


class DaskRun:
    """One run's bookkeeping on the driver: the calling thread claims and submits, one recorder
    thread scores and records finished attempts (lost ones are recorded before their retry)."""

    def __init__(self, backend: DaskBackend, batch: Batch) -> None:
        self.backend, self.client = backend, backend.client
        self.follow_ups = batch.follow_ups
        self.units: dict[Any, FollowUp] = {}  # future -> follow-up (a job's metrics) on a worker
        self.sink, self.state, self.cancel, self.force = batch.sink, batch.state, batch.cancel, batch.force
        self.on_change = batch.on_change or (lambda: None)
        self.token = uuid.uuid4().hex
        self.data_cache = DataCache()
        self.in_flight: dict[Any, PlannedJob] = {}  # future -> job
        self.claimed_at: dict[str, str] = {}
        self.started: deque[Any] = deque()  # (job_id, attempt, pid) from the workers' start events
        self.started_keys: set[tuple[str, int]] = set()
        # one recorder thread: scoring (the first parse imports sympy) and SQLite writes happen
        # beside the loop that feeds the workers; the sink is thread-safe (LocalBackend's slots)
        self.recorder = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="srtui-dask-record")
        self.recording: list[concurrent.futures.Future[Any]] = []
        self.sends: dict[tuple[str, int], int] = {}  # times each attempt was handed to the scheduler
        self.workers_shown: tuple[int, int] | None = None
        self.claimed_lost: list[str] = []  # jobs recorded lost when the scheduler went away

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
        except Exception as exc:
            if not self._scheduler_lost(exc):
                raise
            why = f"lost the {self.backend.where} mid-run"
            self._abort(why, status="lost")
            n = len(self.claimed_lost)
            raise ClusterLost(f"{why}: {n} running job(s) recorded lost, run again by the next run") from None
        finally:
            self.recorder.shutdown(wait=True)
            self.data_cache.close()
            self._check_recording()
            try:
                self.client.unsubscribe_topic(TOPIC_PREFIX + self.token)
            except Exception:  # noqa: BLE001 - a closed client has no subscription left
                pass
            for future in [*self.in_flight, *self.units]:  # only after an unexpected error: leave nothing running
                future.cancel()
            self._tell_workers("forget")

    def _loop(self, todo: deque[PlannedJob], completed: as_completed) -> None:
        from distributed import wait

        cancel_sent = force_sent = False
        tended, limit = 0.0, 1
        while True:
            if time.monotonic() - tended > 2:  # clusters grow and shrink (SLURM jobs come and go)
                tended, limit = time.monotonic(), self._tend(len(todo) + len(self.in_flight))
            self._fill(todo, completed, limit)
            self._fill_follow_ups(todo, completed, limit)
            self._drain_started()
            if self.cancel.is_set() and not cancel_sent:
                cancel_sent = True
                self._cancel_outstanding()
            if self.force.is_set() and not force_sent:
                force_sent = True
                self._tell_workers("force")
            if not self.in_flight and not self.units:
                if not self._recording_follow_ups():
                    break
                time.sleep(self.backend.poll_s)  # a job being recorded may still queue its metrics
                self._check_recording()
                continue
            try:
                wait([*self.in_flight, *self.units], timeout=self.backend.poll_s, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            self._drain_started()
            batch = completed.next_batch(block=False)
            for future in [f for f in batch if f in self.units]:
                unit = self.units.pop(future)
                self.recording.append(self.recorder.submit(self._record_follow_up, future, unit))
            done = [(f, self.in_flight.pop(f)) for f in batch if f in self.in_flight]
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
            self.sink.workers(live, expected)
        config = self.backend.config
        return config.max_in_flight if config and config.max_in_flight else self.backend.slots()

    def _abort(self, why: str, status: str = "interrupted") -> None:
        """Record every claimed job as ``status`` (interrupted or lost: resumed by the next run)
        with the cause."""
        if self.in_flight:
            try:
                self.client.cancel(list(self.in_flight))
            except Exception:  # noqa: BLE001 - a client whose scheduler is gone cancels nothing
                pass
        for future, job in list(self.in_flight.items()):
            del self.in_flight[future]
            if status == "lost":
                self.claimed_lost.append(job.job_id)
            cause = why if status == "lost" else f"the cluster failed: {why}"
            started = self.claimed_at.get(job.job_id, now_iso())
            self._finish(job, synthetic_outcome(job.job_id, job.attempt, status, cause, started))

    def _scheduler_lost(self, exc: BaseException) -> bool:
        """Is ``exc`` the client's connection to the scheduler gone (not a failure of srtui's)?"""
        if "scheduler-connection-lost" in str(exc) or type(exc).__name__ == "FuturesCancelledError":
            return True
        return _is_lost(exc) and getattr(self.client, "status", "running") != "running"

    def _check_recording(self) -> None:
        """Re-raise here a failure to record (a store error must stop the run, as locally)."""
        for future in [f for f in self.recording if f.done()]:
            self.recording.remove(future)
            future.result()

    def _fill(self, todo: deque[PlannedJob], completed: as_completed, limit: int) -> None:
        while todo and not self.cancel.is_set() and len(self.in_flight) < limit:
            self._submit(todo.popleft(), completed)

    def _recording_follow_ups(self) -> bool:
        """Is a recording under way that may queue follow-ups (only then is the run not over)?"""
        return self.follow_ups is not None and not self.cancel.is_set() and any(not f.done() for f in self.recording)

    def _fill_follow_ups(self, todo: deque[PlannedJob], completed: as_completed, limit: int) -> None:
        """Follow-ups go to the workers behind the jobs: only when no job is left to submit."""
        if self.follow_ups is None:
            return
        while (
            not todo
            and not self.cancel.is_set()
            and self.state.failure is None
            and len(self.in_flight) + len(self.units) < limit
        ):
            unit = self.follow_ups.take(follow_up_batch(self.follow_ups.pending, limit))
            if unit is None:
                return
            future = self.client.submit(
                run_follow_up, unit, key=f"srtui-metrics-{uuid.uuid4().hex}", pure=False, retries=0, priority=-1
            )
            self.units[future] = unit
            completed.add(future)

    def _record_follow_up(self, future: Future[Any], unit: FollowUp) -> None:
        assert self.follow_ups is not None  # only submitted with a queue to record into
        try:
            result = future.result()
        except Exception as exc:  # noqa: BLE001 - a lost worker or a failure: queued again
            self.follow_ups.give_back(unit, f"{type(exc).__name__}: {exc}")
            return
        try:
            self.follow_ups.record(unit, result)
        except SinkError as exc:  # the store cannot record: the run stops, as for a job
            self.state.fail(str(exc))
        self.on_change()

    def _queue_retry(self, job: PlannedJob, todo: deque[PlannedJob]) -> None:
        if job.attempt < MAX_AUTO_ATTEMPTS and not self.cancel.is_set():
            with self.state.lock:
                self.state.total += 1  # each attempt is a unit of work in the progress
            todo.appendleft(PlannedJob(replace(job.payload, attempt=job.attempt + 1)))

    def _submit(self, job: PlannedJob, completed: as_completed) -> None:
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

    def _send(self, job: PlannedJob, completed: as_completed) -> None:
        """Hand a claimed job to the scheduler (again, after its worker retired)."""
        self.sends[(job.job_id, job.attempt)] = self.sends.get((job.job_id, job.attempt), 0) + 1
        payload = replace(job.payload, data_path=None, data_bytes=job_data(job.data_path))
        future = self.client.submit(
            run_on_worker,
            payload,
            self.token,
            key=f"srtui-{job.job_id}-a{job.attempt}-{self.token[:8]}-{self.sends[(job.job_id, job.attempt)]}",
            pure=False,
            retries=0,
        )
        self.in_flight[future] = job
        completed.add(future)

    def _outcome(self, future: Future[JobOutcome], job: PlannedJob) -> JobOutcome:
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a task failure is a record, never a crash
            started_at = self.claimed_at.get(job.job_id, now_iso())
            if _is_lost(exc):
                key = (job.job_id, job.attempt)
                if (
                    key not in self.started_keys
                    and self.sends.get(key, 0) < MAX_FREE_REQUEUES
                    and not self.cancel.is_set()
                ):
                    return synthetic_outcome(
                        job.job_id, job.attempt, "requeue", "its worker left before starting it", started_at
                    )
                self._sweep(job)
                return synthetic_outcome(
                    job.job_id,
                    job.attempt,
                    "lost",
                    f"the dask worker running it died: {type(exc).__name__}: {exc}",
                    started_at,
                )
            return synthetic_outcome(
                job.job_id, job.attempt, "error", f"dask task failed: {type(exc).__name__}: {exc}", started_at
            )

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
        if self.units:  # metrics are computed again by the next run
            self.client.cancel(list(self.units))
            self.units.clear()
        if waiting:
            self.client.cancel(waiting)
        for future in waiting:
            job = self.in_flight.pop(future)
            self._finish(
                job,
                synthetic_outcome(
                    job.job_id,
                    job.attempt,
                    "interrupted",
                    "stopped by the driver (Ctrl-C) before it started",
                    self.claimed_at.get(job.job_id, now_iso()),
                ),
            )

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
        token = job.payload.workspace_token
        try:
            self.client.run(sweep_host, token)
        except Exception:  # noqa: BLE001
            pass
        if self.backend.config is not None and self.backend.config.kind == "local":
            sweep_host(token)
