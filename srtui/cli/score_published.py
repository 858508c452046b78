"""`srtui score RULE --published [SOURCE,...]`: the workspace's runs beside SRBench's published ones."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from srtui.cli.common import fail
from srtui.results.metrics.profiles import Profile, named_profile

if TYPE_CHECKING:
    import pandas as pd

    from srtui.results.scoring.base import Score
    from srtui.results.scoring.published import Merged

PUBLISHED_HELP = (
    "Add SRBench's published results to the table: srbench2021 (the shipped docs/csv tables), "
    "srbench2021-runs or srbench2025 (per-run feathers, downloaded once into the workspace cache, "
    "sha256-checked; needs the extra 'published'), or a .csv/.feather file in a published schema; "
    "comma-separated; alone: the rule's default source (docs/published.md)."
)
STRICT_HELP = "With --published: refuse when the workspace's runs differ from the published protocol."
ALLOW_MIXED_HELP = (
    "Score jobs run under different protocols in one leaderboard (refused otherwise); each row "
    "then names its protocol in a footnote."
)
DATA_DIR_HELP = "With --published: a folder holding srbench/<path of the feather> (checked by sha256)."

# the options `srtui score` and `srtui plot` share, declared once
PublishedOption = Annotated[str | None, typer.Option("--published", help=PUBLISHED_HELP)]
StrictOption = Annotated[bool, typer.Option("--strict", help=STRICT_HELP)]
DataDirOption = Annotated[Path | None, typer.Option("--data-dir", help=DATA_DIR_HELP)]
AllowMixedOption = Annotated[bool, typer.Option("--allow-mixed", help=ALLOW_MIXED_HELP)]
TrustOption = Annotated[
    Path | None, typer.Option(help="Expert trust ratings: expert_scores.json or a CSV task,method,trust.")
]
ReviewOption = Annotated[
    str | None, typer.Option(help="Expert ratings (trust) from this unblinded review session of the workspace.")
]


@dataclass(frozen=True)
class PublishedSource:
    """What `--published` merges, for `srtui score` and `srtui plot` alike: the published source(s)
    (``default``: the rule's own), the workspace's suite beside them, the feathers' folder, --strict."""

    published: str
    suite: str | None
    workspace: Path | None
    data_dir: Path | None
    strict: bool


def published_runs(rule: str, source: PublishedSource, profile: Profile | None) -> Merged:
    """The suite's runs (none when the workspace has none) merged with the published ones; the
    warnings checked against --strict (for `srtui score` and `srtui plot` alike)."""
    import pandas as pd

    from srtui.engine.workspace import resolve
    from srtui.results.scoring.published import merged_runs
    from srtui.results.scoring.tables import runs_frame
    from srtui.results.store.store import Store

    ws, suite = resolve(source.workspace), source.suite
    store, runs = None, pd.DataFrame()
    if ws.db_path.exists():
        store = Store(ws, readonly=True)
        runs = runs_frame(store, suite)
    if suite and runs.empty:
        fail(f"no runs of suite {suite} in the workspace")
    merged = merged_runs(
        rule,
        "" if source.published == "default" else source.published,
        runs,
        store=store,
        suite=suite,
        cache_dir=ws.cache,
        data_dir=source.data_dir,
        profile=profile,
    )
    if source.strict and merged.warnings:
        fail(
            f"--strict: the workspace's runs differ from the published protocol in {len(merged.warnings)} way(s): "
            + "; ".join(w.split(":", 1)[0] for w in merged.warnings)
        )
    return merged


def published_score(
    rule: str, source: PublishedSource, options: dict[str, Any], trust: pd.DataFrame | None, allow_mixed: bool = False
) -> Score:
    """Score the suite's runs (none when the workspace has none) merged with the published ones."""
    from srtui.results.scoring.published import score_published

    profile = named_profile(options.get("profile", Profile.REFERENCE))
    merged = published_runs(rule, source, profile)
    result = score_published(rule, merged, trust=trust, allow_mixed=allow_mixed, **options)
    for line in result.warnings:  # also on stderr, so a --out file does not hide them
        print(f"srtui: warning: {line}", file=sys.stderr)
    return result
