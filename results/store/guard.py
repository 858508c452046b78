"""A workspace database is data, never code: what ``Store`` does to every connection it opens.

A colleague's ``srtui.db`` may hold a trigger on ``jobs`` (one rewrote every new result, one ran
an endless recursive CTE that no signal could stop), a view, a virtual table or an index srtui
never made. On open, ``check_objects`` compares ``sqlite_master`` (read as plain rows: nothing in
it runs) with the objects srtui's own migrations make, and refuses the first stranger in one
line, naming it. ``protect`` turns ``trusted_schema`` off and installs a progress handler: a
statement past its time budget is stopped, and so is one still running a second after Ctrl-C or
SIGTERM (``request_stop``, called by the CLI's handlers; a plain Ctrl-C raised inside the
handler counts too), so no file can hang a command.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from functools import cache
from pathlib import Path

from srtui.engine.errors import SrtuiError

#: SQLite VM instructions between two calls of the progress handler (microseconds of work)
TICK_OPS = 10_000
#: a statement still running this long after a stop request is stopped
STOP_GRACE_S = 0.5
#: default per-statement budget (``SRTUI_QUERY_BUDGET_S``); srtui's own queries take well under
#: a second even on the largest workspaces measured (docs/benchmarks.md)
BUDGET_S = 300.0
#: ticks further apart than this belong to different statements
_GAP_S = 0.05


class ForeignObjectError(SrtuiError):
    """The database holds an object srtui did not make; one line naming it."""


class QueryStopped(SrtuiError):
    """A statement was stopped (Ctrl-C, SIGTERM, or its time budget); one line."""

    exit_code = 130


_state = threading.local()
_stop_at = [0.0]  # monotonic time of the last stop request (0: none)
_stopped: list[str] = []  # why statements were stopped, newest last


def request_stop() -> None:
    """A signal arrived: a statement that began before it and still runs ``STOP_GRACE_S``
    later is stopped (one beginning after it, such as recording the interrupted jobs, runs)."""
    _stop_at[0] = time.monotonic()


def why_stopped(exc: BaseException) -> str | None:
    """One line if ``exc`` is a statement this module stopped, else None."""
    if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
        return _stopped[-1] if _stopped else "interrupted: a query on the workspace was stopped"
    return None


def _budget() -> float:
    try:
        return max(0.1, float(os.environ.get("SRTUI_QUERY_BUDGET_S", BUDGET_S)))
    except ValueError:
        return BUDGET_S


def _progress(path: Path, budget: float) -> int:
    """Called every ``TICK_OPS`` instructions of a statement: non-zero stops it."""
    try:
        now = time.monotonic()
        if now - getattr(_state, "last", 0.0) > _GAP_S:
            _state.since = now  # a new statement (or a new burst of one)
        _state.last = now
        since: float = _state.since
        stop_at = _stop_at[0]
        if stop_at and since <= stop_at and now - stop_at >= STOP_GRACE_S:
            _stopped.append(f"interrupted: a query on {path} was stopped")
            return 1
        if now - since > budget:
            _stopped.append(f"a query on {path} ran past its {budget:g} s budget (SRTUI_QUERY_BUDGET_S): stopped")
            return 1
        return 0
    except KeyboardInterrupt:  # the default Ctrl-C handler ran here: the user wants out
        _stopped.append(f"interrupted: a query on {path} was stopped")
        return 1


def protect(conn: sqlite3.Connection, path: Path) -> None:
    """No function in the schema runs unless innocuous; every statement interruptible."""
    conn.execute("PRAGMA trusted_schema = OFF")
    budget = _budget()
    conn.set_progress_handler(lambda: _progress(path, budget), TICK_OPS)


def _norm(sql: str | None) -> str:
    return re.sub(r"\s+", " ", sql or "").strip()


@cache
def own_objects() -> frozenset[tuple[str, str, str]]:
    """(type, name, sql) of every object srtui's migrations make, at any schema version (an
    older workspace holds what its version made). Tables by name only: their SQL changes with
    ``ALTER TABLE``; a virtual table is never one of ours."""
    from srtui.results.store import schema

    conn = sqlite3.connect(":memory:")
    seen: set[tuple[str, str, str]] = set()
    try:
        for step in schema.MIGRATIONS:
            step(conn)
            for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
                seen.add((kind, name, "" if kind == "table" else _norm(sql)))
    finally:
        conn.close()
    return frozenset(seen)


def check_objects(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, in one line naming it, the first object of ``sqlite_master`` srtui did not make."""
    own = own_objects()
    rows = conn.execute("SELECT type, name, sql FROM main.sqlite_master ORDER BY rowid").fetchall()
    for kind, name, sql in rows:
        text = _norm(sql)
        if kind == "table":
            if not text.upper().startswith("CREATE VIRTUAL TABLE"):
                continue  # someone's plain table: inert data srtui never reads
            what = "virtual table"
        elif (kind, name, text) in own or (kind == "index" and sql is None):
            continue  # ours, or SQLite's own index of a table's UNIQUE or PRIMARY KEY (no code)
        else:
            what = str(kind)
        shown = str(name)[:80].encode("unicode_escape").decode("ascii")
        raise ForeignObjectError(
            f"{path} holds a {what} srtui did not make ({shown!r}): refused, a workspace is data, never code "
            "(drop it with the sqlite3 shell if you trust it, or use a copy without it)"
        )
