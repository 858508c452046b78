"""SRBench's published results as a source for every leaderboard (docs/published.md).

``merged_runs`` puts the workspace's runs and a release's published ones in one runs table with a
``source`` column (what figures reuse); ``score_published`` scores it with a rule and marks each
row of the rule's tables with its source, the citations, the notes and one warning line per
difference between the workspace's protocol and the publication's.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from srtui.results.scoring.base import Score
from srtui.results.scoring.published.merge import (
    WORKSPACE,
    Merged,
    merged_runs,
    pairs,
    parse_sources,
    per_source_failures,
)
from srtui.results.scoring.published.read import PublishedError
from srtui.results.scoring.published.sources import RULE_TRACKS, SOURCES


def score_published(
    rule: str, merged: Merged, trust: pd.DataFrame | None = None, allow_mixed: bool = False, **options: Any
) -> Score:
    """``rule`` applied to the merged runs; every table with a ``method`` column gains ``source``
    (and ``srtui_method``), the workspace's medians sit beside the published ones they map to."""
    from srtui.results.scoring import score

    runs = merged.runs
    result = score(rule, runs, trust=trust, allow_mixed=allow_mixed, **options)
    source = runs.drop_duplicates("method").set_index("method")["source"]
    mapped = runs.drop_duplicates("method").set_index("method")["srtui_method"]
    failed = per_source_failures(runs)
    tables = {}
    for name, table in result.tables.items():
        if "method" in table.columns and "source" not in table.columns:
            at = list(table.columns).index("method") + 1
            table = table.copy()
            table.insert(at, "source", table["method"].map(source))
            table.insert(at + 1, "srtui_method", table["method"].map(mapped))
            if "failed_runs" in table.columns:
                table["failed_runs"] = table["method"].map(failed).fillna(0).astype(int)
        tables[name] = table
    size = result.options.get("size")
    pair = pairs(runs, size if isinstance(size, str) else None)
    if not pair.empty:
        tables["published_pairs"] = pair
        empty = [c for c in pair.columns if c.endswith("_published") and pair[c].isna().all()]
        if empty:  # said, not left for a reader to take for a failed comparison (#55)
            sources = ", ".join(sorted({str(v).removeprefix("published: ") for v in pair["published_source"]}))
            result.notes = [
                *result.notes,
                f"published_pairs: {', '.join(empty)} is empty: {sources}'s table has no such value per dataset",
            ]
    if not merged.left_out.empty:
        tables["left_out"] = merged.left_out
    result.tables = tables
    result.notes = [*result.notes, *merged.notes]
    result.warnings = [*result.warnings, *merged.warnings]
    result.sources = dict(merged.sources)
    return result


__all__ = [
    "RULE_TRACKS",
    "SOURCES",
    "WORKSPACE",
    "Merged",
    "PublishedError",
    "merged_runs",
    "parse_sources",
    "score_published",
]
