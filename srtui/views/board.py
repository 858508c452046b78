"""Leaderboard data for the app: a suite's runs scored by a rule of ``srtui.results.scoring``.

No Textual here. Plain rows so the screen shows them as text and exports them as CSV.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError
from srtui.results.metrics.profiles import Profile
from srtui.results.store.queries import Reader

if TYPE_CHECKING:
    import pandas as pd


class BoardError(SrtuiError, ValueError):
    """A leaderboard that cannot be computed; one line."""


@dataclass(frozen=True)
class Board:
    suite: str
    rule: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    method_column: int
    breakdown_columns: tuple[str, ...] = ()
    breakdown: dict[str, tuple[tuple[Any, ...], ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # the rule's notes, one line each
    profile: Profile | None = None  # for the rules of a published release
    published: bool = False  # SRBench's published rows beside the suite's (srtui.results.scoring.published)
    warnings: tuple[str, ...] = ()  # one line per difference from the published protocol


def _scoring() -> ModuleType:
    try:
        from srtui.results import scoring
    except ImportError:
        raise BoardError("the scoring rules (srtui.results.scoring) are not part of this build") from None
    return scoring


def rule_names() -> list[str]:
    try:
        return list(_scoring().RULES)
    except BoardError:
        return []


def suite_rule(reader: Reader, suite: str) -> str | None:
    """The rule a suite names in its TOML (``scoring = ...``): a built-in one, or the suite file
    its runs were given (a user's suite), if any."""
    from srtui.results.scoring.suite_rule import suite_rule as named

    with reader.lock:
        return named(reader.store(), suite)


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


#: where a row comes from (--published): after the values, so at 80 columns the scores stay in view
SOURCE_COLUMNS = ("source", "srtui_method")
#: the mark of a published row's method (`srtui score --published --format md` and the report's)
PUBLISHED_MARK = "\u2020"


def _frame_rows(frame: pd.DataFrame) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
    last = [c for c in SOURCE_COLUMNS if c in frame.columns]
    frame = frame[[c for c in frame.columns if c not in last] + last]
    columns = tuple(str(c) for c in frame.columns)
    rows = tuple(tuple(_plain(v) for v in row) for row in frame.itertuples(index=False, name=None))
    return columns, rows


def has_profiles(rule: str) -> bool:
    """Whether ``rule`` takes ``profile`` (the rules of a published release do)."""
    try:
        return "profile" in _scoring().get_rule(rule).options
    except SrtuiError:  # an unknown rule or no scoring in this build: load_board shows why
        return False


def has_published(rule: str) -> bool:
    """Whether SRBench's published results can stand beside ``rule``'s board (srtui.results.scoring.published)."""
    try:
        from srtui.results.scoring.published import RULE_TRACKS
    except ImportError:
        return False
    return rule in RULE_TRACKS


def load_board(
    reader: Reader, suite: str, rule: str, profile: Profile = Profile.REFERENCE, published: bool = False
) -> Board:
    """Score the suite's runs with ``rule`` under ``profile`` (where the rule has profiles), with
    the rule's published source beside them when ``published``; the per-dataset breakdown is
    grouped by method."""
    from srtui.results.scoring.tables import runs_frame

    scoring = _scoring()
    with reader.lock:
        store = reader.store()
        if store is None:
            raise BoardError("no workspace yet")
        runs = runs_frame(store, suite)
        if runs.empty:
            raise BoardError(f"suite {suite} has no runs")
        published = published and has_published(rule)
        options = {"profile": profile} if has_profiles(rule) else {}
        try:
            result = (
                _published(rule, runs, store, suite, options) if published else scoring.score(rule, runs, **options)
            )
        except SrtuiError as exc:
            raise BoardError(str(exc)) from None
    columns, rows = _frame_rows(result.main)
    at = columns.index("method") if "method" in columns else -1
    breakdown: dict[str, tuple[tuple[Any, ...], ...]] = {}
    b_columns: tuple[str, ...] = ()
    per = result.tables.get("per_task")
    if per is None:  # else the first other table that has one row per (task, method)
        per = next((t for t in list(result.tables.values())[1:] if {"task", "method"} <= set(t.columns)), None)
    if per is not None and not per.empty and at >= 0:
        b_columns, b_rows = _frame_rows(per)
        if "method" in b_columns:
            m = b_columns.index("method")
            grouped: dict[str, list[tuple[Any, ...]]] = {}
            for row in b_rows:
                grouped.setdefault(str(row[m]), []).append(row)
            breakdown = {k: tuple(v) for k, v in grouped.items()}
    return Board(
        suite,
        rule,
        columns,
        rows,
        at,
        b_columns,
        breakdown,
        tuple(result.notes),
        result.profile,
        published,
        tuple(result.warnings),
    )


def _published(rule: str, runs: pd.DataFrame, store: Any, suite: str, options: dict[str, Any]) -> Any:
    """The rule's board with its default published source (the shipped tables need no network;
    a feather source reads the workspace cache, or downloads once)."""
    from srtui.results.scoring.published import merged_runs, score_published

    merged = merged_runs(
        rule, None, runs, store=store, suite=suite, cache_dir=store.workspace.cache, profile=options.get("profile")
    )
    return score_published(rule, merged, **options)


def export_board(board: Board, folder: Path) -> list[Path]:
    """Write the leaderboard and its breakdown as CSV; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", f"leaderboard-{board.suite}-{board.rule}")
    paths = [folder / f"{stem}.csv"]
    with open(paths[0], "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(board.columns)
        writer.writerows(board.rows)
    if board.breakdown_columns:
        paths.append(folder / f"{stem}-per-dataset.csv")
        with open(paths[1], "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(board.breakdown_columns)
            for rows in board.breakdown.values():
                writer.writerows(rows)
    return paths
