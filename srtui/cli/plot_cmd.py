"""`srtui plot KIND --out FILE` (publication figures) and `srtui report --out FILE.html`."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from srtui.cli import figure_cache
from srtui.cli import score_published as shared  # the options `srtui score` has too
from srtui.cli.common import WorkspaceOption, fail
from srtui.results.metrics.profiles import Profile, named_profile

if TYPE_CHECKING:
    import pandas as pd

KIND_HELP = "The figure to draw: one of `srtui plot --list` (results/outputs/figures declares them)."


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
    trust: shared.TrustOption = None,
    review: shared.ReviewOption = None,
    width: Annotated[float, typer.Option(help="Width in inches: 3.5 for one column, 7 for two.")] = 7.0,
    style: Annotated[Path | None, typer.Option(help="A matplotlib style file applied over srtui's.")] = None,
    dpi: Annotated[int, typer.Option(help="Resolution of a .png.")] = 300,
    list_kinds: Annotated[bool, typer.Option("--list", help="List the figures and the rule each draws.")] = False,
    published: shared.PublishedOption = None,
    strict: shared.StrictOption = False,
    data_dir: shared.DataDirOption = None,
    allow_mixed: shared.AllowMixedOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Draw a publication figure (PDF, SVG or PNG) from the scoring rules' own tables."""
    from srtui.results.outputs.figures import get_kind, kinds

    if list_kinds or not kind:
        for k in kinds().values():
            print(f"{k.name:<14} rule {k.rule}\n  {k.summary}")
        return
    if out is None:
        get_kind(kind)  # an unknown figure is the first thing to say
        fail("give --out FILE.pdf, FILE.svg or FILE.png")
    if suite and from_csv:
        fail("give --suite or --from-csv, not both")
    if not 10 <= dpi <= 2400:
        fail("--dpi must be between 10 and 2400")
    if published is not None and from_csv:
        fail("give --from-csv or --published, not both (--published draws the workspace beside the publication)")
    if (strict or data_dir) and published is None:
        fail("--strict and --data-dir go with --published")
    if out.suffix.lower() not in (".pdf", ".svg", ".png"):
        fail(f"--out must end in .pdf, .svg or .png, not {out.name!r}")
    options = list(option or [])
    request = figure_cache.Request(kind, out, suite, from_csv, options, rule, trust, width, style, dpi, allow_mixed)
    # a kept figure was drawn, so its kind is known; the kinds are read when one is drawn
    kept = _kept_figure(request, workspace) if published is None and review is None and from_csv is None else None
    if kept is not None and kept[1] is not None:
        _wrote(out, kept[1])
        return
    notes = _draw(request, review, published, strict, data_dir, allow_mixed, workspace)
    if kept is not None:
        figure_cache.keep(kept[0].cache, kept[2], out, notes)
    _wrote(out, notes)


def _kept_figure(request: figure_cache.Request, workspace: Path | None) -> tuple[Any, list[str] | None, str] | None:
    """(the workspace, the kept figure's notes or None, its key); None for a figure never kept
    (``trust``: its ratings live in the review's files) or a workspace without a store."""
    from srtui.engine.workspace import resolve

    ws = resolve(workspace)
    if request.kind == "trust" or not ws.exists():
        return None
    digest = figure_cache.key(request, ws.db_path)
    return ws, figure_cache.reuse(ws.cache, digest, request.out), digest


def _draw(
    request: figure_cache.Request,
    review: str | None,
    published: str | None,
    strict: bool,
    data_dir: Path | None,
    allow_mixed: bool,
    workspace: Path | None,
) -> list[str]:
    """Read, score and draw the figure into ``request.out``, the steps on stderr; its notes."""
    from srtui.cli.score_cmd import _options, _store
    from srtui.cli.steps import Steps
    from srtui.results.outputs.figures import get_kind

    kind, options = get_kind(request.kind).name, _options(request.options)
    with Steps(f"plot {kind}") as steps:
        steps.step("reading the runs", 1, 2)
        from srtui.outputs import figure_data
        from srtui.results.outputs.figures import render

        runs = None
        if request.from_csv:
            from srtui.results.scoring.tables import read_runs_csv  # pandas: only for a CSV

            runs = read_runs_csv(request.from_csv)
        if published is not None:
            source = shared.PublishedSource(published, request.suite, workspace, data_dir, strict)
            runs = _published_runs(kind, source, options)
        # with --published the workspace is read too: its methods keep the looks of its other figures
        store = None if request.from_csv and not review else _store(workspace)
        data = figure_data(store, request.suite, runs, options, request.trust, review, request.rule, read_runs=False)
        data.allow_mixed = allow_mixed
        # the runs and the modules stay to the end: no full collection walks them again (statsmodels'
        # Holm correction calls one; 0.1-0.2 s each at 100,000 runs)
        gc.freeze()
        if kind == "trust" and data.ratings is None and data.trust is None:
            fail("figure 'trust' needs ratings: give --review SESSION (unblinded) or --trust FILE")
        steps.step(f"scoring and drawing {request.out.name}", 2, 2)
        render(kind, data, request.out, request.width, request.style, request.dpi)
    return data.notes()


def _wrote(out: Path, notes: list[str]) -> None:
    for note in notes:
        print(f"srtui: note {note}", file=sys.stderr)
    print(f"wrote {out}", file=sys.stderr)


def _published_runs(kind: str, source: shared.PublishedSource, options: dict[str, str]) -> pd.DataFrame:
    """The runs a figure draws with --published: the workspace's suite beside the publication
    (the same merge as `srtui score --published`); its warnings go to stderr."""
    from srtui.cli.score_published import published_runs
    from srtui.results.outputs.figures import get_kind
    from srtui.results.scoring.published.merge import figure_without_source

    rule = get_kind(kind).rule
    if why := figure_without_source(kind, rule):
        fail(why)
    merged = published_runs(rule, source, named_profile(options.get("profile", Profile.REFERENCE)))
    for line in merged.warnings:
        print(f"srtui: warning: {line}", file=sys.stderr)
    return merged.runs


def report(
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    suite: Annotated[
        list[str] | None, typer.Option(help="Report this suite (repeatable; default: every suite).")
    ] = None,
    width: Annotated[float, typer.Option(help="Width of the figures in inches.")] = 7.0,
    published: shared.PublishedOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Write one self-contained HTML report of the workspace: leaderboards, figures, models,
    failures, reviews and run metadata; it needs no network and runs no outside script.
    --published: each suite beside SRBench's published results, with the comparison's warnings."""
    from srtui.cli.score_cmd import _store
    from srtui.cli.steps import Steps
    from srtui.outputs import write_report

    with Steps("report") as steps:
        path = write_report(_store(workspace), out, suite or None, width, published, steps.step)
    print(f"wrote {path}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("plot")(plot)
    app.command("report")(report)
