"""A stored text read a page at a time: a crafted workspace may hold a 50 MB model (runs cap a model
at 100,000 characters), and reading it whole (then making it visible, then laying it out) stalled
the app for seconds to minutes. A text over ``READ_WHOLE_MAX_BYTES`` is never read whole: its size
comes from SQLite's incremental blob I/O, and each page of ``PAGE_BYTES`` is read from the same
blob (milliseconds whatever the text's size), cut at character boundaries and made visible
(srtui.engine.textsafe) like every text the app shows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from srtui.engine.textsafe import visible
from srtui.results.store.queries import Reader

#: over this many bytes a stored text is read a page at a time (the one safe parser reads at most
#: 20,000 characters, so such a model is never parsed anyway)
READ_WHOLE_MAX_BYTES = 80_000
#: bytes per page of a stored text
PAGE_BYTES = 4000
#: how SQLite's database encodings read in Python
_CODECS = {"UTF-8": "utf-8", "UTF-16le": "utf-16-le", "UTF-16be": "utf-16-be"}


@dataclass(frozen=True)
class StoredText:
    """Where a long text lives (table, column, rowid) and its size in bytes."""

    table: str
    column: str
    rowid: int
    size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.size // PAGE_BYTES))


def _codec(conn: sqlite3.Connection) -> str:
    (encoding,) = conn.execute("PRAGMA encoding").fetchone()
    return _CODECS.get(str(encoding), "utf-8")


def read_column(conn: sqlite3.Connection, table: str, column: str, rowid: int) -> str | StoredText | None:
    """One text column of one row: the text (made visible) when it is at most
    READ_WHOLE_MAX_BYTES, else where it is and its size; None when it is NULL."""
    (kind,) = conn.execute(f'SELECT typeof("{column}") FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
    if kind == "null":
        return None
    if kind not in ("text", "blob"):  # a number where text belongs: small
        (value,) = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
        return visible(str(value))
    with conn.blobopen(table, column, rowid, readonly=True) as blob:
        size = len(blob)
        if size > READ_WHOLE_MAX_BYTES:
            return StoredText(table, column, rowid, size)
        data = blob.read()
    return visible(data.decode(_codec(conn), "replace"))


def _cut(data: bytes, start: int, end: int, utf8: bool) -> tuple[int, int]:
    """Byte offsets in ``data`` (read from ``start``) of the page [start, end) moved to whole
    UTF-8 characters: a character split by a page's start belongs to the page before."""
    lo, hi = 0, end - start
    if utf8:
        while lo < min(4, len(data)) and start > 0 and data[lo] & 0xC0 == 0x80:
            lo += 1
        while hi < len(data) and data[hi] & 0xC0 == 0x80:
            hi += 1
    return lo, min(hi, len(data))


def read_page(reader: Reader, stored: StoredText, page: int) -> tuple[str, int, int]:
    """Page ``page`` (from 0) of a stored text: (the page made visible, its first byte, its last
    byte), both counted from 1."""
    page = min(max(page, 0), stored.pages - 1)
    start, end = page * PAGE_BYTES, min((page + 1) * PAGE_BYTES, stored.size)
    with reader.lock:
        store = reader.store()
        if store is None:
            return "", 0, 0
        codec = _codec(store.conn)
        with store.conn.blobopen(stored.table, stored.column, stored.rowid, readonly=True) as blob:
            blob.seek(start)
            data = blob.read(end - start + 4)  # room to finish a character the page cuts
    lo, hi = _cut(data, start, end, codec == "utf-8")
    return visible(data[lo:hi].decode(codec, "replace")), start + lo + 1, start + hi


def row_with_long_text(reader: Reader, table: str, key: str, value: Any, column: str) -> dict[str, Any] | None:
    """One row of ``table`` by ``key``, every column but ``column`` as the reader reads it and
    ``column`` through ``read_column`` (a StoredText when it is too long to read whole)."""
    with reader.lock:
        store = reader.store()
        if store is None:
            return None
        conn = store.conn
        names = [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")')]
        others = ", ".join(f'"{n}"' for n in names if n != column)
        cur = conn.execute(f'SELECT rowid, {others} FROM "{table}" WHERE "{key}" = ?', (value,))
        found = cur.fetchone()
        if found is None:
            return None
        row = dict(zip([d[0] for d in cur.description], found))
        rowid = row.pop("rowid")
        row[column] = read_column(conn, table, column, rowid) if column in names else None
        return row
