"""Which runs a leaderboard row stands on: runs never attempted or still pending are no failures.

A method run on fewer seeds (or tasks) than another, or whose jobs are still pending, has those
runs counted in the columns ``missing`` and ``pending`` of its row, left out of its values, and
named in one note. Where a publication's code counted a missing run as a failure, the reference
profile keeps doing so (the rule passes ``counted_as_failures``) and the note says so.
"""

from __future__ import annotations

import pandas as pd

from srtui.results.scoring.base import MISSING, PENDING, Score, complete


def counts(runs: pd.DataFrame) -> pd.DataFrame:
    """Per method the runs never attempted (``missing``: a (task, seed) some method has on a task
    and this one lacks) and those not finished (``pending``: pending or running). Runs of several
    sources (``--published``) are completed each on its own: a published table's seeds are not a
    workspace method's missing runs."""
    runs = runs[[c for c in ("task", "method", "seed", "status", "source") if c in runs.columns]]  # all it reads
    parts = [complete(part) for _, part in runs.groupby("source")] if "source" in runs.columns else []
    full = pd.concat(parts) if parts else complete(runs)
    return pd.DataFrame(
        {
            "missing": full["status"].isin(MISSING).groupby(full["method"]).sum().astype(int),
            "pending": full["status"].isin(PENDING).groupby(full["method"]).sum().astype(int),
        }
    )


def note(missing: int, pending: int, counted_as_failures: str | None = None) -> list[str]:
    """The one note on runs not attempted or pending (nothing when there are none)."""
    named = [(n, what) for n, what in ((missing, "missing"), (pending, "pending")) if n]
    if not named:
        return []
    said = " and ".join(f"{n} run(s) {'never attempted' if what == 'missing' else what}" for n, what in named)
    cols = f"(column{'s' if len(named) > 1 else ''} {', '.join(what for _, what in named)})"
    if counted_as_failures:
        return [f"{said} {cols}; {counted_as_failures} (profile=corrected leaves them out)"]
    return [f"{said} {cols}: left out of every row, not counted as failures"]


def add_coverage(score: Score, runs: pd.DataFrame, counted_as_failures: str | None = None) -> Score:
    """Add the columns ``missing`` and ``pending`` to the leaderboard (after ``failed_runs`` when it
    has one), each only when some run is so (a complete benchmark's table stays as it was), and
    the note; ``runs`` is the rule's input."""
    if "status" not in runs.columns or runs.empty:
        return score
    have, board = counts(runs), score.main
    at = list(board.columns).index("failed_runs") + 1 if "failed_runs" in board.columns else len(board.columns)
    for col in ("missing", "pending"):
        if "method" in board.columns and col not in board.columns and have[col].any():
            board.insert(at, col, board["method"].map(have[col]).fillna(0).astype(int))
            at += 1
    score.notes[:0] = note(int(have["missing"].sum()), int(have["pending"].sum()), counted_as_failures)
    return score
