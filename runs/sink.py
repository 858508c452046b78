"""The store sink: job lifecycle events from a backend written into the store and the workspace."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from srtui.engine.backends.base import PlannedJob, SinkError
from srtui.engine.process.job_io import JobOutcome, now_iso
from srtui.engine.untrusted import UntrustedFileError, write_file
from srtui.results.store.columns import ACCURACY, outcome_row
from srtui.results.store.store import Store, db_error, pack_predictions
from srtui.runs.data import row_indices, targets
from srtui.runs.keys import workers_key as workers_key  # where status found it


class StoreSink:
    """Writes job lifecycle events into the store and job logs into the workspace.

    A finished job's outcome is committed first, in its own transaction or in the ``batch`` of
    finished jobs it is recorded with (group commit); its log files come after and may fail
    alone. Anything the store or the disk refuses becomes a SinkError (one line), which stops the
    run instead of a slot thread."""

    def __init__(self, store: Store, run_id: str, on_recorded: Callable[[str, str, str], None] | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.logs = store.workspace.logs
        #: told (suite, job id, status) once a job's outcome is committed: its metrics are queued
        self.on_recorded = on_recorded
        self._batch = threading.local()  # the jobs of this thread's open batch, told at its commit

    def claim(self, job: PlannedJob, started_at: str, host: str) -> bool:
        try:
            return self.store.claim(job.job_id, job.attempt, self.run_id, started_at, host)
        except (sqlite3.Error, OSError) as exc:
            raise SinkError(db_error(self.store.workspace.db_path, exc, "cannot record in {path}")) from None

    def started(self, job: PlannedJob, pid: int) -> None:
        try:
            self.store.set_worker_pid(job.job_id, pid)
        except (sqlite3.Error, OSError):
            pass  # informational; the outcome is what must be recorded

    def workers(self, live: int, expected: int) -> None:
        """A cluster run's workers, 'live/expected', for `srtui status` (cleared at the end)."""
        self.store.set_meta(workers_key(self.run_id), f"{live}/{expected or '?'}")

    def finished(self, job: PlannedJob, outcome: JobOutcome, fields: dict[str, object]) -> None:
        try:
            self._record(job, outcome, fields)
        except (sqlite3.Error, OSError) as exc:
            why = db_error(self.store.workspace.db_path, exc, "cannot record in {path}")
            try:
                self.store.mark_interrupted(job.job_id, job.attempt, now_iso(), why)
            except (sqlite3.Error, OSError):
                pass  # left running: the next run's recovery retries it as lost
            raise SinkError(why) from None
        told = getattr(self._batch, "told", None)
        if told is not None:
            told.append((job.spec.suite, job.job_id, outcome.status))
        elif self.on_recorded is not None:
            self.on_recorded(job.spec.suite, job.job_id, outcome.status)
        for stream, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
            path = self.logs / f"{job.job_id}.a{job.attempt}.{stream}"
            try:
                if data:
                    write_file(path, data)  # never through a link a job planted (its ids are predictable)
            except (OSError, UntrustedFileError) as exc:
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)  # a cut log frees its space; the stored tail remains
                why = getattr(exc, "strerror", None) or str(exc)
                raise SinkError(f"cannot write job logs in {self.logs}: {why}", recorded=True) from None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The ``finished`` jobs of this block committed as one transaction (srtui.results.store's
        ``batch``: each job's record a savepoint, undone alone if it fails); their metrics are
        queued once it is committed (never under the store's lock, which the queue takes after its
        own). A commit that fails raises SinkError: none of the batch is recorded."""
        told: list[tuple[str, str, str]] = []
        self._batch.told = told
        try:
            with self.store.batch():
                yield
        except (sqlite3.Error, OSError) as exc:
            raise SinkError(db_error(self.store.workspace.db_path, exc, "cannot record in {path}")) from None
        finally:
            self._batch.told = None
        if self.on_recorded is not None:
            for suite, job_id, status in told:
                self.on_recorded(suite, job_id, status)

    def _record(self, job: PlannedJob, outcome: JobOutcome, fields: dict[str, object]) -> None:
        predictions = None
        if outcome.train_pred is not None and outcome.test_pred is not None:
            train_index, test_index = row_indices(job.data_path)
            predictions = pack_predictions(train_index, outcome.train_pred, test_index, outcome.test_pred)
            if outcome.status in ("ok", "invalid_model"):
                fields = {**fields, **row_accuracy(job.data_path, outcome)}
        record = outcome_row(outcome, job.attempt, self.run_id, fields)
        self.store.record(job.job_id, record, predictions)


def row_accuracy(data_path: str, outcome: JobOutcome) -> dict[str, object]:
    """The declared accuracy metrics whose home is the job's row (srtui.results.store.columns.ACCURACY),
    computed once, as the job ends: the live monitor and a tuning search read them at once; the
    metrics pass computes the others (srtui.results.metrics.compute)."""
    from srtui.results.metrics.accuracy import prediction_metrics

    try:
        y_train, y_test = targets(data_path)
        return prediction_metrics(y_train, outcome.train_pred, y_test, outcome.test_pred, only=ACCURACY)
    except Exception:  # noqa: BLE001 - the record is kept; the metrics pass scores its stored predictions
        return {}
