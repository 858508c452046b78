"""The results explorer's queries: a filter language, pages of jobs, grouped summaries.

Never reads every job for a page: SQLite filters, sorts and windows. A grouping reads the
filtered rows' grouping columns once per data version and filter, and pandas groups them
(medians: SQLite has none), so re-sorting and paging a grouping are free.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from engine.errors import SrtuiError
from results.columns import GROUP_COLUMNS, NUMBER_COLUMNS, TEXT_COLUMNS
from results.queries import Reader

#: what a page of the explorer shows, in order
PAGE_COLUMNS = ("task", "method", "seed", "status", "r2_test", "wall_s", "model", "suite", "job_id")
SUMMARY_COLUMNS = ("jobs", "ok", "failed", "median_r2_test", "mean_r2_test", "best_r2_test", "mean_wall_s")
_FRAME_COLUMNS = (*GROUP_COLUMNS, "r2_test", "wall_s")
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_TOKEN = re.compile(
    rf"\s*(?:(?P<col>[a-z_0-9]+)(?P<op>!=|>=|<=|=|~|>|<)(?:(?P<quoted>{_QUOTED})(?=\s|$)|(?P<value>\S*))"
    rf"|(?P<qword>{_QUOTED})(?=\s|$)|(?P<word>\S+))"
)


class QueryError(SrtuiError, ValueError):
    """A filter the explorer cannot read; one line for the status bar."""


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


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def filter_token(column: str, value: Any) -> str:
    """The filter that matches exactly ``value`` in ``column``: quoted when it has a space, a
    comma or a quote; ``column=""`` for a missing value."""
    if value is None:
        return f'{column}=""'
    text = str(value)
    if text and not re.search(r'[\s,"\\]', text):
        return f"{column}={text}"
    return f'{column}="' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def where_clause(filter_text: str) -> tuple[str, list[Any]]:
    """``method=linear status!=ok r2_test>0.9 task~feyn free words`` -> SQL and bound values.

    ``=``/``!=`` take comma-separated alternatives, or one double-quoted value (spaces and commas
    kept, ``\\"`` for a quote; ``""`` is a missing value); ``~`` is a substring match; a bare word
    matches suite, task or method as a substring. Unknown columns or non-numbers are refused.
    """
    parts: list[str] = []
    args: list[Any] = []
    for m in _TOKEN.finditer(filter_text):
        if m["col"] is None:
            word = m["word"] if m["word"] is not None else _unquote(m["qword"] or '""')
            parts.append("(suite LIKE ? OR task LIKE ? OR method LIKE ?)")
            args += [f"%{word}%"] * 3
            continue
        col, op = m["col"], m["op"]
        if col not in TEXT_COLUMNS and col not in NUMBER_COLUMNS:
            raise QueryError(f"unknown column {col!r} in filter (known: {', '.join(TEXT_COLUMNS + NUMBER_COLUMNS)})")
        quoted = m["quoted"] is not None
        value = _unquote(m["quoted"]) if quoted else m["value"]
        if op == "~":
            parts.append(f"{col} LIKE ?")
            args.append(f"%{value}%")
            continue
        if quoted and value == "" and op in ("=", "!="):
            parts.append(f"{'NOT ' if op == '!=' else ''}({col} IS NULL OR {col} = '')")
            continue
        values: list[Any] = [value] if quoted else value.split(",")
        if col in NUMBER_COLUMNS:
            try:
                values = [float(v) for v in values]
            except ValueError:
                raise QueryError(f"{col} needs a number, got {value!r}") from None
        if op in ("=", "!="):
            parts.append(f"{col} {'NOT ' if op == '!=' else ''}IN ({','.join('?' * len(values))})")
            args += values
        elif len(values) != 1 or col not in NUMBER_COLUMNS:
            raise QueryError(f"{op} needs one number: {m.group(0).strip()!r}")
        else:
            parts.append(f"{col} {op} ?")
            args.append(values[0])
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def results_page(reader: Reader, query: ResultsQuery) -> ResultsPage:
    """One window of jobs (never all of them), or one row per group when grouping."""
    started = time.perf_counter()
    where, args = where_clause(query.filter_text)
    if query.group_by:
        for col in query.group_by:
            if col not in GROUP_COLUMNS:
                raise QueryError(f"cannot group by {col!r} (one of: {', '.join(GROUP_COLUMNS)})")
        columns: tuple[str, ...] = (*query.group_by, *SUMMARY_COLUMNS)
    elif query.sort not in TEXT_COLUMNS and query.sort not in NUMBER_COLUMNS:
        raise QueryError(f"cannot sort by {query.sort!r}")
    else:
        columns = PAGE_COLUMNS
    with reader.lock:
        store = reader.store()
        if store is None:
            return ResultsPage(query, 0, columns, ())
        if query.group_by:
            groups = _groups(reader, where, args, query.group_by)
        else:
            total = int(store.conn.execute(f"SELECT count(*) FROM jobs{where}", args).fetchone()[0])
            # ties in a stable, readable order (a task's runs by method, then seed), not by job hash
            ties = ", ".join(c for c in ("task", "method", "seed", "job_id") if c != query.sort)
            order = f"{query.sort} {'DESC' if query.descending else 'ASC'} NULLS LAST, {ties}"
            sql = f"SELECT {', '.join(columns)} FROM jobs{where} ORDER BY {order} LIMIT ? OFFSET ?"
            rows = tuple(tuple(r) for r in store.conn.execute(sql, [*args, query.limit, query.offset]).fetchall())
    if query.group_by:
        sort = query.sort if query.sort in columns else query.group_by[0]
        rows, total = _window(groups, query, columns, sort)
    return ResultsPage(query, total, columns, rows, time.perf_counter() - started)


def _groups(reader: Reader, where: str, args: list[Any], group_by: tuple[str, ...]) -> pd.DataFrame:
    key = (reader.data_version(), where, tuple(args), group_by)
    groups = reader.group_cache.get(key)
    if groups is None:
        groups = _summarise(_group_frame(reader, where, args).copy(), group_by)
        if len(reader.group_cache) >= 16:
            reader.group_cache.clear()
        reader.group_cache[key] = groups
    return groups


def _group_frame(reader: Reader, where: str, args: list[Any]) -> pd.DataFrame:
    """The filtered rows' grouping columns, read once per data version and filter."""
    key = ("frame", reader.data_version(), where, tuple(args))
    frame = reader.group_cache.get(key)
    if frame is None:
        store = reader.store()
        assert store is not None, "called with the store open"
        cursor = store.conn.cursor()
        cursor.row_factory = None  # every row of the table: its labels are shown through cell()
        raw = cursor.execute(f"SELECT {', '.join(_FRAME_COLUMNS)} FROM jobs{where}", args).fetchall()
        frame = pd.DataFrame(raw, columns=list(_FRAME_COLUMNS))
        reader.group_cache[key] = frame
    return frame


def prefetch_groups(reader: Reader, filter_text: str) -> None:
    """Read the grouping columns ahead (in a worker), so the first grouping is a cache hit."""
    where, args = where_clause(filter_text)
    with reader.lock:
        if reader.store() is not None:
            _group_frame(reader, where, args)


def _summarise(frame: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
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


def _window(
    groups: pd.DataFrame, query: ResultsQuery, columns: tuple[str, ...], sort: str
) -> tuple[tuple[tuple[Any, ...], ...], int]:
    if groups.empty:
        return (), 0
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
