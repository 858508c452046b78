"""The explorer's columns of every job, in memory: a column store of ~45 bytes a job.

A million jobs cannot be filtered, counted, sorted and grouped by SQLite within a key press (a
filter on one column and a sort on another reads the wide job rows at random). The explorer
therefore keeps the few columns it filters, sorts and groups on in numpy arrays, indexed by the
job's rowid: suite, task, method and status as one code per distinct combination (evaluated by
SQLite itself on those few combinations, so LIKE and = mean exactly what they mean in SQL), seed,
r2_test, wall_s and the rank of the job id (the tie-break). It is loaded once (its own
connection, in chunks) and then kept current from the ``job_changes`` log that triggers write
(schema v8), inside the read transaction of each page: an answer is always one snapshot's.
Only the page's 100 rows are read from the table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from results.filters import Term, joined
from results.schema import COUNT_KEYS

#: numeric columns held in memory (filters other than ~, sorts); REAL NULL is NaN
NUMBERS = ("seed", "r2_test", "wall_s")
DIMS = COUNT_KEYS
COLUMNS = (*DIMS, *NUMBERS, "job_id")
_CHUNK = 50_000
_SELECT = f"SELECT rowid, {', '.join(DIMS)}, {', '.join(NUMBERS)} FROM jobs"


def available(conn: sqlite3.Connection) -> bool:
    """The store has the change log (schema v8 or later)."""
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_changes'").fetchone())


def _floats(values: Sequence[Any]) -> tuple[np.ndarray, bool]:
    """Values as float64 (NULL -> NaN) and whether all were numbers or NULL (text in a REAL
    column is NaN here, as pandas' coerce makes it, and filters and sorts on it go to SQL)."""
    try:
        return np.asarray(values, dtype=np.float64), True
    except (TypeError, ValueError):
        coerced = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        return coerced, False


def _compare(values: np.ndarray, t: Term) -> np.ndarray:
    """A number condition as SQL evaluates it: NULL (NaN) matches no comparison."""
    null = np.isnan(values)
    if t.empty:
        return null if t.op == "=" else ~null
    wanted = np.asarray(t.values, dtype=np.float64)
    if t.op == "=":
        return np.isin(values, wanted)
    if t.op == "!=":  # x NOT IN (.., NULL, ..) is NULL in SQL; a bound NaN is a NULL
        return np.zeros(len(values), dtype=bool) if np.isnan(wanted).any() else ~np.isin(values, wanted) & ~null
    v = wanted[0]
    with np.errstate(invalid="ignore"):
        return {">": values > v, "<": values < v, ">=": values >= v, "<=": values <= v}[t.op]


class ColumnStore:
    """Every job's explorer columns. Not thread-safe: used under the Reader's lock."""

    def __init__(self) -> None:
        self.seq = 0
        self.size = 0
        self.alive = np.zeros(0, dtype=bool)
        self.combo = np.zeros(0, dtype=np.int32)
        self.numbers = {c: np.zeros(0) for c in NUMBERS}
        self.jrank = np.zeros(0, dtype=np.int64)
        self.combos: list[tuple[str, str, str, str]] = []
        self._combo_ids: dict[tuple[str, str, str, str], int] = {}
        #: numeric columns holding text somewhere (they go to SQL)
        self.exotic: set[str] = set()
        self._mem = sqlite3.connect(":memory:", check_same_thread=False)
        self._mem.execute(f"CREATE TABLE jobs (id INTEGER PRIMARY KEY, {', '.join(DIMS)})")
        self._ranks: dict[str, np.ndarray] = {}

    # --- loading and changes ---------------------------------------------------------------

    def load(self, conn: sqlite3.Connection) -> None:
        """Every job, in one read transaction (the connection is the loader's own)."""
        cur = conn.cursor()
        cur.row_factory = None  # exact values: they are compared, never shown
        cur.execute("BEGIN")
        try:
            self.seq = int(cur.execute("SELECT coalesce(max(seq), 0) FROM job_changes").fetchone()[0])
            top = int(cur.execute("SELECT coalesce(max(rowid), 0) FROM jobs").fetchone()[0])
            self._resize(top + 1)
            cur.execute(_SELECT)
            while chunk := cur.fetchmany(_CHUNK):
                self._put(chunk)
            self._rank_job_ids(cur)
        finally:
            cur.execute("COMMIT")

    def _resize(self, size: int) -> None:
        if size <= self.size:
            return
        grow = size - self.size
        self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
        self.combo = np.concatenate([self.combo, np.zeros(grow, dtype=np.int32)])
        for c in NUMBERS:
            self.numbers[c] = np.concatenate([self.numbers[c], np.full(grow, np.nan)])
        self.jrank = np.concatenate([self.jrank, np.zeros(grow, dtype=np.int64)])
        self.size = size

    def _code(self, key: tuple[str, str, str, str]) -> int:
        code = self._combo_ids.get(key)
        if code is None:
            code = self._combo_ids[key] = len(self.combos)
            self.combos.append(key)
            self._mem.execute("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)", (code, *key))
        return code

    def _put(self, rows: list[tuple[Any, ...]]) -> None:
        cols = list(zip(*rows))
        ids = np.asarray(cols[0], dtype=np.int64)
        self._resize(int(ids.max()) + 1)
        code = self._code
        self.combo[ids] = [code(k) for k in zip(*cols[1:5])]
        for i, c in enumerate(NUMBERS):
            values, clean = _floats(cols[5 + i])
            self.numbers[c][ids] = values
            if not clean:
                self.exotic.add(c)
        self.alive[ids] = True
        self._ranks.clear()

    def _rank_job_ids(self, cur: sqlite3.Cursor) -> None:
        """jrank[rowid] = the job id's place in SQLite's order (the index of the primary key)."""
        order = np.fromiter((r[0] for r in cur.execute("SELECT rowid FROM jobs ORDER BY job_id")), dtype=np.int64)
        self.jrank[order] = np.arange(len(order), dtype=np.int64)

    def sync(self, conn: sqlite3.Connection) -> bool:
        """Apply the logged changes since the last sync (the caller holds a read transaction).
        False: the log no longer reaches back that far, and the store must be loaded again."""
        first, last = conn.execute("SELECT min(seq), max(seq) FROM job_changes").fetchone()
        if last is None or last <= self.seq:
            return True
        if first > self.seq + 1:
            return False
        cur = conn.cursor()
        cur.row_factory = None
        changed = cur.execute(
            f"SELECT c.job_rowid, j.rowid, {', '.join(f'j.{c}' for c in (*DIMS, *NUMBERS))} FROM "
            "(SELECT DISTINCT job_rowid FROM job_changes WHERE seq > ?) c LEFT JOIN jobs j ON j.rowid = c.job_rowid",
            (self.seq,),
        ).fetchall()
        gone = [r[0] for r in changed if r[1] is None]
        present = [r[1:] for r in changed if r[1] is not None]
        inserted = any(r[1] >= self.size or not self.alive[r[1]] for r in changed if r[1] is not None)
        if gone:
            self.alive[np.asarray(gone, dtype=np.int64)] = False
        if present:
            self._put(present)
        if inserted or gone:
            self._rank_job_ids(cur)
        self._ranks.clear()
        self.seq = int(last)
        return True

    # --- questions -----------------------------------------------------------------------------

    def answers(self, terms: Sequence[Term], sort: str | None) -> bool:
        """Can these conditions (and this sort; None: no sort) be answered from memory?"""

        def held(column: str | None, op: str = "=") -> bool:
            if column is None or column in DIMS:
                return True
            return column in NUMBERS and op != "~" and column not in self.exotic

        return all(held(t.column, t.op) for t in terms) and (sort is None or sort == "job_id" or held(sort))

    def matching(self, terms: Sequence[Term]) -> np.ndarray:
        """The rowids of the jobs that match every condition (``answers`` said they can)."""
        mask = self.alive.copy()
        dims = [t for t in terms if t.column is None or t.column in DIMS]
        if dims:
            where, args = joined(list(dims))
            mask &= self.combo_mask(where, args)[self.combo]
        for t in terms:
            if t.column in NUMBERS:
                mask &= _compare(self.numbers[t.column], t)
        return np.flatnonzero(mask)

    def combo_mask(self, where: str, args: Sequence[Any]) -> np.ndarray:
        """Which combinations of suite, task, method and status match ``where`` (SQL over those
        columns only), answered by SQLite on the combinations."""
        keep = np.zeros(len(self.combos), dtype=bool)
        ids = [r[0] for r in self._mem.execute(f"SELECT id FROM jobs{where}", list(args))]
        keep[np.asarray(ids, dtype=np.int64)] = True
        return keep

    def rank(self, column: str) -> tuple[np.ndarray, np.ndarray | None]:
        """(dense rank of every row's value, NULL mask or None): equal values share a rank."""
        if column in DIMS:
            i = DIMS.index(column)
            labels = [k[i] for k in self.combos]
            order = sorted(set(labels), key=lambda v: v.encode("utf-8", "surrogatepass"))  # SQLite's BINARY
            place = {v: n for n, v in enumerate(order)}
            per_combo = np.asarray([place[v] for v in labels], dtype=np.int64)
            return per_combo[self.combo], None
        if column == "job_id":
            return self.jrank, None
        found = self._ranks.get(column)
        if found is None:
            values = self.numbers[column]
            null = np.isnan(values)
            ranks = np.zeros(self.size, dtype=np.int64)
            ranks[~null] = np.unique(values[~null], return_inverse=True)[1]
            found = self._ranks[column] = ranks
        return found, np.isnan(self.numbers[column])

    def order(self, rows: np.ndarray, column: str, descending: bool, offset: int, limit: int) -> np.ndarray:
        """The rowids at places [offset, offset + limit) of ``rows`` ordered by ``column`` (NULLs
        last either way) and then by job id: the order of ``ORDER BY column NULLS LAST, job_id``."""
        ranks, null = self.rank(column)
        r = ranks[rows]
        if descending:
            r = r.max(initial=0) - r
        if null is not None:
            r = np.where(null[rows], r.max(initial=0) + 1, r)
        key = (r << 32) + self.jrank[rows]
        end = min(offset + limit, len(rows))
        if end <= offset:
            return rows[:0]
        if end < len(rows):
            part = np.argpartition(key, end - 1)[:end]
        else:
            part = np.arange(len(rows))
        part = part[np.argsort(key[part], kind="stable")]
        return rows[part[offset:end]]

    def groups(self, rows: np.ndarray, group_by: tuple[str, ...]) -> pd.DataFrame:
        """One row per group of the given rows: the explorer's summary columns."""
        if not len(rows):
            return pd.DataFrame()
        combos = pd.DataFrame(self.combos, columns=list(DIMS))
        per_combo = combos.groupby(list(group_by), sort=False).ngroup().to_numpy()
        gid = per_combo[self.combo[rows]]
        status = combos["status"].to_numpy()
        ok = (status == "ok")[self.combo[rows]]
        failed = ~np.isin(status, ("ok", "pending", "running"))[self.combo[rows]]
        n = int(per_combo.max()) + 1
        r2 = pd.Series(self.numbers["r2_test"][rows]).groupby(gid)
        out = pd.DataFrame(
            {
                "jobs": np.bincount(gid, minlength=n),
                "ok": np.bincount(gid, weights=ok, minlength=n).astype(np.int64),
                "failed": np.bincount(gid, weights=failed, minlength=n).astype(np.int64),
            }
        )
        out["median_r2_test"] = r2.median()
        out["mean_r2_test"] = r2.mean()
        out["best_r2_test"] = r2.max()
        out["mean_wall_s"] = pd.Series(self.numbers["wall_s"][rows]).groupby(gid).mean()
        keys = combos.groupby(per_combo, sort=True)[list(group_by)].first()
        out = pd.concat([keys, out], axis=1)
        return out[out["jobs"] > 0].reset_index(drop=True)
