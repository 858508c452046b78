"""A workspace read as untrusted input: each stored value through a typed reader.

A workspace may come from someone else (or be edited by hand): a JSON column may hold invalid
or deeply nested JSON, a text column a blob, a REAL column text. Each reader here turns a
malformed value into a default and one warning line on stderr naming the table, the row and the
column (once per table and column), so a command goes on with the rest instead of a traceback.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from srtui.engine.textsafe import visible

if TYPE_CHECKING:
    import pandas as pd

#: the most a stored JSON value may be: longer or deeper is malformed (no RecursionError later)
MAX_JSON_CHARS = 1 << 24
MAX_JSON_DEPTH = 64

_warned: set[tuple[str, str]] = set()
_lock = threading.Lock()


def warned() -> int:
    """How many warnings this process printed (a command that printed one keeps no answer)."""
    with _lock:
        return len(_warned)


def warn(table: str, row: object, column: str, why: str) -> None:
    """One line on stderr, once per (table, column): where the malformed value is, and why."""
    with _lock:
        if (table, column) in _warned:
            return
        _warned.add((table, column))
    line = f"srtui: warning: {table} row {row!s:.80} column {column}: {why}; read as empty"
    print(visible(line, one_line=True), file=sys.stderr)


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (iteratively: the check itself cannot recurse too deep)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            todo.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def stored_json(text: Any, table: str, row: object, column: str, default: Any = None, kind: type | None = None) -> Any:
    """The JSON value stored in ``table``.``column`` of ``row``; ``default`` (and a warning) when it
    is not a string of valid JSON within MAX_JSON_CHARS and MAX_JSON_DEPTH, or not of ``kind``."""
    if text is None:
        return default
    if not isinstance(text, str) or len(text) > MAX_JSON_CHARS:
        warn(table, row, column, "not JSON text" if not isinstance(text, str) else f"{len(text):,} characters of JSON")
        return default
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        warn(table, row, column, "not valid JSON")
        return default
    if _depth(value) > MAX_JSON_DEPTH:
        warn(table, row, column, f"JSON nested deeper than {MAX_JSON_DEPTH}")
        return default
    if kind is not None and not isinstance(value, kind):
        warn(table, row, column, f"JSON {type(value).__name__}, not {kind.__name__}")
        return default
    return value


def typed_jobs(frame: pd.DataFrame, table: str = "jobs") -> pd.DataFrame:
    """``frame`` (rows of ``table``) with each column of the job record (srtui.results.store.columns) of
    its kind: a number column's text, a text column's blob, become empty, with a warning."""
    import pandas as pd

    from srtui.results.store.columns import BY_NAME

    for name in frame.columns:
        column = BY_NAME.get(name)
        if column is None or not len(frame):
            continue
        values = frame[name]
        if column.kind in ("real", "int"):
            if pd.api.types.is_numeric_dtype(values):
                continue
            bad = _bad(values, lambda v: not isinstance(v, int | float) or isinstance(v, bool))
            frame[name] = pd.to_numeric(values.where(~bad), errors="coerce")
        else:
            if isinstance(values.dtype, pd.StringDtype):
                continue  # pandas' own strings (pandas 3 reads text so): each one a str or missing
            bad = _bad(values, lambda v: not isinstance(v, str))
            frame[name] = values.where(~bad, None)
        if bad.any():
            first = frame["job_id"][bad].iloc[0] if "job_id" in frame.columns else int(bad.to_numpy().argmax())
            warn(table, first, name, f"a {column.kind} column holds {type(values[bad].iloc[0]).__name__}")
    return frame


def _bad(values: pd.Series, wrong: Callable[[Any], bool]) -> pd.Series:
    """``wrong(value)`` of each value present (an empty one, None or NaN, is never wrong): a column
    of 100,000 jobs is mostly empty or of its kind, and the check is a Python call per value."""
    import pandas as pd

    bad = pd.Series(False, index=values.index)
    present = values.notna().to_numpy()
    if present.any():
        bad[present] = values[present].map(wrong).astype(bool).to_numpy()
    return bad


def task_infos(store: Any) -> dict[str, dict[str, Any]]:
    """Each task's stored description (``task_info``), a malformed one left out with a warning."""
    out: dict[str, dict[str, Any]] = {}
    for task, info in store.conn.execute("SELECT task, info FROM task_info"):
        if not isinstance(task, str):
            warn("task_info", repr(task)[:40], "task", "not a task name")
            continue
        value = stored_json(info, "task_info", task, "info", None, dict)
        if value is not None:
            out[task] = value
    return out


def typed_rows(rows: list[dict[str, Any]], table: str = "jobs", required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Rows of the job record with each value of its column's kind (a wrong one becomes None, with
    a warning); a row missing one of ``required`` is left out."""
    from srtui.results.store.columns import BY_NAME

    out = []
    for row in rows:
        for name, value in row.items():
            column = BY_NAME.get(name)
            if column is None or value is None:
                continue
            ok = (
                isinstance(value, int | float) and not isinstance(value, bool)
                if column.kind in ("real", "int")
                else isinstance(value, str)
            )
            if not ok:
                warn(table, row.get("job_id"), name, f"a {column.kind} column holds {type(value).__name__}")
                row[name] = None
        if all(row.get(name) is not None for name in required):
            out.append(row)
    return out
