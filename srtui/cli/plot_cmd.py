"""`srtui plot KIND --out FILE` (publication figures) and `srtui report --out FILE.html`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from srtui.cli.common import WorkspaceOption, fail

KIND_HELP = "Figure: pareto, points, solution-rate, profiles, energy, cd, wilcoxon, ranks or trust (see --list)."


def plot(
    kind: Annotated[str, typer.Argument(help=KIND_HELP)] = "",
    out: Annotated[Path | None, typer.Option("--out", help="The file to write: .pdf, .svg or .png.")] = None,
    suite: Annotated[str | None, typer.Option(help="Draw this suite's runs of the workspace.")] = None,
    from_csv: Annotated[
        Path | None,
        typer.Option(
            "--from-csv",
            help="Draw runs made elsewhere (a CSV as `srtui score --from-csv` reads, e.g. SRBench's "
            "docs/csv/blackbox_results.csv).",
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option", "-o", help="Option KEY=VALUE of the figure's rule (repeatable), e.g. profile=corrected."
        ),
    ] = None,
    rule: Annotated[
        str | None, typer.Option(help="ranks: the 2022 rule (srbench2022-synthetic or srbench2022-realworld).")
    ] = None,
    trust: Annotated[
        Path | None, typer.Option(help="Expert trust ratings: expert_scores.json or a CSV task,method,trust.")
    ] = None,
    review: Annotated[
        str | None, typer.Option(help="Expert ratings of this (unblinded) review session of the workspace.")
    ] = None,
    width: Annotated[float, typer.Option(help="Width in inches: 3.5 for one column, 7 for two.")] = 7.0,
    style: Annotated[Path | None, typer.Option(help="A matplotlib style file applied over srtui's.")] = None,
    dpi: Annotated[int, typer.Option(help="Resolution of a .png.")] = 300,
    list_kinds: Annotated[bool, typer.Option("--list", help="List the figures and the rule each draws.")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Draw a publication figure (PDF, SVG or PNG) from the scoring rules' own tables."""
    from results.figures import get_kind, kinds, render
    from results.tables import read_runs_csv
    from srtui.cli.score_cmd import _options, _store
    from srtui.outputs import figure_data

    if list_kinds or not kind:
        for k in kinds().values():
            print(f"{k.name:<14} rule {k.rule}\n  {k.summary}")
        return
    get_kind(kind)
    if out is None:
        fail("give --out FILE.pdf, FILE.svg or FILE.png")
    if suite and from_csv:
        fail("give --suite or --from-csv, not both")
    if not 10 <= dpi <= 2400:
        fail("--dpi must be between 10 and 2400")
    runs = read_runs_csv(from_csv) if from_csv else None
    store = None if from_csv and not review else _store(workspace)
    data = figure_data(store, suite, runs, _options(option), trust, review, rule)
    if kind == "trust" and data.ratings is None and data.trust is None:
        fail("figure 'trust' needs ratings: give --review SESSION (unblinded) or --trust FILE")
    path = render(kind, data, out, width, style, dpi)
    for score in data.scores():
        for note in score.notes:
            print(f"srtui: note ({score.rule}): {note}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)


def report(
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    suite: Annotated[
        list[str] | None, typer.Option(help="Report this suite (repeatable; default: every suite).")
    ] = None,
    width: Annotated[float, typer.Option(help="Width of the figures in inches.")] = 7.0,
    workspace: WorkspaceOption = None,
) -> None:
    """Write one self-contained HTML report of the workspace: leaderboards, figures, models,
    failures, reviews and run metadata; it needs no network and runs no outside script."""
    from srtui.cli.score_cmd import _store
    from srtui.outputs import write_report

    path = write_report(_store(workspace), out, suite or None, width)
    print(f"wrote {path}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("plot")(plot)
    app.command("report")(report)
