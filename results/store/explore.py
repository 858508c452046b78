"""The results explorer's queries: a filter language, pages of jobs, grouped summaries.

Never reads every job for a page. Two paths give the same answers (tests/e2e/test_explore_scale.py):
the column store (srtui.results.store.colstore), where numpy filters, sorts and groups every job's explorer
columns in memory, and, until it is loaded or for a filter on another column, SQL
(srtui.results.store.explore_sql): SQLite filters, sorts and windows, and a grouping reads the filtered rows'
grouping columns once per data version and filter for pandas to group (medians: SQLite has none).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from srtui.results.store import explore_sql
from srtui.results.store.columns import GROUP_COLUMNS, NUMBER_COLUMNS, TEXT_COLUMNS
from srtui.results.store.explore_sql import never
from srtui.results.store.filters import QueryError, Term, filter_token, parse_filter, where_clause
from srtui.results.store.queries import Reader
from srtui.results.store.store import Store

#: what a page of the explorer shows, in order
PAGE_COLUMNS = ("task", "method", "seed", "status", "r2_test", "wall_s", "model", "suite", "job_id")
SUMMARY_COLUMNS = ("jobs", "ok", "failed", "median_r2_test", "mean_r2_test", "best_r2_test", "mean_wall_s")


@dataclass(frozen=True)
class ResultsQuery:
    """Filter, sort and grouping of the explorer. ``filter_text`` is the user's typed filter."""

    filter_text: str = ""
    sort: str = "job_id"
    descending: bool = False
    group_by: tuple[str, ...] = ()
    offset: int = 0
    limit: int = 100


@dataclass(frozen=True)
class ResultsPage:
    query: ResultsQuery
    total: int
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    seconds: float = 0.0
    #: False: ``total`` is an estimate (a count that would have taken long), refined later
    exact: bool = True
    #: CPU seconds of the reading thread (``seconds`` is wall time, which a loaded machine stretches)
    cpu_seconds: float = 0.0


def _columns(query: ResultsQuery) -> tuple[str, ...]:
    if query.group_by:
        for col in query.group_by:
            if col not in GROUP_COLUMNS:
                raise QueryError(f"cannot group by {col!r} (one of: {', '.join(GROUP_COLUMNS)})")
        return (*query.group_by, *SUMMARY_COLUMNS)
    if query.sort not in TEXT_COLUMNS and query.sort not in NUMBER_COLUMNS:
        raise QueryError(f"cannot sort by {query.sort!r}")
    return PAGE_COLUMNS


def results_page(reader: Reader, query: ResultsQuery, cancelled: Callable[[], bool] = never) -> ResultsPage:
    """One window of jobs (never all of them), or one row per group when grouping.

    From the reader's column store when it has one and the filter and sort are on its columns
    (srtui.results.store.colstore), else from SQL (srtui.results.store.explore_sql), where a count that takes long is
    estimated (``exact`` False; :func:`count_jobs` refines it). ``cancelled`` is polled while
    SQLite works: a query a newer key superseded stops (explore_sql.Cancelled)."""
    started, cpu = time.perf_counter(), time.thread_time()
    terms = parse_filter(query.filter_text)
    columns = _columns(query)
    with reader.lock:
        store = reader.store()
        if store is None:
            return ResultsPage(query, 0, columns, ())
        with explore_sql.watch(store.conn, cancelled):
            found = _from_columns(reader, store, query, terms, columns)
            if found is None:
                found = _from_sql(reader, store, query, terms, columns)
    rows, total, exact = found
    return ResultsPage(query, total, columns, rows, time.perf_counter() - started, exact, time.thread_time() - cpu)


Found = tuple[tuple[tuple[Any, ...], ...], int, bool]


def _from_sql(reader: Reader, store: Store, query: ResultsQuery, terms: list[Term], columns: tuple[str, ...]) -> Found:
    if query.group_by:
        groups = explore_sql.groups(reader, terms, query.group_by)
        rows, total = _window(groups, query, columns)
        return rows, total, True
    total, exact = explore_sql.count(store.conn, terms, budget_s=explore_sql.COUNT_BUDGET_S)
    return explore_sql.page(store.conn, terms, query, columns), total, exact


def _from_columns(
    reader: Reader, store: Store, query: ResultsQuery, terms: list[Term], columns: tuple[str, ...]
) -> Found | None:
    """The page from the column store, in one read transaction with its sync; None when the
    column store cannot answer (not loaded, a filter or sort on another column)."""
    cs = reader.columns
    if cs is None or not cs.answers(terms, None if query.group_by else query.sort):
        return None
    conn = store.conn
    if conn.in_transaction:  # left open by a query stopped half-way
        conn.execute("ROLLBACK")
    conn.execute("BEGIN")
    try:
        if not cs.sync(conn):
            reader.columns = None  # too far behind the change log: loaded again
            return None
        if query.group_by:
            key = ("groups", cs.seq, query.filter_text, query.group_by)
            groups = reader.group_cache.get(key)
            if groups is None:
                mask = cs.matching(terms) if terms else None  # None: every job, from cached sums
                groups = reader.group_cache[key] = cs.groups(mask, query.group_by)
                _trim(reader.group_cache)
            window, total = _window(groups, query, columns)
            return window, total, True
        mask = cs.matching(terms)
        ids = cs.order(mask, query.sort, query.descending, query.offset, query.limit)
        return explore_sql.rows_by_id(conn, [int(i) for i in ids], columns), int(np.count_nonzero(mask)), True
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _trim(cache: dict[Any, Any], keep: int = 8) -> None:
    while len(cache) > keep:
        del cache[next(iter(cache))]


def count_jobs(reader: Reader, query: ResultsQuery, cancelled: Callable[[], bool] = never) -> int | None:
    """The exact count of a page whose count was estimated (None: no store)."""
    terms = parse_filter(query.filter_text)
    with reader.lock:
        store = reader.store()
        if store is None:
            return None
        with explore_sql.watch(store.conn, cancelled):
            return explore_sql.count(store.conn, terms)[0]


def _window(
    groups: pd.DataFrame, query: ResultsQuery, columns: tuple[str, ...]
) -> tuple[tuple[tuple[Any, ...], ...], int]:
    if groups.empty:
        return (), 0
    sort = query.sort if query.sort in columns else query.group_by[0]
    ordered = groups.sort_values(
        [sort, *query.group_by],
        ascending=[not query.descending] + [True] * len(query.group_by),
        na_position="last",
        kind="stable",
    )
    window = ordered.iloc[query.offset : query.offset + query.limit]
    rows = tuple(
        tuple(
            None if (isinstance(v, float) and math.isnan(v)) else (v.item() if hasattr(v, "item") else v) for v in row
        )
        for row in window[list(columns)].itertuples(index=False, name=None)
    )
    return rows, len(ordered)


def prefetch_columns(reader: Reader) -> bool:
    """Load the reader's column store when it has none (in a worker: seconds for a million
    jobs); pages are read from SQL meanwhile. False when the workspace cannot have one."""
    return reader.columns is not None or reader.load_columns()


__all__ = [
    "PAGE_COLUMNS",
    "SUMMARY_COLUMNS",
    "QueryError",
    "ResultsPage",
    "ResultsQuery",
    "count_jobs",
    "filter_token",
    "prefetch_columns",
    "results_page",
    "where_clause",
]
