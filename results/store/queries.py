"""The read side of the store for the app and ``srtui status``: runs, running jobs with the state
of their driver, failures, one job, its metrics, and the rows a suite's plots need.

No SQL outside ``results`` reads the jobs table: screens call these functions (from thread
workers) through a :class:`Reader`, one read-only connection per screen guarded by a lock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from srtui.engine.spec import TERMINAL
from srtui.engine.textsafe import safe_row
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store

if TYPE_CHECKING:
    from srtui.results.store.colstore import ColumnStore

FAILED = tuple(sorted(TERMINAL - {"ok"}))
UNFINISHED = ("pending", "running")


def driver_alive(identity: str | None) -> bool:
    """The one rule for "is this run's driver still going": a recorded driver identity whose
    process runs (not a recycled pid). A job or run without one has no live driver: the next
    `srtui run` records its running jobs as lost and retries them."""
    from srtui.engine.process.tree import identity_alive  # psutil: not for a command that reads results

    return bool(identity) and identity_alive(identity or "")


class DriverCheck:
    """``driver_alive`` once per driver for one poll: many jobs share a driver."""

    def __init__(self, check: Callable[[str | None], bool] = driver_alive) -> None:
        self._check = check
        self.seen: dict[str, bool] = {}

    def __call__(self, identity: str | None) -> bool:
        key = identity or ""
        if key not in self.seen:
            self.seen[key] = self._check(identity)
        return self.seen[key]

    @property
    def live(self) -> tuple[str, ...]:
        return tuple(d for d, ok in self.seen.items() if ok)


class Reader:
    """A read-only connection to one workspace, opened lazily (the workspace may not exist yet)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.lock = threading.Lock()
        self._store: Store | None = None
        #: derived tables by (data_version, ...): the explorer's re-sorting and paging are free
        self.group_cache: dict[tuple[Any, ...], Any] = {}
        #: the explorer's columns of every job in memory (srtui.results.store.colstore), once loaded
        self.columns: ColumnStore | None = None

    def load_columns(self) -> bool:
        """Load the column store (seconds for a million jobs) on a connection of its own, so
        pages are read meanwhile; False on a workspace without the change log (schema < 8)."""
        from srtui.results.store.colstore import ColumnStore, available

        if not self.workspace.exists() or self.workspace.db_path.stat().st_size == 0:
            return False
        store = Store(self.workspace, readonly=True)
        try:
            if not available(store.conn):
                return False
            columns = ColumnStore()
            columns.load(store.conn)
            columns.warm()  # the orders the first keys need: computed here, off the key path
        finally:
            store.close()
        with self.lock:
            self.columns = columns
        return True

    def store(self) -> Store | None:
        if self._store is None:
            if not self.workspace.exists() or self.workspace.db_path.stat().st_size == 0:
                return None  # no workspace, or a run is creating its database right now
            store = Store(self.workspace, readonly=True)
            # every text the app reads (models, errors, names, notes) shows control characters
            # visibly: a method's escape sequences never reach the terminal through a screen
            store.conn.row_factory = safe_row
            if store.conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                store.close()  # a run is creating the database right now: not ready yet
                return None
            self._store = store
        return self._store

    def close(self) -> None:
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def data_version(self) -> int | None:
        """Changes whenever another connection commits: lets an idle poll skip its queries."""
        store = self.store()
        return None if store is None else int(store.conn.execute("PRAGMA data_version").fetchone()[0])


def rows(store: Store, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
    cur = store.conn.execute(sql, tuple(args))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur]


def marks(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)


# --- runs and running jobs ---------------------------------------------------------------------


@dataclass(frozen=True)
class RunningRow:
    """A job marked running, with the state of the driver that claimed it."""

    job_id: str
    suite: str
    task: str
    method: str
    seed: int
    attempt: int
    started_at: str | None
    time_s: float | None
    host: str
    run_id: str | None
    worker_pid: int | None
    driver_alive: bool

    @property
    def label(self) -> str:
        return f"{self.method} / {self.task} / seed {self.seed}"

    @property
    def queued(self) -> bool:
        """Claimed by a live driver but not started on a worker yet (a cluster still starting)."""
        return self.driver_alive and self.worker_pid is None


def running_jobs(store: Store, alive: Callable[[str | None], bool] = driver_alive) -> list[RunningRow]:
    found = rows(
        store,
        "SELECT j.job_id, j.suite, j.task, j.method, j.seed, j.attempt, j.started_at, j.limits, j.host, j.run_id, "
        "j.worker_pid, r.driver FROM jobs j LEFT JOIN runs r ON r.run_id = j.run_id WHERE j.status = 'running' "
        "ORDER BY j.started_at, j.job_id",
    )
    return [
        RunningRow(
            r["job_id"],
            r["suite"],
            r["task"],
            r["method"],
            r["seed"],
            r["attempt"],
            r["started_at"],
            json.loads(r["limits"]).get("time_s"),
            r["host"] or "",
            r["run_id"],
            r["worker_pid"],
            alive(r["driver"]),
        )
        for r in found
    ]


@dataclass(frozen=True)
class ActiveRun:
    run_id: str
    suite: str
    started_at: str | None
    driver_alive: bool
    #: jobs the run set out to run (None: a run recorded by an older srtui)
    queued: int | None


def open_runs(store: Store, alive: Callable[[str | None], bool] = driver_alive) -> list[ActiveRun]:
    """Runs still marked running, each with whether its driver is alive."""
    queued = ", queued" if "queued" in table_columns(store, "runs") else ", NULL AS queued"
    return [
        ActiveRun(r["run_id"], r["suite"], r["started_at"], alive(r["driver"]), r["queued"])
        for r in rows(store, f"SELECT run_id, suite, started_at, driver{queued} FROM runs WHERE status = 'running'")
    ]


def run_progress(store: Store, runs: list[ActiveRun]) -> tuple[int, int]:
    """(finished, still to run) over ``runs``: what the monitor's throughput and ETA are made of.
    Still to run counts only these runs' jobs, never another suite's pending ones."""
    if not runs:
        return 0, 0
    ids = [r.run_id for r in runs]
    table, n = ("run_counts", "n") if store.has_table("run_counts") else ("jobs", "1")
    done, running = store.conn.execute(
        f"SELECT coalesce(sum({n}) FILTER (WHERE status NOT IN ('running', 'pending')), 0), coalesce(sum({n}) "
        f"FILTER (WHERE status = 'running'), 0) FROM {table} WHERE run_id IN ({marks(ids)})",
        ids,
    ).fetchone()
    if all(r.queued is not None for r in runs):
        return done, max(sum(r.queued or 0 for r in runs) - done, running)
    suites = sorted({r.suite for r in runs})  # an older driver: the pending jobs of its suites
    table, n = ("job_counts", "n") if store.has_table("job_counts") else ("jobs", "1")
    pending = store.conn.execute(
        f"SELECT coalesce(sum({n}), 0) FROM {table} WHERE status = 'pending' AND suite IN ({marks(suites)})", suites
    ).fetchone()[0]
    return done, pending + running


@dataclass(frozen=True)
class MetricsProgress:
    """A live run's metrics (srtui.results.metrics.tasks): jobs done of those queued, and the ETA."""

    run_id: str
    suite: str
    done: int
    total: int
    eta_s: float | None


def metrics_key(run_id: str) -> str:
    """The store's meta key under which a run keeps its metrics progress (cleared at its end);
    here, not beside the metrics code, so `srtui status` never imports sympy."""
    return f"metrics:{run_id}"


def metrics_progress(store: Store, runs: list[ActiveRun]) -> list[MetricsProgress]:
    """The metrics progress each live run keeps in the store (absent once its metrics are done)."""
    out = []
    for r in runs:
        try:
            p = json.loads(store.meta(metrics_key(r.run_id)) or "null")
            done, total, eta = int(p["done"]), int(p["total"]), p.get("eta_s")
        except (ValueError, TypeError, KeyError):
            continue  # none yet, or not this srtui's
        out.append(MetricsProgress(r.run_id, r.suite, done, total, float(eta) if eta is not None else None))
    return out


@dataclass(frozen=True)
class FailureRow:
    job_id: str
    status: str
    label: str
    ended_at: str
    tail: str


def recent_failures(store: Store, limit: int = 5) -> list[FailureRow]:
    # newest per status, then merged: an index walk per status (status, ended_at) however many jobs
    cols = "job_id, task, method, seed, status, ended_at, error, limit_detail, stderr_tail"
    each = f"SELECT * FROM (SELECT {cols} FROM jobs WHERE status = ? ORDER BY ended_at DESC LIMIT ?)"
    found = rows(
        store,
        f"SELECT * FROM ({' UNION ALL '.join([each] * len(FAILED))}) ORDER BY ended_at DESC LIMIT ?",
        [*(a for s in FAILED for a in (s, limit)), limit],
    )
    return [
        FailureRow(
            r["job_id"], r["status"], f"{r['method']} / {r['task']} / seed {r['seed']}", r["ended_at"] or "", _tail(r)
        )
        for r in found
    ]


def _tail(row: dict[str, Any], lines: int = 3) -> str:
    text = row.get("error") or row.get("limit_detail") or ""
    stderr = (row.get("stderr_tail") or "").strip()
    if stderr:
        text = (text + "\n" if text else "") + "\n".join(stderr.splitlines()[-lines:])
    return text.strip()


# --- one job, a suite -----------------------------------------------------------------------------


def table_columns(store: Store, table: str) -> set[str]:
    return {row[1] for row in store.conn.execute(f"PRAGMA table_info({table})")}


def suites(store: Store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT DISTINCT suite FROM jobs ORDER BY suite")]


def workspace_methods(store: Store) -> tuple[str, ...]:
    """Every method of the workspace's jobs, every suite's: the set a method's look (colour and
    marker) is a function of (srtui.results.outputs.figures.style.looks), in the figures and the app."""
    return tuple(str(m) for (m,) in store.conn.execute("SELECT DISTINCT method FROM jobs") if m is not None)


def run_methods(store: Store, suite: str | None = None) -> list[str]:
    """The methods of the workspace's jobs (one suite's), as the runs table names them."""
    where, args = (" WHERE suite = ?", (suite,)) if suite else ("", ())
    return [str(m) for (m,) in store.conn.execute(f"SELECT DISTINCT method FROM jobs{where}", args) if m is not None]


def job(store: Store, job_id: str) -> dict[str, Any] | None:
    found = rows(store, "SELECT * FROM jobs WHERE job_id = ?", (job_id,))
    return found[0] if found else None


def job_metrics(store: Store, job_id: str) -> list[tuple[str, float | None, str | None]]:
    """The ``metrics`` rows of one job (srtui.results.metrics.compute), by name; empty before scoring."""
    from srtui.results.store.columns import ACCURACY

    try:
        found = store.conn.execute(
            "SELECT name, value, detail FROM metrics WHERE job_id = ? AND name NOT LIKE '\\_%' ESCAPE '\\' "
            "ORDER BY name",
            (job_id,),
        ).fetchall()
    except sqlite3.OperationalError:  # a workspace from before schema v2
        return []
    # a workspace from before schema v7 also holds the job record's accuracy here
    return [(str(n), v, d) for n, v, d in found if n not in ACCURACY]
