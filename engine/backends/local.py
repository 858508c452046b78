"""The local backend: ``--jobs N`` slot threads on this machine.

Each slot thread is pinned to one usable core, runs the backend-independent job function
(srtui.engine.process.supervise.run_job) and hands the outcome to ``finish_job`` (srtui.engine.backends.base:
score), which hands it to the run's recorder (srtui.engine.backends.recorder: recorded with the other
jobs finished meanwhile in one commit, then counted); the slot starts its next job. Slot threads
live for the whole run: a job's parent-death signal fires when the *thread* that spawned it
exits, so short-lived spawning threads would kill healthy jobs.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from srtui.engine.backends.base import (
    Batch,
    DataCache,
    PlannedJob,
    SinkError,
    failed_outcome,
    fault,
    finish_job,
    interleave,
    usable_cores,
)
from srtui.engine.backends.recorder import Recorder
from srtui.engine.process import phases
from srtui.engine.process.job_io import JobOutcome, JobPayload, now_iso
from srtui.engine.process.supervise import run_job
from srtui.engine.spec import JobSpec
from srtui.engine.task_files import TASK_FILES
from srtui.engine.untrusted import UntrustedFileError, real_dir, remove_tree


def own_data(job: PlannedJob) -> JobPayload:
    """The job's payload with a copy of its data of its own (srtui.engine.task_files): the shared file
    is checked first and made true again if an earlier job changed it."""
    true = TASK_FILES.checked(job.data_path)
    return job.payload if true is None else replace(job.payload, data_path=None, data_bytes=true)


#: after Ctrl-C, how long past the grace period slots may take to record their jobs (and after a
#: second Ctrl-C, past the kill); a slot still blocked then is left behind: its job is recorded
#: `lost` by the next run, and the driver ends (slot threads are daemons, jobs die with it)
STOP_MARGIN_S = 10.0
FORCE_MARGIN_S = 2.0


def _join(threads: list[threading.Thread], cancel: threading.Event, force: threading.Event, grace: float) -> None:
    """Wait for the slots; once stopping, only as long as the grace period allows."""
    stop_by: float | None = None
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=0.2)  # short joins keep the main thread responsive to Ctrl-C
        now = time.monotonic()
        if force.is_set():
            stop_by = min(stop_by or now + FORCE_MARGIN_S, now + FORCE_MARGIN_S)
        elif cancel.is_set() and stop_by is None:
            stop_by = now + grace + STOP_MARGIN_S
        if stop_by is not None and now > stop_by:
            return


class LocalBackend:
    """N slot threads on this machine, one core each."""

    name = "local"

    def __init__(self, n_slots: int, scratch_root: Path) -> None:
        self.n_slots = max(1, n_slots)
        self.scratch_root = scratch_root
        self.cores = usable_cores()

    def prepare(self, specs: list[JobSpec]) -> None:
        """Nothing to start: the slots are threads of this process, made by ``run``."""

    def warm_up(self, fn: Callable[[int | None], object]) -> None:
        """Nothing: the slots are this process's threads, which start what they need on first use."""

    def close(self) -> None:
        """Nothing to release: ``run`` returns only once every slot thread has ended."""

    def run(self, jobs: list[PlannedJob], batch: Batch) -> None:
        todo: queue.SimpleQueue[PlannedJob] = queue.SimpleQueue()
        for job in interleave(jobs):
            todo.put(job)
        data_cache = DataCache()
        recorder = Recorder(batch.sink, batch.state, batch.on_change)

        def slot(index: int) -> None:
            core = self.cores[index % len(self.cores)] if self.cores else None
            while not batch.cancel.is_set() and batch.state.failure is None:
                try:
                    fault("next")
                    if not self._next(todo, core, index, batch, data_cache, recorder):
                        return
                except (SinkError, OSError) as exc:  # the slot survives; the run stops
                    batch.state.fail(str(exc) if isinstance(exc, SinkError) else f"cannot write the workspace: {exc}")
                except Exception as exc:  # noqa: BLE001 - outside any job: the run stops in one line
                    batch.state.fail(f"srtui failed in slot {index}: {type(exc).__name__}: {exc}")

        threads = [
            threading.Thread(target=slot, args=(i,), name=f"srtui-slot-{i}", daemon=True) for i in range(self.n_slots)
        ]
        for t in threads:
            t.start()
        grace = max((job.spec.limits.grace_s for job in jobs), default=0.0)
        try:
            _join(threads, batch.cancel, batch.force, grace)
        finally:
            # every job a slot finished is recorded before the run goes on (or ends); after
            # Ctrl-C a recorder stuck (a hung disk) is waited for as long as a slot would be
            recorder.close()
            _join([recorder.thread], batch.cancel, batch.force, grace)
            data_cache.close()

    def _next(
        self,
        todo: queue.SimpleQueue[PlannedJob],
        core: int | None,
        index: int,
        batch: Batch,
        data_cache: DataCache,
        recorder: Recorder,
    ) -> bool:
        """One step of a slot: the next job; with none left to start, the next follow-up; with
        none queued, a short wait while jobs still run (they may leave one). False: done."""
        try:
            job = todo.get_nowait()
        except queue.Empty:
            job = None
        if job is not None:
            self._run_one(job, core, batch, data_cache, recorder)
            return True
        follow_ups = batch.follow_ups
        unit = follow_ups.take() if follow_ups is not None else None
        if follow_ups is not None and unit is not None:
            try:
                result = unit.compute(core, f"{os.uname().nodename} slot {index}", keep=True)
            except Exception as exc:  # noqa: BLE001 - a follow-up that fails is queued again, never the slot's end
                follow_ups.give_back(unit, f"{type(exc).__name__}: {exc}")
                return True
            follow_ups.record(unit, result)
            return True
        with batch.state.lock:
            running = bool(batch.state.running)
        if follow_ups is None or not running:
            return False
        time.sleep(0.1)
        return True

    def _run_one(
        self, job: PlannedJob, core: int | None, batch: Batch, data_cache: DataCache, recorder: Recorder
    ) -> None:
        """One job from claim to record. Whatever fails on the way (a bug, a scratch dir that
        cannot be removed) makes this job an ``error`` with the reason; the slot goes on."""
        sink, state, on_change = batch.sink, batch.state, batch.on_change
        phases.begin()
        try:
            fault("claim")
            if not sink.claim(job, now_iso(), os.uname().nodename):
                with state.lock:
                    state.total -= 1  # another driver runs it
                return
            with state.lock:
                state.running[job.job_id] = (job, time.monotonic())
            if on_change:
                on_change()
            outcome = self._attempt(job, core, batch)
        except SinkError as exc:  # the store cannot record: the run stops, the job is retried
            state.fail(str(exc))
            outcome = failed_outcome(job, f"not recorded: {exc}", "interrupted")
        except Exception as exc:  # noqa: BLE001 - the job's error, never the slot's end
            outcome = failed_outcome(job, f"srtui failed running the job: {type(exc).__name__}: {exc}")
        try:
            fault("finish")
            finish_job(job, outcome, sink, state, data_cache, on_change, recorder)
        except Exception as exc:  # noqa: BLE001 - recorded as the job's error, once more
            why = f"srtui failed recording the job: {type(exc).__name__}: {exc}"
            with state.lock:
                pending = job.job_id in state.running
            if pending:
                finish_job(job, failed_outcome(job, why), sink, state, data_cache, on_change, recorder)
        phases.end(job.job_id)

    def _attempt(self, job: PlannedJob, core: int | None, batch: Batch) -> JobOutcome:
        """The job run in its scratch dir, which is then removed (a job whose scratch cannot be
        removed in bounded time is an error saying so)."""
        scratch = self.scratch_root / f"{job.job_id}-a{job.attempt}"
        phases.mark("claimed")
        try:
            fault("run")
            payload = own_data(job)
            phases.mark("task file checked")
            outcome = run_job(
                payload,
                scratch,
                core=core,
                cancel=batch.cancel,
                force=batch.force,
                on_start=lambda pid: batch.sink.started(job, pid),
                record=real_dir(self.scratch_root.parent / "pids") / f"{job.job_id}-a{job.attempt}",
            )
        except (OSError, UntrustedFileError) as exc:  # its scratch directory cannot be written: the disk is full
            outcome = failed_outcome(job, f"cannot prepare the job: {exc}", "interrupted")
            batch.state.fail(f"cannot write the workspace: {exc}")
        finally:
            left = _remove_scratch(scratch)
            phases.mark("scratch removed")
        if left is not None and outcome.status not in ("interrupted",):
            outcome.status, outcome.error = "error", f"its scratch dir could not be removed: {left}"
        return outcome


def _remove_scratch(scratch: Path) -> str | None:
    """Remove whatever the job left in its scratch dir (a disk filled, links, FIFOs, folders
    20,000 deep); the reason it could not, in one line, else None."""
    try:
        fault("remove")
        remove_tree(scratch)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - told as the job's error
        return f"{type(exc).__name__}: {exc}"
    return None
