"""What the Pareto and point figures draw of srbench2021 (its leaderboard, each dataset's ranks
and medians) as plain arrays, ``RankBoard``, made one of two ways:

* ``from_score``: from the rule's ``Score`` (any runs: a CSV, ``--published``, either profile);
* ``from_store``: from a workspace's store through its query functions, with numpy only, for the
  usual case: a workspace's runs under the reference profile. `srtui plot pareto` (or
  ``points``) then imports no pandas (0.4 s of CPU, #56). It answers None (and the figure scores
  the runs table as before) whenever the rule would say more than the board: a run never
  attempted or pending (the coverage note), jobs of several protocols, a value of the wrong
  type (the runs table's warning), no stored ``srbench2021.size`` (the rule's error), a tuned
  suite (its search's time is the training time).

Both give the same numbers: the steps below are the rule's reference steps
(``srtui.results.scoring.rules.srbench2021._reference``: failed runs dropped, per (method, task)
the medians, rounded to 3 decimals and ranked per task with ties averaged, the median over tasks
of each rank, the published fronts, the board's order), and tests/e2e/test_figure_ranks.py holds
them equal, board, ranks, values, notes and the drawn files, on a real workspace.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.results.metrics.fronts import PUBLISHED_LEVELS, few_fronts_note, published_fronts
from srtui.results.metrics.profiles import Profile

if TYPE_CHECKING:
    from srtui.results.scoring.base import Score
    from srtui.results.store.store import Store

SIZE = "srbench2021.size"  # the size the reference profile ranks (srbench2021's evaluate_model)
TIME = "training_s"  # srtui.results.scoring.rules.srbench2021.TRAINING
#: a job's row as read here: method, task, seed, status, test R², size, training time
Row = tuple[str, str, Any, Any, float, float, float]
#: statuses the coverage note speaks of (srtui.results.scoring.base.NOT_RUN): then the rule's path
NOT_RUN_SQL = "SELECT 1 FROM jobs WHERE status IN ('missing', 'pending', 'running', {}){} LIMIT 1"


@dataclass(frozen=True)
class RankBoard:
    """srbench2021's leaderboard as the Pareto figure reads it, in the board's order."""

    methods: tuple[str, ...]
    x: np.ndarray  # the R² rank column (reference: median rank, 1 = best)
    y: np.ndarray  # the size rank column
    front: np.ndarray  # the front of each method (reference: 0, 1, ...; -1 on none)
    #: per method its per-dataset ranks (R², size), datasets in sorted order: the intervals
    per_task: dict[str, tuple[np.ndarray, np.ndarray]]
    reference: bool
    notes: tuple[str, ...] = ()
    stored: bool = False  # read from the store (from_store): its notes are the rule's it stands for
    #: per method the per-dataset values ranked, datasets in sorted order: test R² (``r2``),
    #: model size (``size``) and, when the runs have one, training time (``time``): `plot points`
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


def from_score(s: Score) -> RankBoard:
    """The board of the rule's Score, either profile."""
    board, per = s.main, s.tables["per_task"]
    ref = s.profile == Profile.REFERENCE
    xcol, ycol, fcol = (
        ("median_rank_r2", "median_rank_size", "pareto_front") if ref else ("rank_r2", "rank_size", "pareto_rank")
    )
    methods = tuple(str(m) for m in board["method"])
    ranks = {
        m: (
            per.loc[per["method"] == m, "rank_r2"].to_numpy(dtype=float),
            per.loc[per["method"] == m, "rank_size"].to_numpy(dtype=float),
        )
        for m in methods
    }
    cols = {"r2": "r2_test", "size": str(s.options["size"]), **({"time": TIME} if TIME in per.columns else {})}
    values = {
        str(m): {key: per.loc[per["method"] == m, col].to_numpy(dtype=float) for key, col in cols.items()}
        for m in per["method"].drop_duplicates()
    }
    x, y = board[xcol].to_numpy(dtype=float), board[ycol].to_numpy(dtype=float)
    return RankBoard(methods, x, y, board[fcol].to_numpy(), ranks, ref, tuple(s.notes), False, values)


def from_store(store: Store, suite: str | None, options: dict[str, Any]) -> RankBoard | None:
    """The reference board of the workspace's runs (one suite's with ``suite``), read with numpy;
    None when only the rule can say what it would (see the module's docstring)."""
    if {k: str(v) for k, v in options.items()} not in ({}, {"profile": str(Profile.REFERENCE)}):
        return None
    try:
        rows = _rows(store, suite)
        if not rows or not _has_size(rows) or _incomplete(rows):
            return None
        if _not_run(store, suite) or _protocols(store, suite) > 1 or _tuned(store):
            return None
    except sqlite3.OperationalError:  # an older schema's store: the runs table reads what it has
        return None
    cells: dict[tuple[str, str], tuple[list[float], list[float], list[float]]] = {}
    for method, task, _seed, status, r2, size, time in rows:
        if (status is None or status == "ok") and not math.isnan(r2):  # drop_failed: SRBench has no file
            values = cells.setdefault((method, task), ([], [], []))
            values[0].append(r2)
            values[1].append(size)
            values[2].append(time)
    return _board(cells) if cells else None  # no finished run: the rule says what then


def _rows(store: Store, suite: str | None) -> list[Row] | None:
    """Each job's row; None when a value is not of its column's kind (the runs table warns of
    it). The training time is ``fit_s``, else ``wall_s`` (``with_training_time`` of a store
    without tuned suites)."""
    where, args = (" WHERE j.suite = ?", (suite,)) if suite else ("", ())
    q = (
        "SELECT j.method, j.task, j.seed, j.status, j.r2_test, "
        f"(SELECT m.value FROM metrics m WHERE m.job_id = j.job_id AND m.name = '{SIZE}'), "
        f"j.fit_s, j.wall_s FROM jobs j{where}"
    )
    out = []
    for method, task, seed, status, r2, size, fit, wall in store.conn.execute(q, args):
        if not (isinstance(method, str) and isinstance(task, str) and isinstance(status, str | None)):
            return None
        if not (_number(r2) and _number(seed) and seed is not None and _number(fit) and _number(wall)):
            return None
        r2f = float(r2) if r2 is not None and math.isfinite(r2) else math.nan  # no accuracy: not finite
        time = fit if fit is not None else wall
        out.append((method, task, seed, status, r2f, _float(size), _float(time)))
    return out


def _float(v: Any) -> float:
    """A metric's stored value as the runs table reads it: a number, else NaN."""
    return float(v) if v is not None and _number(v) else math.nan


def _number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool))


def _has_size(rows: list[Row]) -> bool:
    return any(not math.isnan(r[5]) for r in rows)


def _not_run(store: Store, suite: str | None) -> bool:
    from srtui.engine.spec import RETRY_AUTOMATIC

    marks = ", ".join("?" * len(RETRY_AUTOMATIC))
    q = NOT_RUN_SQL.format(marks, " AND suite = ?" if suite else "")
    return store.conn.execute(q, (*sorted(RETRY_AUTOMATIC), *([suite] if suite else []))).fetchone() is not None


def _tuned(store: Store) -> bool:
    """Whether some job is a tuning search's (its final jobs' training time adds the search's)."""
    from srtui.results.store.tuning import TUNING_SUFFIX

    q = "SELECT 1 FROM jobs WHERE suite LIKE ? LIMIT 1"
    return store.conn.execute(q, ("%" + TUNING_SUFFIX,)).fetchone() is not None


def _incomplete(rows: list[Row]) -> bool:
    """Whether some method lacks a (task, seed) another method ran (``complete``'s missing runs)."""
    seeds: dict[str, set[Any]] = {}
    have = set()
    for method, task, seed, *_ in rows:
        seeds.setdefault(task, set()).add(seed)
        have.add((task, method, seed))
    methods = {r[0] for r in rows}
    return sum(len(s) for s in seeds.values()) * len(methods) != len(have)


def _protocols(store: Store, suite: str | None) -> int:
    """How many protocols the jobs ran under (srtui.results.scoring.mixed's keys)."""
    from srtui.engine.protocols import protocol_key

    where, args = (" WHERE suite = ?", (suite,)) if suite else ("", ())
    keys = set()
    for (text,) in store.conn.execute(f"SELECT DISTINCT protocol FROM jobs{where}", args):
        try:
            record = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            record = None
        keys.add(protocol_key(record if isinstance(record, dict) else None))
    return len(keys)


def _rank_average(values: np.ndarray, ascending: bool) -> np.ndarray:
    """pandas' ``rank(method="average")``: 1 for the best, ties share the mean of their places,
    NaN stays NaN."""
    out = np.full(len(values), np.nan)
    ok = ~np.isnan(values)
    v = values[ok] if ascending else -values[ok]
    below = (v[None, :] < v[:, None]).sum(axis=1)
    equal = (v[None, :] == v[:, None]).sum(axis=1)
    out[ok] = below + (equal + 1) / 2
    return out


def _board(cells: dict[tuple[str, str], tuple[list[float], list[float], list[float]]]) -> RankBoard:
    keys = sorted(cells)  # (method, task): the rule's groupby order
    med_r2 = np.array([np.median(cells[k][0]) for k in keys])
    med_size = np.array([_nanmedian(cells[k][1]) for k in keys])
    med_time = np.array([_nanmedian(cells[k][2]) for k in keys])
    timed = any(not math.isnan(t) for k in keys for t in cells[k][2])  # time_column of the finished runs
    r2, size = np.round(med_r2, 3), np.round(med_size, 3)
    rank_r2, rank_size = np.full(len(keys), np.nan), np.full(len(keys), np.nan)
    tasks = np.array([k[1] for k in keys], dtype=object)
    for task in sorted(set(tasks)):
        at = tasks == task
        rank_r2[at] = _rank_average(r2[at], ascending=False)
        rank_size[at] = _rank_average(size[at], ascending=True)
    methods = sorted({k[0] for k in keys})
    mine = {m: np.array([k[0] == m for k in keys]) for m in methods}
    x = np.array([_nanmedian(rank_r2[mine[m]]) for m in methods])
    y = np.array([_nanmedian(rank_size[mine[m]]) for m in methods])
    front = published_fronts(np.column_stack([x, y]))
    notes = few_fronts_note(front)
    level = np.where(front >= 0, front, PUBLISHED_LEVELS)
    # the rule's sort_values(["_o", "median_rank_r2"]): stable, NaN last
    order = sorted(range(len(methods)), key=lambda i: (level[i], math.isnan(x[i]), 0.0 if math.isnan(x[i]) else x[i]))
    per = {m: (rank_r2[mine[m]], rank_size[mine[m]]) for m in methods}
    values = {m: {"r2": med_r2[mine[m]], "size": med_size[mine[m]]} for m in methods}
    if timed:
        for m in methods:
            values[m]["time"] = med_time[mine[m]]
    pick = np.array(order, dtype=int)
    board = tuple(methods[i] for i in order)
    return RankBoard(board, x[pick], y[pick], front[pick], per, True, tuple(notes), True, values)


def nargsort(values: np.ndarray, ascending: bool = True) -> np.ndarray:
    """pandas' ``sort_values`` order of ``values`` (its ``nargsort``: numpy's quicksort of the
    values that are not NaN, a descending sort reversed around it, NaN last)."""
    values = np.asarray(values, float)
    idx = np.arange(len(values))
    ok = ~np.isnan(values)
    kept, at = values[ok], idx[ok]
    if not ascending:
        kept, at = kept[::-1], at[::-1]
    order = at[kept.argsort(kind="quicksort")]
    if not ascending:
        order = order[::-1]
    return np.concatenate([order, idx[~ok]]).astype(int)


def _nanmedian(values: Any) -> float:
    """pandas' median: NaN left out, NaN of none."""
    v = np.asarray(values, float)
    v = v[~np.isnan(v)]
    return float(np.median(v)) if len(v) else math.nan
