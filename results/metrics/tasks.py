"""Metrics as tasks of the run's backend: each finished job's metrics, computed in an idle slot.

The driver queues a job as soon as its outcome is stored (``MetricsFeed.job_recorded``); a slot
with no job left to start ``take``s it: the driver reads the job's predictions (its accuracy
metrics) and the stored cache rows its model may need, and hands the slot a ``MetricsTask``.
The task's ``compute`` runs wherever the backend runs jobs (a local slot, pinned to the slot's
core; a Dask worker), with the same per-operation deadline and definitions as
``srtui.results.metrics.compute.compute_for_store`` (the same code: ``expression_metrics`` over one model);
only the driver writes the results and the new cache rows (``record``).

Resuming is the same queue seeded with the suite's finished jobs whose metrics are missing:
nothing stored is recomputed. The noise-robustness ratio needs every job of the twin task, so it
is refreshed over the suite when the queue is empty (``finish``).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.backends.base import RunState, SinkError
from srtui.engine.outcome_check import TaskArrays
from srtui.engine.pool import TimedPool
from srtui.results.metrics import compute as mt
from srtui.results.metrics.expr_batch import ExprCache, ModelItem, cache_keys, expression_metrics, metrics_pool
from srtui.results.store.queries import metrics_key

if TYPE_CHECKING:
    from srtui.results.store.store import Store

#: times a task whose worker died (or whose computation failed) is queued again in one run
MAX_TRIES = 3


@dataclass(frozen=True)
class MetricsResult:
    #: job id -> its expression metrics
    metrics: dict[str, dict[str, Any]]
    #: cache rows computed: (key, operation, status, result, deadline, seconds)
    added: list[tuple[str, str, str, Any, float | None, float]]
    where: str
    seconds: float


@dataclass(frozen=True)
class MetricsTask:
    """Some jobs' expression metrics, with the cache rows they may read: picklable, no store.
    Several jobs in one task share its processes and its duplicate models (a Dask task's
    overhead is paid once for them); a local slot takes one job at a time."""

    jobs: tuple[tuple[str, ModelItem | None], ...]
    cached: dict[str, tuple[str, Any, float | None]] = field(default_factory=dict)
    timeout: float = 10.0

    @property
    def job_ids(self) -> list[str]:
        return [job_id for job_id, _ in self.jobs]

    def compute(self, core: int | None, where: str, keep: bool = False) -> MetricsResult:
        """``keep``: this process computes task after task (a Dask worker), so its pool's process
        is kept for the next task, warm, instead of a new one per phase."""
        started = time.monotonic()
        readable = [(job_id, item) for job_id, item in self.jobs if item is not None]
        metrics: dict[str, dict[str, Any]] = {job_id: {} for job_id, item in self.jobs if item is None}
        cache = ExprCache()
        if readable:
            cache.mem.update(self.cached)
            items = [item for _, item in readable]
            with _kept_pool(core, self.timeout) if keep else contextlib.nullcontext() as pool:
                found, _ = expression_metrics(items, cache, workers=1, timeout=self.timeout, core=core, pool=pool)
            metrics.update((job_id, m) for (job_id, _), m in zip(readable, found))
        return MetricsResult(metrics, cache.added, where, time.monotonic() - started)


_kept: dict[tuple[int | None, float], TimedPool] = {}
_kept_lock = threading.Lock()


@contextlib.contextmanager
def _kept_pool(core: int | None, timeout: float) -> Iterator[TimedPool]:
    """The process's pool for ``core`` and ``timeout``, kept between tasks (a second thread
    wanting it meanwhile makes its own); one that a failure interrupted is closed, as its busy
    process could never take a task again."""
    key = (core, timeout)
    with _kept_lock:
        kept = _kept.pop(key, None)
    pool = kept or metrics_pool(1, timeout, core)
    try:
        yield pool
    except BaseException:
        pool.close()
        raise
    with _kept_lock:
        if key in _kept:
            pool.close()
        else:
            _kept[key] = pool


def close_kept_pools() -> None:
    """Stop the pools this process kept (a run's end: its slots compute nothing more)."""
    with _kept_lock:
        pools = list(_kept.values())
        _kept.clear()
    for pool in pools:
        pool.close()


def warm_worker(core: int | None, timeout: float = 10.0) -> None:
    """Run on each Dask worker before a metrics pass: the pool its tasks keep is started and
    has computed a model, so everything the metrics load lazily is loaded before the first
    task (neither its deadline nor the pass's time pays for it)."""
    task = MetricsTask((("warm-up", ModelItem("x1 + 1", ("x1",), truth="x1 + 1")),), timeout=timeout)
    task.compute(core, "warm-up", keep=True)


class MetricsFeed:
    """The driver's side: which jobs need metrics, the tasks handed out, the results written.
    Thread-safe: slots take and record from their own threads."""

    def __init__(
        self,
        store: Store,
        suite: str | None,
        timeout: float = 10.0,
        data_dir: Path | None = None,
        state: RunState | None = None,
        on_change: Callable[[], None] | None = None,
        run_id: str | None = None,
    ) -> None:
        self.store, self.suite, self.timeout, self.data_dir = store, suite, timeout, data_dir
        self.state, self.on_change, self.run_id = state, on_change, run_id
        self.shown = 0.0  # when the progress was last written to the store
        self.lock = threading.Lock()
        self.queue: deque[str] = deque()
        self.queued: set[str] = set()
        self.rows: dict[str, dict[str, Any]] = {}  # accuracy metrics of the tasks handed out
        self.busy: dict[str, tuple[str, str, str]] = {}  # job id -> its model, of the tasks handed out
        self.tries: dict[str, int] = {}
        self.arrays: dict[str, TaskArrays | None] = {}
        self.done = self.total = 0
        self.began: float | None = None  # when the first task was handed out
        self.where: dict[str, str] = {}  # job id -> where its metrics were computed (this run)

    # queueing -------------------------------------------------------------------------------

    def seed(self, only_missing: bool = True) -> int:
        """Queue the suite's finished jobs whose metrics are missing (or all of them)."""
        done = mt.metrics_done(self.store) if only_missing else set()
        jobs = [j for j in mt.finished_jobs(self.store, self.suite) if j["job_id"] not in done]
        # longest models first, as the post-run pass orders its tasks: the slots then finish
        # together rather than one of them working through a late long model alone
        jobs.sort(key=lambda j: -len(j["model"] or ""))
        return self._add([j["job_id"] for j in jobs])

    def job_recorded(self, suite: str, job_id: str, status: str) -> None:
        """A job's outcome is stored: its metrics go behind those already queued."""
        if suite == self.suite and status in ("ok", "invalid_model"):
            self._add([job_id])

    def _add(self, job_ids: list[str]) -> int:
        with self.lock:
            new = [j for j in job_ids if j not in self.queued]
            self.queue.extend(new)
            self.queued.update(new)
            self.total += len(new)
        self._progress()
        return len(new)

    @property
    def pending(self) -> int:
        with self.lock:
            return len(self.queue)

    # the backend's side ---------------------------------------------------------------------

    def take(self, many: int = 1) -> MetricsTask | None:
        """The next jobs' task, up to ``many`` of them (None when nothing is queued); their
        accuracy metrics are read here."""
        jobs: list[tuple[str, ModelItem | None]] = []
        cached: dict[str, tuple[str, Any, float | None]] = {}
        infos: dict[str, dict[str, Any]] = {}  # per task, read once for the task's jobs
        store_cache = ExprCache(self.store.conn, self.store.lock)
        with self.lock, self.store.lock:
            while len(jobs) < many and (job := self._next_job()) is not None:
                self.began = self.began or time.monotonic()
                if job["task"] not in infos:
                    infos |= mt.store_task_info(self.store, [job["task"]], self.data_dir)
                row, item = mt.prepare_job(self.store, job, infos.get(job["task"], {}), self.arrays)
                if item is not None:
                    cached |= store_cache.rows(cache_keys(item))
                self.rows[job["job_id"]] = row
                self.busy[job["job_id"]] = _same_model(job)
                jobs.append((job["job_id"], item))
        return MetricsTask(tuple(jobs), cached, self.timeout) if jobs else None

    def _next_job(self) -> dict[str, Any] | None:
        """The first queued job whose model is not being computed right now (a deterministic
        method's seeds give one model many times: the later ones are then served from the
        cache), looking a bounded way ahead; else the first queued job."""
        first: dict[str, Any] | None = None
        for _ in range(min(len(self.queue), LOOK_AHEAD)):
            job_id = self.queue.popleft()
            cur = self.store.conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ?", (job_id,))
            found = cur.fetchone()
            if found is None:
                self.total -= 1  # deleted since it was queued
                continue
            job = dict(zip([d[0] for d in cur.description], found))
            if _same_model(job) not in self.busy.values():
                if first is not None:
                    self.queue.appendleft(first["job_id"])
                return job
            if first is None:
                first = job
            else:
                self.queue.append(job_id)  # behind the others: its twin's results come first
        return first

    def record(self, task: MetricsTask, result: MetricsResult) -> None:
        """Write the task's metrics and the cache rows it computed (the driver only)."""
        rows = {}
        with self.lock:
            for job_id in task.job_ids:
                rows[job_id] = self.rows.pop(job_id)
                self.busy.pop(job_id, None)
        for job_id, row in rows.items():
            found = dict(result.metrics.get(job_id, {}))
            notes = found.pop("_notes", [])
            row.update(found)
            row["_notes"] += notes
            row["_where"] = result.where
        try:
            ExprCache(self.store.conn, self.store.lock).put_many(result.added)
            with self.store.lock:
                mt.write_metrics(self.store, rows)
        except (sqlite3.Error, OSError) as exc:  # the store cannot record: the run stops, as for a job
            raise SinkError(f"cannot record metrics in {self.store.workspace.db_path}: {exc}") from None
        with self.lock:
            self.done += len(rows)
            self.where.update((job_id, result.where) for job_id in rows)
        self._progress()

    def give_back(self, task: MetricsTask, why: str) -> None:
        """A task that did not come back (its worker died, it failed): its jobs are queued again
        a few times."""
        with self.lock:
            for job_id in task.job_ids:
                self.rows.pop(job_id, None)
                self.busy.pop(job_id, None)
                self.tries[job_id] = self.tries.get(job_id, 0) + 1
                if self.tries[job_id] < MAX_TRIES:
                    self.queue.append(job_id)
                else:
                    self.total -= 1  # left for the next run (its metrics are still missing)
        self._progress()

    # the end ----------------------------------------------------------------------------------

    def close(self) -> None:
        """The run is over: the processes its slots kept for the metrics are stopped."""
        close_kept_pools()

    def finish(self) -> None:
        """The noise-robustness ratios of the suite, now that its jobs have their test R2."""
        refresh_noise_robustness(self.store, self.suite, self.data_dir)
        self._progress(final=True)

    def _progress(self, final: bool = False) -> None:
        """Done/total and ETA: into the run's state (the live display) and, at most once a
        second, the store (``srtui status`` and the app's monitor read it from there)."""
        eta = self.eta_s()
        with self.lock:
            done, total = self.done, self.total
        if self.state is not None:
            with self.state.lock:
                self.state.metrics_done, self.state.metrics_total, self.state.metrics_eta_s = done, total, eta
        now = time.monotonic()
        if self.run_id and (final or now - self.shown >= 1.0):
            self.shown = now
            value = None if final else json.dumps({"done": done, "total": total, "eta_s": eta})
            with contextlib.suppress(sqlite3.Error, OSError):  # informational: never stops the run
                self.store.set_meta(metrics_key(self.run_id), value)
        if self.on_change is not None and not final:
            self.on_change()

    def eta_s(self) -> float | None:
        with self.lock:
            if not self.done or self.began is None:
                return None
            rate = self.done / max(time.monotonic() - self.began, 1e-9)
            return (self.total - self.done) / rate


#: queued jobs ``take`` looks at to find one whose model is not being computed
LOOK_AHEAD = 64


def _same_model(job: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two jobs' expression metrics the same computation (the task fixes features and truth)."""
    return (str(job["task"]), str(job["model"]), str(job["dialect"]))


_COLUMNS = "job_id, suite, task, method, seed, status, model, dialect, data_fingerprint, method_notes"


def refresh_noise_robustness(store: Store, suite: str | None, data_dir: Path | None = None) -> None:
    """``noise_robustness`` of each job of the suite on a noisy task, as the post-run pass
    computes it (srtui.results.metrics.compute.noise_robustness over the stored test R2)."""
    jobs = {j["job_id"]: j for j in mt.finished_jobs(store, suite)}
    infos = mt.store_task_info(store, sorted({j["task"] for j in jobs.values()}), data_dir)
    noisy = [jid for jid, j in jobs.items() if infos.get(j["task"], {}).get("property") == "noise_robustness"]
    if not noisy:
        return
    done = mt.metrics_done(store)
    rows = {
        jid: {"r2_test": store.conn.execute("SELECT r2_test FROM jobs WHERE job_id = ?", (jid,)).fetchone()[0]}
        for jid in noisy
        if jid in done
    }
    mt.noise_robustness(store, rows, jobs, infos)
    with store.lock, store.transaction() as c:
        for jid, m in rows.items():
            if "noise_robustness" not in m:
                continue  # no test R2: the post-run pass stores no ratio either
            c.execute("DELETE FROM metrics WHERE job_id = ? AND name = 'noise_robustness'", (jid,))
            value = m.get("noise_robustness")
            c.execute(
                "INSERT INTO metrics (job_id, name, value, detail) VALUES (?, 'noise_robustness', ?, NULL)",
                (jid, None if value is None else float(value)),
            )
