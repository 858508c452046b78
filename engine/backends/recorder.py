"""Group commit: the finished jobs of a local run recorded by one thread, a batch a transaction.

A slot hands its scored job to the recorder and starts its next job at once. The recorder takes
every job handed to it meanwhile and records them together (the sink's ``batch``: one commit
for all of them, each job's record still its own savepoint with its own barrier), and only after
the commit counts them, tells the display and logs their phases: a job that was reported
finished is durable (a kill -9 of the driver loses none of them; the jobs not yet committed are
still ``running`` in the store, which the next run's recovery retries as lost).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from srtui.engine.backends.base import JobSink, PlannedJob, RunState, SinkError, count_job, record_job
from srtui.engine.process import phases
from srtui.engine.process.job_io import JobOutcome

#: the most jobs one commit records (a burst of finished jobs is split into commits this size)
MAX_BATCH = 256


class Recorder:
    """The thread that records and counts a run's finished jobs (``put``); after ``close`` its
    ``thread`` ends once every job put before is recorded (its owner waits for it as for a slot)."""

    def __init__(self, sink: JobSink, state: RunState, on_change: Callable[[], None] | None = None) -> None:
        self.sink, self.state, self.on_change = sink, state, on_change
        self.queue: queue.SimpleQueue[tuple[PlannedJob, JobOutcome, dict[str, object], Any] | None] = (
            queue.SimpleQueue()
        )
        self.thread = threading.Thread(target=self._loop, name="srtui-recorder", daemon=True)
        self.thread.start()

    def put(self, job: PlannedJob, outcome: JobOutcome, fields: dict[str, object]) -> None:
        """Record ``job`` soon (its phase marks go with it: the slot's own are done)."""
        self.queue.put((job, outcome, fields, phases.detach()))

    def close(self) -> None:
        self.queue.put(None)

    def _loop(self) -> None:
        while True:
            items = [self.queue.get()]
            while items[-1] is not None and len(items) < MAX_BATCH:
                try:
                    items.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            done = [item for item in items if item is not None]
            if done:
                self._write(done)
            if items[-1] is None:
                return

    def _write(self, items: list[tuple[PlannedJob, JobOutcome, dict[str, object], Any]]) -> None:
        """One commit for ``items``, then each counted (never before: a job reported is recorded)."""
        statuses: list[str] = []
        batch = getattr(self.sink, "batch", None)
        try:
            with batch() if batch is not None else contextlib.nullcontext():
                for job, outcome, fields, _marks in items:
                    statuses.append(record_job(job, outcome, fields, self.sink, self.state))
        except SinkError as exc:  # the commit failed: none of them is recorded (retried as lost)
            self.state.fail(str(exc))
            statuses = ["interrupted"] * len(items)
        except Exception as exc:  # noqa: BLE001 - the recorder must not die with jobs still to count
            self.state.fail(f"srtui failed recording jobs: {type(exc).__name__}: {exc}")
            statuses = ["interrupted"] * len(items)
        committed = ("recorded (group commit)", time.time(), time.thread_time(), "recorder")
        for (job, outcome, _fields, marks), status in zip(items, statuses, strict=True):
            count_job(job, outcome, status, self.state, self.on_change)
            if marks is not None:
                phases.write(job.job_id, [*marks, committed])
