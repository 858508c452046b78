"""What the app reads, as plain data: monitor snapshots and pages of the results explorer.

No Textual here: screens call these functions from thread workers and post the returned
dataclasses as messages. Everything is read through ``results.store.Store`` opened read-only
(WAL lets us read while a run in another process writes). Each ``Reader`` owns one connection
guarded by a lock, so a screen's workers never share a cursor across threads.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from engine.proctree import identity_alive
from engine.spec import TERMINAL
from engine.textsafe import safe_row
from engine.workspace import Workspace
from results.store import Store, StoreError

FAILED = tuple(sorted(TERMINAL - {"ok"}))
#: columns the explorer may filter, sort and group on (names are whitelisted, values bound)
TEXT_COLUMNS = ("suite", "task", "method", "status", "job_id", "host", "model", "dialect")
NUMBER_COLUMNS = (
    "seed", "attempt", "r2_test", "r2_train", "mse_test", "mae_test", "r2_test_expr", "fidelity_r2",
    "wall_s", "cpu_s", "peak_rss_mb", "fit_s", "energy_j",
)
GROUP_COLUMNS = ("suite", "task", "method", "status")
#: what a page of the explorer shows, in order
PAGE_COLUMNS = ("task", "method", "seed", "status", "r2_test", "wall_s", "model", "suite", "job_id")


class QueryError(ValueError):
    """A filter the explorer cannot read; one line for the status bar."""


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


class Reader:
    """A read-only connection to one workspace, opened lazily (the workspace may not exist yet)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.lock = threading.Lock()
        self._store: Store | None = None
        #: grouped summaries by (data_version, filter, grouping): re-sorting and paging are free
        self.group_cache: dict[tuple, Any] = {}

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
        return None if store is None else store.conn.execute("PRAGMA data_version").fetchone()[0]


# --- monitor ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningJob:
    job_id: str
    label: str
    started: float | None  # epoch seconds
    limit_s: float | None
    host: str
    #: the driver of its run is dead: the job is not running any more and becomes ``lost`` (and
    #: is retried) when the next ``srtui run`` starts
    driver_gone: bool = False


@dataclass(frozen=True)
class Failure:
    job_id: str
    status: str
    label: str
    ended_at: str
    tail: str


@dataclass(frozen=True)
class MonitorSnapshot:
    exists: bool
    counts: dict[str, int] = field(default_factory=dict)
    running: tuple[RunningJob, ...] = ()
    failures: tuple[Failure, ...] = ()
    active_runs: int = 0
    throughput: float | None = None  # finished jobs per minute in the active runs
    eta_s: float | None = None
    version: int | None = None
    #: runs still marked running whose driver process is dead (killed, machine rebooted)
    gone_runs: int = 0
    #: driver identities of the live runs, re-checked at every poll even when no data changed
    live_drivers: tuple[str, ...] = ()
    #: why an existing workspace cannot be read (newer schema, broken database), one line
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def remaining(self) -> int:
        return self.counts.get("pending", 0) + self.counts.get("running", 0)


def _label(row: dict[str, Any]) -> str:
    return f"{row['method']} / {row['task']} / seed {row['seed']}"


def _tail(row: dict[str, Any], lines: int = 3) -> str:
    text = row.get("error") or row.get("limit_detail") or ""
    stderr = (row.get("stderr_tail") or "").strip()
    if stderr:
        text = (text + "\n" if text else "") + "\n".join(stderr.splitlines()[-lines:])
    return text.strip()


def monitor_snapshot(reader: Reader, previous: MonitorSnapshot | None = None, now: Callable[[], float] = time.time) -> MonitorSnapshot:
    """Counts, running jobs, throughput/ETA and recent failures; cheap when nothing changed."""
    with reader.lock:
        try:
            store = reader.store()
        except StoreError as exc:
            return MonitorSnapshot(exists=False, error=str(exc))
        if store is None:
            return MonitorSnapshot(exists=False)
        version = reader.data_version()
        if (
            previous is not None
            and previous.exists
            and previous.version == version
            and all(identity_alive(d) for d in previous.live_drivers)
        ):
            return previous  # nothing written and no driver died since the last poll
        conn = store.conn
        counts = store.status_counts()
        alive: dict[str, bool] = {}  # driver identity -> is it running (one check per driver)

        def driver_alive(identity: str | None) -> bool:
            key = identity or ""
            if key not in alive:
                alive[key] = identity_alive(key)
            return alive[key]

        runs = _rows(conn, "SELECT run_id, started_at, driver FROM runs WHERE status = 'running'")
        gone = {r["run_id"] for r in runs if not driver_alive(r["driver"])}
        runs = [r for r in runs if r["run_id"] not in gone]
        # the same rule as the next `srtui run` applies (runner.recover): the job's driver is dead
        running = tuple(
            RunningJob(
                r["job_id"], _label(r), parse_time(r["started_at"]), json.loads(r["limits"]).get("time_s"),
                r.get("host") or "", driver_gone=not driver_alive(r["driver"]),
            )
            for r in _rows(
                conn,
                "SELECT j.job_id, j.task, j.method, j.seed, j.started_at, j.limits, j.host, r.driver FROM jobs j "
                "LEFT JOIN runs r ON r.run_id = j.run_id WHERE j.status = 'running' ORDER BY j.started_at, j.job_id",
            )
        )
        marks = ",".join("?" * len(FAILED))
        failures = tuple(
            Failure(r["job_id"], r["status"], _label(r), r["ended_at"] or "", _tail(r))
            for r in _rows(
                conn,
                f"SELECT job_id, task, method, seed, status, ended_at, error, limit_detail, stderr_tail FROM jobs "
                f"WHERE status IN ({marks}) ORDER BY ended_at DESC LIMIT 5",
                FAILED,
            )
        )
        throughput = eta = None
        if runs:
            ids = [r["run_id"] for r in runs]
            first = min(t for t in (parse_time(r["started_at"]) for r in runs) if t is not None) if any(r["started_at"] for r in runs) else None
            done = conn.execute(
                "SELECT count(*) FROM jobs WHERE run_id IN " f"({','.join('?' * len(ids))}) AND status NOT IN ('running', 'pending')", ids
            ).fetchone()[0]
            if first is not None:
                elapsed = max(now() - first, 1e-6)
                throughput = done / elapsed * 60
                remaining = counts.get("pending", 0) + sum(not job.driver_gone for job in running)
                eta = remaining / (done / elapsed) if done else None
        return MonitorSnapshot(
            True, counts, running, failures, len(runs), throughput, eta, version,
            gone_runs=len(gone), live_drivers=tuple(d for d, ok in alive.items() if ok),
        )


def _rows(conn, sql: str, args=()) -> list[dict[str, Any]]:
    cur = conn.execute(sql, args)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur]


# --- results explorer -------------------------------------------------------------------------

_TOKEN = re.compile(r"^(?P<col>[a-z_0-9]+)(?P<op>!=|>=|<=|=|~|>|<)(?P<value>.*)$")


@dataclass(frozen=True)
class ResultsQuery:
    """Filter, sort and grouping of the explorer. ``filter_text`` is the user's typed filter."""

    filter_text: str = ""
    sort: str = "job_id"
    descending: bool = False
    group_by: tuple[str, ...] = ()
    offset: int = 0
    limit: int = 100


def where_clause(filter_text: str) -> tuple[str, list[Any]]:
    """``method=linear status!=ok r2_test>0.9 task~feyn free words`` -> SQL and bound values.

    ``=``/``!=`` take comma-separated alternatives; ``~`` is a substring match; a bare word
    matches suite, task or method as a substring. Unknown columns or non-numbers are refused.
    """
    parts: list[str] = []
    args: list[Any] = []
    for token in filter_text.split():
        m = _TOKEN.match(token)
        if m is None:
            parts.append("(suite LIKE ? OR task LIKE ? OR method LIKE ?)")
            args += [f"%{token}%"] * 3
            continue
        col, op, value = m["col"], m["op"], m["value"]
        if col not in TEXT_COLUMNS and col not in NUMBER_COLUMNS:
            raise QueryError(f"unknown column {col!r} in filter (known: {', '.join(TEXT_COLUMNS + NUMBER_COLUMNS)})")
        if op == "~":
            parts.append(f"{col} LIKE ?")
            args.append(f"%{value}%")
            continue
        if col in NUMBER_COLUMNS:
            try:
                values = [float(v) for v in value.split(",")]
            except ValueError:
                raise QueryError(f"{col} needs a number, got {value!r}") from None
        else:
            values = value.split(",")
        if op in ("=", "!="):
            marks = ",".join("?" * len(values))
            parts.append(f"{col} {'NOT ' if op == '!=' else ''}IN ({marks})")
            args += values
        elif len(values) != 1 or col not in NUMBER_COLUMNS:
            raise QueryError(f"{op} needs one number: {token!r}")
        else:
            parts.append(f"{col} {op} ?")
            args.append(values[0])
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


@dataclass(frozen=True)
class ResultsPage:
    query: ResultsQuery
    total: int
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    seconds: float = 0.0


def results_page(reader: Reader, query: ResultsQuery) -> ResultsPage:
    """One window of jobs (never all of them), or one row per group when grouping."""
    started = time.perf_counter()
    where, args = where_clause(query.filter_text)
    sort = query.sort
    if query.group_by:
        for col in query.group_by:
            if col not in GROUP_COLUMNS:
                raise QueryError(f"cannot group by {col!r} (one of: {', '.join(GROUP_COLUMNS)})")
        columns = (*query.group_by, "jobs", "ok", "failed", "median_r2_test", "mean_r2_test", "best_r2_test", "mean_wall_s")
    elif sort not in TEXT_COLUMNS and sort not in NUMBER_COLUMNS:
        raise QueryError(f"cannot sort by {sort!r}")
    else:
        columns = PAGE_COLUMNS
    with reader.lock:
        store = reader.store()
        if store is None:
            return ResultsPage(query, 0, columns, ())
        conn = store.conn
        if query.group_by:
            key = (reader.data_version(), where, tuple(args), query.group_by)
            groups = reader.group_cache.get(key)
            if groups is None:
                groups = _summarise(_group_frame(reader, conn, where, args).copy(), query.group_by)
                if len(reader.group_cache) >= 16:
                    reader.group_cache.clear()
                reader.group_cache[key] = groups
        else:
            total = conn.execute(f"SELECT count(*) FROM jobs{where}", args).fetchone()[0]
            order = f"{sort} {'DESC' if query.descending else 'ASC'} NULLS LAST, job_id"
            sql = f"SELECT {', '.join(columns)} FROM jobs{where} ORDER BY {order} LIMIT ? OFFSET ?"
            rows = tuple(conn.execute(sql, [*args, query.limit, query.offset]).fetchall())
    if query.group_by:
        rows, total = _window(groups, query, columns, sort if sort in columns else query.group_by[0])
    return ResultsPage(query, total, columns, rows, time.perf_counter() - started)


_FRAME_COLUMNS = (*GROUP_COLUMNS, "r2_test", "wall_s")


def _group_frame(reader: Reader, conn, where: str, args: list[Any]) -> pd.DataFrame:
    """The filtered rows' grouping columns, read once per data version and filter: any grouping
    is then a pandas group-by (medians: SQLite has none), not another pass over the table."""
    key = ("frame", reader.data_version(), where, tuple(args))
    frame = reader.group_cache.get(key)
    if frame is None:
        cursor = conn.cursor()
        cursor.row_factory = None  # every row of the table: its labels are shown through cell()
        raw = cursor.execute(f"SELECT {', '.join(_FRAME_COLUMNS)} FROM jobs{where}", args).fetchall()
        frame = pd.DataFrame(raw, columns=list(_FRAME_COLUMNS))
        reader.group_cache[key] = frame
    return frame


def prefetch_groups(reader: Reader, filter_text: str) -> None:
    """Read the grouping columns ahead (in a worker), so the first grouping is a cache hit."""
    where, args = where_clause(filter_text)
    with reader.lock:
        store = reader.store()
        if store is not None:
            _group_frame(reader, store.conn, where, args)


def _summarise(frame: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
    if frame.empty:
        return frame
    frame["ok"] = frame["status"] == "ok"
    frame["failed"] = ~frame["status"].isin(("ok", "pending", "running"))
    frame["r2_test"] = pd.to_numeric(frame["r2_test"], errors="coerce")
    frame["wall_s"] = pd.to_numeric(frame["wall_s"], errors="coerce")
    g = frame.groupby(list(group_by), sort=False, dropna=False)
    return pd.DataFrame({
        "jobs": g.size(), "ok": g["ok"].sum(), "failed": g["failed"].sum(),
        "median_r2_test": g["r2_test"].median(), "mean_r2_test": g["r2_test"].mean(),
        "best_r2_test": g["r2_test"].max(), "mean_wall_s": g["wall_s"].mean(),
    }).reset_index()


def _window(groups: pd.DataFrame, query: ResultsQuery, columns: tuple[str, ...], sort: str):
    if groups.empty:
        return (), 0
    ordered = groups.sort_values(
        [sort, *query.group_by], ascending=[not query.descending] + [True] * len(query.group_by), na_position="last", kind="stable"
    )
    window = ordered.iloc[query.offset : query.offset + query.limit]
    rows = tuple(
        tuple(None if (isinstance(v, float) and v != v) else (v.item() if hasattr(v, "item") else v) for v in row)
        for row in window[list(columns)].itertuples(index=False, name=None)
    )
    return rows, len(ordered)


def suites(reader: Reader) -> list[str]:
    with reader.lock:
        store = reader.store()
        if store is None:
            return []
        return [r[0] for r in store.conn.execute("SELECT DISTINCT suite FROM jobs ORDER BY suite")]


def job_row(reader: Reader, job_id: str) -> dict[str, Any] | None:
    with reader.lock:
        store = reader.store()
        if store is None:
            return None
        rows = _rows(store.conn, "SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        return rows[0] if rows else None
