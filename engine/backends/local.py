"""The local backend, and what every backend does with a returned outcome (score, record, count).

The local backend runs ``--jobs N`` slot threads, each pinned to one usable core, each running
the backend-independent job function (engine.launcher.run_job) and handing the outcome to a
sink (the store). Slot threads live for the whole run: a job's parent-death signal fires when
the *thread* that spawned it exits, so short-lived spawning threads would kill healthy jobs.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from itertools import zip_longest
from pathlib import Path

from engine.backends.base import JobSink, PlannedJob, RunState, SinkError
from engine.evaluate import TaskArrays, evaluate_outcome
from engine.launcher import JobOutcome, now_iso, run_job
from engine.scaling import SCALING_KEY, Scaling, data_arrays
from engine.spec import JobSpec


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
    """Task arrays for evaluation, loaded once per data file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[str, TaskArrays] = {}

    def get(self, path: str) -> TaskArrays:
        with self._lock:
            if path not in self._data:
                self._data[path] = TaskArrays.load(path)
            return self._data[path]


def evaluate(job: PlannedJob, outcome: JobOutcome, cache: DataCache) -> dict[str, object]:
    try:
        data = cache.get(job.data_path)
        option = (job.spec.params or {}).get(SCALING_KEY)
        return evaluate_outcome(outcome, data, Scaling.for_job(option, data_arrays(data)) if option else None)
    except Exception as exc:  # noqa: BLE001 - a scoring bug must not lose the job's record
        outcome.status, outcome.error = "error", f"srtui failed to score the result: {type(exc).__name__}: {exc}"
        return {}


def finish_job(
    job: PlannedJob,
    outcome: JobOutcome,
    sink: JobSink,
    state: RunState,
    cache: DataCache,
    on_change: Callable[[], None] | None = None,
) -> None:
    """What every backend does with a returned outcome: score it, record it, count it.
    A sink that cannot record stops the run (state.failure) instead of killing the caller."""
    fields = evaluate(job, outcome, cache)
    status = outcome.status
    try:
        sink.finished(job, outcome, fields)
    except SinkError as exc:
        state.fail(str(exc))
        if not exc.recorded:
            status = "interrupted"  # the sink marks it so where it still can
    with state.lock:
        state.running.pop(job.job_id, None)
        state.counts[status] += 1
        state.finished.append((job, status, outcome.wall_s))
        if outcome.status != "ok":
            state.recent_failures = ([*state.recent_failures, (job, outcome)])[-10:]
    if on_change:
        on_change()


class LocalBackend:
    """N slot threads on this machine, one core each."""

    name = "local"

    def __init__(self, n_slots: int, scratch_root: Path) -> None:
        self.n_slots = max(1, n_slots)
        self.scratch_root = scratch_root
        self.cores = usable_cores()

    def prepare(self, specs: list[JobSpec]) -> None:
        """Nothing to start: the slots are threads of this process, made by ``run``."""

    def close(self) -> None:
        """Nothing to release: ``run`` returns only once every slot thread has ended."""

    def run(
        self,
        jobs: list[PlannedJob],
        sink: JobSink,
        state: RunState,
        cancel: threading.Event,
        force: threading.Event,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        todo: queue.SimpleQueue[PlannedJob] = queue.SimpleQueue()
        for job in interleave(jobs):
            todo.put(job)
        data_cache = DataCache()

        def slot(index: int) -> None:
            core = self.cores[index % len(self.cores)] if self.cores else None
            while not cancel.is_set() and state.failure is None:
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    self._run_one(job, core, sink, state, cancel, force, data_cache, on_change)
                except (SinkError, OSError) as exc:  # the slot survives; the run stops
                    state.fail(str(exc) if isinstance(exc, SinkError) else f"cannot write the workspace: {exc}")

        threads = [
            threading.Thread(target=slot, args=(i,), name=f"srtui-slot-{i}", daemon=True) for i in range(self.n_slots)
        ]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.2)  # short joins keep the main thread responsive to Ctrl-C

    def _run_one(
        self,
        job: PlannedJob,
        core: int | None,
        sink: JobSink,
        state: RunState,
        cancel: threading.Event,
        force: threading.Event,
        data_cache: DataCache,
        on_change: Callable[[], None] | None,
    ) -> None:
        if not sink.claim(job, now_iso(), os.uname().nodename):
            with state.lock:
                state.total -= 1  # another driver runs it
            return
        with state.lock:
            state.running[job.job_id] = (job, time.monotonic())
        if on_change:
            on_change()
        try:
            outcome = run_job(
                job.payload,
                self.scratch_root / f"{job.job_id}-a{job.attempt}",
                core=core,
                cancel=cancel,
                force=force,
                on_start=lambda pid: sink.started(job, pid),
            )
        except OSError as exc:  # its scratch directory cannot be written: the disk is full
            outcome = JobOutcome(
                job.job_id,
                job.attempt,
                "interrupted",
                os.uname().nodename,
                now_iso(),
                now_iso(),
                0.0,
                error=f"cannot prepare the job: {exc}",
            )
            state.fail(f"cannot write the workspace: {exc}")
        finish_job(job, outcome, sink, state, data_cache, on_change)
