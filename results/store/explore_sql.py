"""The explorer's SQL path: counts, pages and groupings read by SQLite.

Used before the column store is loaded (the first paint), for a filter or sort on a column it
does not hold, and on a workspace of an older schema. Counts come from ``job_counts`` when the
filter is on suite, task, method and status only (exact, and free); any other count that would
take longer than a key press is estimated from a sample of rows and refined afterwards. Every
query runs under a progress handler, so a query a newer key superseded stops at once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.results.store.filters import Term, joined
from srtui.results.store.schema import COUNT_KEYS, TIEBREAK

if TYPE_CHECKING:
    from srtui.results.store.queries import Reader

COUNT_BUDGET_S = 0.08
SAMPLE = 2_000
_FRAME_COLUMNS = (*COUNT_KEYS, "r2_test", "wall_s")


class Cancelled(SrtuiError):
    """A newer query superseded this one (or its time budget ran out)."""


def never() -> bool:
    return False


_WATCHING: dict[int, list[Callable[[], int]]] = {}


@contextmanager
def watch(conn: sqlite3.Connection, cancelled: Callable[[], bool], budget_s: float | None = None) -> Iterator[None]:
    """SQLite polls ``cancelled`` (and the budget) every few thousand steps: a query stops with
    Cancelled instead of running on after a newer key, and the lock it holds is freed. Nested
    watches on one connection stack (an inner budget keeps the outer cancel)."""
    deadline = None if budget_s is None else time.perf_counter() + budget_s
    stack = _WATCHING.setdefault(id(conn), [])
    outer = stack[-1] if stack else None

    def stop() -> int:
        return int(
            (outer is not None and outer()) or cancelled() or (deadline is not None and time.perf_counter() > deadline)
        )

    stack.append(stop)
    conn.set_progress_handler(stop, 5_000)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise Cancelled("superseded") from None
        raise
    finally:
        stack.pop()
        conn.set_progress_handler(outer, 5_000) if outer else conn.set_progress_handler(None, 0)
        if not stack:
            _WATCHING.pop(id(conn), None)


def dims_only(terms: list[Term]) -> bool:
    return all(t.column is None or t.column in COUNT_KEYS for t in terms)


def has_counts(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_counts'").fetchone())


def count(conn: sqlite3.Connection, terms: list[Term], budget_s: float | None = None) -> tuple[int, bool]:
    """(jobs matching, exact?): from ``job_counts`` when it can answer; else counted, and
    estimated when counting takes longer than ``budget_s``."""
    where, args = joined(terms)
    if dims_only(terms) and has_counts(conn):
        return int(conn.execute(f"SELECT coalesce(sum(n), 0) FROM job_counts{where}", args).fetchone()[0]), True
    if budget_s is None:
        return int(conn.execute(f"SELECT count(*) FROM jobs{where}", args).fetchone()[0]), True
    stack = _WATCHING.get(id(conn))
    try:
        with watch(conn, never, budget_s):
            return int(conn.execute(f"SELECT count(*) FROM jobs{where}", args).fetchone()[0]), True
    except Cancelled:
        if stack and stack[-1]():  # superseded, not over budget
            raise
        return estimate(conn, terms), False


def estimate(conn: sqlite3.Connection, terms: list[Term]) -> int:
    """Jobs matching, estimated from ~2,000 rows spread evenly over the table."""
    where, args = joined(terms)
    top = int(conn.execute("SELECT coalesce(max(rowid), 0) FROM jobs").fetchone()[0])
    step = max(1, top // SAMPLE)
    sample = "WITH RECURSIVE s(r) AS (SELECT 1 UNION ALL SELECT r + ? FROM s WHERE r + ? <= ?) "
    cond = where.replace(" WHERE ", "", 1) or "1"
    seen, hits = conn.execute(
        f"{sample}SELECT count(*), count(*) FILTER (WHERE {cond}) FROM jobs WHERE rowid IN (SELECT r FROM s)",
        [step, step, top, *args],
    ).fetchone()
    total = (
        int(conn.execute("SELECT coalesce(sum(n), 0) FROM job_counts").fetchone()[0])
        if has_counts(conn)
        else int(conn.execute("SELECT count(*) FROM jobs").fetchone()[0])
    )
    return round(total * hits / seen) if seen else 0


def order_by(sort: str, descending: bool) -> str:
    """The explorer's order: the sort column (NULLs last), then the tie-break columns and job_id,
    all in the sort's direction (reversing a sort reverses the list; srtui.results.store.colstore agrees)."""
    direction = "DESC" if descending else "ASC"
    ties = [c for c in (*TIEBREAK, "job_id") if c != sort]
    return ", ".join([f"{sort} {direction} NULLS LAST", *(f"{c} {direction}" for c in ties)])


def page(
    conn: sqlite3.Connection, terms: list[Term], query: Any, columns: tuple[str, ...]
) -> tuple[tuple[Any, ...], ...]:
    """The window of ``query`` (srtui.results.store.explore.ResultsQuery): the plain SQL, which the
    index of the first page (task and the tie-break, schema v9) answers by an index walk."""
    where, args = joined(terms)
    order = order_by(query.sort, query.descending)
    sql = f"SELECT {', '.join(columns)} FROM jobs{where} ORDER BY {order} LIMIT ? OFFSET ?"
    return tuple(tuple(r) for r in conn.execute(sql, [*args, query.limit, query.offset]).fetchall())


def rows_by_id(conn: sqlite3.Connection, rowids: list[int], columns: tuple[str, ...]) -> tuple[tuple[Any, ...], ...]:
    """The given jobs' columns, in the given order."""
    if not rowids:
        return ()
    found = {
        r[0]: tuple(r[1:])
        for r in conn.execute(
            f"SELECT rowid, {', '.join(columns)} FROM jobs WHERE rowid IN ({','.join('?' * len(rowids))})", rowids
        )
    }
    return tuple(found[i] for i in rowids if i in found)


# --- groupings without the column store ------------------------------------------------------


def groups(reader: Reader, terms: list[Term], group_by: tuple[str, ...]) -> pd.DataFrame:
    """One row per group of the filtered jobs, read with pandas (cached per data version)."""
    where, args = joined(terms)
    key = (reader.data_version(), where, tuple(args), group_by)
    found = reader.group_cache.get(key)
    if found is None:
        store = reader.store()
        assert store is not None, "called with the store open"
        cursor = store.conn.cursor()
        cursor.row_factory = None  # every row of the table: its labels are shown through cell()
        raw = cursor.execute(f"SELECT {', '.join(_FRAME_COLUMNS)} FROM jobs{where}", args).fetchall()
        found = summarise(pd.DataFrame(raw, columns=list(_FRAME_COLUMNS)), group_by)
        if len(reader.group_cache) >= 16:
            reader.group_cache.clear()
        reader.group_cache[key] = found
    return found


def summarise(frame: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
    if frame.empty:
        return frame
    frame["ok"] = frame["status"] == "ok"
    frame["failed"] = ~frame["status"].isin(("ok", "pending", "running"))
    frame["r2_test"] = pd.to_numeric(frame["r2_test"], errors="coerce")
    frame["wall_s"] = pd.to_numeric(frame["wall_s"], errors="coerce")
    g = frame.groupby(list(group_by), sort=False, dropna=False)
    return pd.DataFrame(
        {
            "jobs": g.size(),
            "ok": g["ok"].sum(),
            "failed": g["failed"].sum(),
            "median_r2_test": g["r2_test"].median(),
            "mean_r2_test": g["r2_test"].mean(),
            "best_r2_test": g["r2_test"].max(),
            "mean_wall_s": g["wall_s"].mean(),
        }
    ).reset_index()
