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

import ctypes
import ctypes.util
import functools
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from srtui.results.store.filters import Term, joined
from srtui.results.store.schema import COUNT_KEYS

#: numeric columns held in memory (filters other than ~, sorts); REAL NULL is NaN
NUMBERS = ("seed", "r2_test", "wall_s")
DIMS = COUNT_KEYS
COLUMNS = (*DIMS, *NUMBERS, "job_id")
_CHUNK = 20_000
#: the orders computed ahead and kept: the first page's, R² best first and ascending (groupings)
WARM = (("task", False), ("r2_test", True), ("r2_test", False))
#: the first block of a sorted order a page walks (then doubling)
BLOCK = 4096
#: glibc's mallopt parameter: the size from which an allocation is its own mapping
_M_MMAP_THRESHOLD = -3


@functools.cache
def _free_big_arrays_to_the_os() -> None:
    """Fix glibc's threshold for allocations served by their own mapping at 128 KiB. By default
    it grows to the largest block freed (up to 32 MiB), after which the store's megabyte-sized
    temporaries (sorts, masks) come from the heap and stay resident after they are freed: about
    57 MB more at 1,000,000 jobs (338 against 281 MB, bench_tui.py). Elsewhere than glibc nothing changes."""
    name = ctypes.util.find_library("c")
    try:
        ctypes.CDLL(name).mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError):
        pass


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
    null: np.ndarray = np.isnan(values)
    if t.empty:
        return null if t.op == "=" else ~null
    wanted = np.asarray(t.values, dtype=np.float64)
    if t.op == "=":
        return np.isin(values, wanted)
    if t.op == "!=":  # x NOT IN (.., NULL, ..) is NULL in SQL; a bound NaN is a NULL
        return np.zeros(len(values), dtype=bool) if np.isnan(wanted).any() else ~np.isin(values, wanted) & ~null
    v = wanted[0]
    with np.errstate(invalid="ignore"):
        matches: np.ndarray = {">": values > v, "<": values < v, ">=": values >= v, "<=": values <= v}[t.op]
    return matches


class ColumnStore:
    """Every job's explorer columns. Not thread-safe: used under the Reader's lock."""

    def __init__(self) -> None:
        _free_big_arrays_to_the_os()
        self.seq = 0
        self.size = 0
        self.alive = np.zeros(0, dtype=bool)
        self.combo = np.zeros(0, dtype=np.int32)
        self.numbers = {c: np.zeros(0) for c in NUMBERS}
        #: the live rowids in job id order (SQLite's, from the primary key's index)
        self.by_job = np.zeros(0, dtype=np.int32)
        self.combos: list[tuple[str, str, str, str]] = []
        self._combo_ids: dict[tuple[str, str, str, str], int] = {}
        #: each combination's dimensions as integer codes (a grouping is integer work, not
        #: pandas over strings), and each dimension's labels by code
        self._dim_codes: list[list[int]] = [[] for _ in DIMS]
        self._dim_labels: list[dict[Any, int]] = [{} for _ in DIMS]
        #: numeric columns holding text somewhere (they go to SQL)
        self.exotic: set[str] = set()
        self._mem = sqlite3.connect(":memory:", check_same_thread=False)
        self._mem.execute(f"CREATE TABLE jobs (id INTEGER PRIMARY KEY, {', '.join(DIMS)})")
        self._ranks: dict[str, np.ndarray] = {}
        self._arrangements: dict[tuple[Any, ...], Any] = {}
        #: the live rowids in tie-break order: kept while no job is added or removed and none
        #: changes its task, method or seed (a run changes statuses and results only)
        self._ties: np.ndarray | None = None

    # --- loading and changes ---------------------------------------------------------------

    def load(self, conn: sqlite3.Connection) -> None:
        """Every job, in one read transaction (the connection is the loader's own). Each row's
        combination is looked up by SQLite in a temporary table of the combinations
        (job_counts of the same snapshot): the rows arrive as numbers only."""
        cur = conn.cursor()
        cur.row_factory = None  # exact values: they are compared, never shown
        cur.execute("BEGIN")
        try:
            self.seq = int(cur.execute("SELECT coalesce(max(seq), 0) FROM job_changes").fetchone()[0])
            top = int(cur.execute("SELECT coalesce(max(rowid), 0) FROM jobs").fetchone()[0])
            self._resize(top + 1)
            cols = ", ".join(DIMS)
            cur.execute(f"CREATE TEMP TABLE colstore_combos ({cols}, id INTEGER, PRIMARY KEY ({cols})) WITHOUT ROWID")
            for key in cur.execute(f"SELECT {cols} FROM job_counts").fetchall():
                cur.execute("INSERT INTO colstore_combos VALUES (?, ?, ?, ?, ?)", (*key, self._code(key)))
            on = " AND ".join(f"c.{k} = j.{k}" for k in DIMS)
            numbers = ", ".join(f"j.{c}" for c in NUMBERS)
            cur.execute(f"SELECT j.rowid, c.id, {numbers} FROM jobs j LEFT JOIN colstore_combos c ON {on}")
            while chunk := cur.fetchmany(_CHUNK):
                self._put_coded(chunk, conn)
            self._rank_job_ids(cur)
        finally:
            cur.execute("DROP TABLE IF EXISTS temp.colstore_combos")
            cur.execute("COMMIT")

    def _put_coded(self, rows: list[tuple[Any, ...]], conn: sqlite3.Connection) -> None:
        """Rows of (rowid, combination id, numbers...); a row without an id is read in full."""
        cols = list(zip(*rows))
        if any(c is None for c in cols[1]):
            ids = [r[0] for r in rows if r[1] is None]
            q = f"SELECT rowid, {', '.join(DIMS)}, {', '.join(NUMBERS)} FROM jobs WHERE rowid = ?"
            self._put([conn.execute(q, (i,)).fetchone() for i in ids])
            rows = [r for r in rows if r[1] is not None]
            if not rows:
                return
            cols = list(zip(*rows))
        at = np.asarray(cols[0], dtype=np.int64)
        self.combo[at] = np.asarray(cols[1], dtype=np.int32)
        self._numbers(at, cols[2:])

    def _numbers(self, ids: np.ndarray, columns: Sequence[Sequence[Any]]) -> None:
        for c, raw in zip(NUMBERS, columns):
            values, clean = _floats(raw)
            self.numbers[c][ids] = values
            if not clean:
                self.exotic.add(c)
        self.alive[ids] = True
        self._ranks.clear()
        self._arrangements.clear()

    def _resize(self, size: int) -> None:
        if size <= self.size:
            return
        grow = size - self.size
        self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
        self.combo = np.concatenate([self.combo, np.zeros(grow, dtype=np.int32)])
        for c in NUMBERS:
            self.numbers[c] = np.concatenate([self.numbers[c], np.full(grow, np.nan)])
        self.size = size

    def _code(self, key: tuple[str, str, str, str]) -> int:
        code = self._combo_ids.get(key)
        if code is None:
            code = self._combo_ids[key] = len(self.combos)
            self.combos.append(key)
            for codes, labels, label in zip(self._dim_codes, self._dim_labels, key):
                codes.append(labels.setdefault(label, len(labels)))
            self._mem.execute("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)", (code, *key))
        return code

    def _put(self, rows: Sequence[tuple[Any, ...]]) -> None:
        cols = list(zip(*rows))
        ids = np.asarray(cols[0], dtype=np.int64)
        self._resize(int(ids.max()) + 1)
        code = self._code
        self.combo[ids] = [code(k) for k in zip(*cols[1:5])]
        self._numbers(ids, cols[5:])

    def _rank_job_ids(self, cur: sqlite3.Cursor) -> None:
        rows = cur.execute("SELECT rowid FROM jobs ORDER BY job_id")
        self.by_job = np.fromiter((r[0] for r in rows), dtype=np.int32)
        self._ties = None

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
        if present and not self._keep_ties(present):
            self._ties = None
        if present:
            self._put(present)
        if inserted or gone:
            self._rank_job_ids(cur)
        self._ranks.clear()
        self._arrangements.clear()
        self.seq = int(last)
        return True

    def _keep_ties(self, rows: Sequence[tuple[Any, ...]]) -> bool:
        """Do these changed rows (rowid, dims..., numbers...) keep their task, method and seed?"""
        task, method, seed = 1 + DIMS.index("task"), 1 + DIMS.index("method"), 1 + len(DIMS) + NUMBERS.index("seed")
        for r in rows:
            if r[0] >= self.size or not self.alive[r[0]]:
                return False
            old = self.combos[self.combo[r[0]]]
            if (old[task - 1], old[method - 1]) != (r[task], r[method]) or self.numbers["seed"][r[0]] != r[seed]:
                return False
        return True

    # --- questions -----------------------------------------------------------------------------

    def answers(self, terms: Sequence[Term], sort: str | None) -> bool:
        """Can these conditions (and this sort; None: no sort) be answered from memory?"""

        def held(column: str | None, op: str = "=") -> bool:
            if column is None or column in DIMS:
                return True
            return column in NUMBERS and op != "~" and column not in self.exotic

        ties = sort in (None, "job_id") or "seed" not in self.exotic  # the tie-break reads seed
        return all(held(t.column, t.op) for t in terms) and (sort is None or sort == "job_id" or held(sort)) and ties

    def matching(self, terms: Sequence[Term]) -> np.ndarray:
        """Which rowids match every condition (``answers`` said they can): a mask."""
        mask = self.alive.copy()
        dims = [t for t in terms if t.column is None or t.column in DIMS]
        if dims:
            where, args = joined(list(dims))
            mask &= self.combo_mask(where, args)[self.combo]
        for t in terms:
            if t.column in NUMBERS:
                mask &= _compare(self.numbers[t.column], t)
        return mask

    def combo_mask(self, where: str, args: Sequence[Any]) -> np.ndarray:
        """Which combinations of suite, task, method and status match ``where`` (SQL over those
        columns only), answered by SQLite on the combinations."""
        keep = np.zeros(len(self.combos), dtype=bool)
        ids = [r[0] for r in self._mem.execute(f"SELECT id FROM jobs{where}", list(args))]
        keep[np.asarray(ids, dtype=np.int64)] = True
        return keep

    def _dim_rank(self, column: str) -> np.ndarray:
        """Every row's place among the distinct values of a text column (SQLite's BINARY order)."""
        found = self._ranks.get(column)
        if found is None:
            i = DIMS.index(column)
            labels = [k[i] for k in self.combos]
            order = sorted(set(labels), key=lambda v: v.encode("utf-8", "surrogatepass"))
            place = {v: n for n, v in enumerate(order)}
            found = self._ranks[column] = np.asarray([place[v] for v in labels], dtype=np.int32)[self.combo]
        return found

    def sorted_rows(self, column: str, descending: bool) -> np.ndarray:
        """Every live rowid in the order of ``srtui.results.store.explore_sql.order_by`` (cached until the
        next change): the tie-break order (reversed for a descending sort), stably sorted by the
        column."""
        key = ("sorted", column, descending)
        found = self._arrangements.get(key)
        if found is None:
            if column == "job_id":
                found = self.by_job[::-1].copy() if descending else self.by_job
            else:
                base = self._tiebreak()[::-1] if descending else self._tiebreak()
                if column in DIMS:
                    ranks = self._dim_rank(column)[base]
                    keys = (-ranks if descending else ranks).astype(
                        np.int16 if ranks.max(initial=0) < 2**15 else np.int64
                    )
                else:
                    values = self.numbers[column][base] + 0.0  # -0.0 is 0.0, as in SQL
                    keys = -values if descending else values  # NaN (NULL) sorts last either way
                found = base[np.argsort(keys, kind="stable")]
            others = [k for k in self._arrangements if k[0] == "sorted" and k[1:] not in WARM]
            for old in others[:-2]:  # 4 bytes a job each: the warmed orders and the last two
                del self._arrangements[old]
            self._arrangements[key] = found
        return found

    def _tiebreak(self) -> np.ndarray:
        """Every live rowid ascending by the tie-break (``srtui.results.store.schema.TIEBREAK``: task, method,
        seed) and job id. Two stable sorts of small integers (numpy's radix sort): the seeds'
        ranks, then each job's (task, method) rank, over the job id order."""
        if self._ties is None:
            base = self.by_job
            seeds = self.numbers["seed"][base]
            small = seeds.size and np.isfinite(seeds).all() and np.ptp(seeds) < 2**15
            if small and (seeds == np.floor(seeds)).all():
                seed_keys = (seeds - seeds.min()).astype(np.int16)  # the common case: a radix sort
            else:
                seed_keys = np.unique(seeds, return_inverse=True)[1].astype(np.int64)  # NaN ranks last
            base = base[np.argsort(seed_keys, kind="stable")]
            self._ties = base[np.argsort(self._pair_rank()[self.combo[base]], kind="stable")]
        return self._ties

    def _pair_rank(self) -> np.ndarray:
        """Each combination's place among the (task, method) pairs, in SQLite's BINARY order."""
        i, j = DIMS.index("task"), DIMS.index("method")
        pairs = [(k[i].encode("utf-8", "surrogatepass"), k[j].encode("utf-8", "surrogatepass")) for k in self.combos]
        place = {p: n for n, p in enumerate(sorted(set(pairs)))}
        ranks = np.asarray([place[p] for p in pairs], dtype=np.int64)
        return ranks.astype(np.int16 if len(place) < 2**15 else np.int32)

    def order(self, mask: np.ndarray, column: str, descending: bool, offset: int, limit: int) -> np.ndarray:
        """The rowids at places [offset, offset + limit) among the jobs in ``mask``, in the
        column's order: the sorted rowids are walked a block at a time until the window is full
        (a filter that keeps many jobs reads a few blocks, as an index walk would)."""
        ordered = self.sorted_rows(column, descending)
        found: list[np.ndarray] = []
        seen, start, block = 0, 0, BLOCK
        while start < len(ordered):
            chunk = ordered[start : start + block]
            start += block
            kept = chunk[mask[chunk]]
            if seen + len(kept) > offset:
                found.append(kept[max(0, offset - seen) :])
            seen += len(kept)
            if seen >= offset + limit:
                break
            block = min(block * 2, 1 << 20)
        taken = np.concatenate(found) if found else ordered[:0]
        return taken[:limit]

    def _arranged(
        self, group_by: tuple[str, ...]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
        """(group of each combination, the rowids with an R² ordered by group and then R², their
        groups, their R² values, combination keys per group) for every job, cached until the
        next change."""
        key = ("arranged", group_by)
        found = self._arrangements.get(key)
        if found is None:
            per_combo, first = self._group_of_combos(group_by)
            n = len(first)
            per_combo = per_combo.astype(np.int16 if n < 2**15 else np.int32)  # int16: a radix sort
            ordered, combo_of = self._by_r2()
            g = per_combo[combo_of]  # a gather from a small table: the combinations' groups
            at = np.argsort(g, kind="stable")  # each group's values stay ascending
            rows = ordered[at]
            keys = pd.DataFrame(
                [[self.combos[i][DIMS.index(d)] for d in group_by] for i in first], columns=list(group_by)
            )
            for old in [k for k in self._arrangements if k[0] == "arranged"][:-1]:  # memory: 14 bytes a job
                del self._arrangements[old]
            found = self._arrangements[key] = (per_combo, rows, g[at], self.numbers["r2_test"][rows], keys)
        return found

    def _per_combo(self, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(jobs, sum of wall times, jobs with a wall time) of each combination over the jobs in
        ``mask`` (None: every live job, cached until the next change: an unfiltered grouping sums
        these, not the jobs). Weighted counts over every row: a row that does not count adds 0.0,
        so the sums are those over the rows that count, in the same order."""
        if mask is None and ("per combo",) in self._arrangements:
            cached: tuple[np.ndarray, np.ndarray, np.ndarray] = self._arrangements[("per combo",)]
            return cached
        n = len(self.combos)
        if mask is not None and np.count_nonzero(mask) * 4 < len(mask):  # few jobs: take them out first
            combo, wall = self.combo[mask], self.numbers["wall_s"][mask]
            timed = ~np.isnan(wall)
            return (
                np.bincount(combo, minlength=n).astype(np.float64),
                np.bincount(combo[timed], weights=wall[timed], minlength=n),
                np.bincount(combo[timed], minlength=n).astype(np.float64),
            )
        wall = self.numbers["wall_s"]
        counted = self.alive if mask is None else mask
        timed = counted & ~np.isnan(wall)
        found = (
            np.bincount(self.combo, weights=counted, minlength=n),
            np.bincount(self.combo, weights=np.where(timed, wall, 0.0), minlength=n),
            np.bincount(self.combo, weights=timed, minlength=n),
        )
        if mask is None:
            self._arrangements[("per combo",)] = found
        return found

    def _by_r2(self) -> tuple[np.ndarray, np.ndarray]:
        """(the rowids with an R², ascending by it; their combinations), cached until the next
        change: what every grouping's arrangement starts from (2 bytes a job with an R²)."""
        found = self._arrangements.get(("by r2",))
        if found is None:
            ordered = self.by_value("r2_test")
            combos = self.combo[ordered].astype(np.int16 if len(self.combos) < 2**15 else np.int32)
            found = self._arrangements[("by r2",)] = (ordered, combos)
        return found

    def _group_of_combos(self, group_by: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(group of each combination, first combination of each group), groups numbered in
        order of first appearance (as pandas' ``ngroup(sort=False)``), from the integer codes."""
        key = np.zeros(len(self.combos), dtype=np.int64)
        for d in group_by:
            i = DIMS.index(d)
            key = key * max(1, len(self._dim_labels[i])) + np.asarray(self._dim_codes[i], dtype=np.int64)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[order] = np.arange(len(first))
        return rank[inverse.reshape(-1)], first[order]

    def by_value(self, column: str) -> np.ndarray:
        """The rowids with a value in ``column``, ascending by it (cached until the next
        change; the loader computes R²'s, so the first grouping need not)."""
        key = ("by", column)
        found = self._arrangements.get(key)
        if found is None:
            ascending = self.sorted_rows(column, False)
            found = self._arrangements[key] = ascending[: np.count_nonzero(~np.isnan(self.numbers[column][ascending]))]
        return found

    def warm(self) -> None:
        """Compute ahead (in the loader's worker) the orders the first keys need: the first
        page's (task), R² best first, and R² ascending with its rows' combinations (every
        grouping's medians), and each combination's sums (an unfiltered grouping's)."""
        for column, descending in WARM:
            self.sorted_rows(column, descending)
        self._by_r2()
        self._per_combo()

    def _status_flags(self) -> tuple[np.ndarray, np.ndarray]:
        """(ok, failed) of each combination, from the status codes."""
        i = DIMS.index("status")
        labels = self._dim_labels[i]
        by_code = np.empty(len(labels), dtype=object)
        for label, code in labels.items():
            by_code[code] = label
        status = by_code[np.asarray(self._dim_codes[i], dtype=np.int64)]
        return status == "ok", ~np.isin(status, ("ok", "pending", "running"))

    def groups(self, mask: np.ndarray | None, group_by: tuple[str, ...]) -> pd.DataFrame:
        """One row per group of the jobs in ``mask`` (None: every live job): the explorer's
        summary columns. Linear time: the jobs kept in order of group and R² (cached, with their
        values) are masked, so each group's values come out sorted (median and best are read
        off); sums are bincounts, over the combinations' cached sums when nothing is filtered."""
        per_combo, ordered, g, values, keys = self._arranged(group_by)
        n = len(keys)
        per, sums, times = self._per_combo(mask)  # jobs, wall time and timed jobs per combination
        if mask is not None:
            take = mask[ordered]
            g, values = g[take], values[take]
        ok, failed = self._status_flags()
        out = pd.DataFrame(
            {
                "jobs": np.bincount(per_combo, weights=per, minlength=n).astype(np.int64),
                "ok": np.bincount(per_combo, weights=per * ok, minlength=n).astype(np.int64),
                "failed": np.bincount(per_combo, weights=per * failed, minlength=n).astype(np.int64),
            }
        )
        counts = np.bincount(g, minlength=n)
        ends = np.cumsum(counts)
        has = counts > 0
        top = max(0, len(values) - 1)  # an empty group reads any value, then NaN in its place
        lo = np.where(has, ends - counts + (counts - 1) // 2, top)
        hi = np.where(has, ends - counts + counts // 2, top)
        last = np.where(has, ends - 1, top)
        picked = values if len(values) else np.full(1, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["median_r2_test"] = np.where(has, (picked[lo] + picked[hi]) / 2, np.nan)
            out["mean_r2_test"] = np.where(has, np.bincount(g, weights=values, minlength=n) / counts, np.nan)
            out["best_r2_test"] = np.where(has, picked[last], np.nan)
            out["mean_wall_s"] = np.bincount(per_combo, weights=sums, minlength=n) / np.bincount(
                per_combo, weights=times, minlength=n
            )
        out = pd.concat([keys.reset_index(drop=True), out], axis="columns")
        return out[out["jobs"] > 0].reset_index(drop=True)
