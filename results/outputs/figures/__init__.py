"""Publication figures drawn from the scoring rules' own tables (``srtui.results.scoring``): no figure
computes a score of its own, it draws the ``Score`` the rule returns (the tables `srtui score`
prints). matplotlib (Agg) is imported only when a figure is drawn.

Each figure kind is declared once, by ``@figure(...)`` on its drawing function in a module of
this package: its name, the rule it draws, what it shows (`srtui plot --list`, the docs table) and
the words its drawing shows; ``kinds()`` finds them all.
``draw(kind, data, width, style)`` returns a matplotlib Figure; ``render`` writes it as PDF, SVG
or PNG; ``svg(kind, data)`` gives the SVG text the HTML report inlines.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.extensions import import_every_module
from srtui.results.outputs.figures.style import TWO_COLUMNS, FigureError, Look, looks, paper_style, save, svg_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from srtui.results.scoring.base import Score
    from srtui.results.store.store import Store


@dataclass
class FigureData:
    """What a figure is drawn from. ``options`` are the ``-o KEY=VALUE`` of the figure's rule;
    ``trust`` (task, method, trust) feeds srbench2022-realworld; ``ratings`` (expert, task,
    method, rating) and ``agreement`` (srtui.reviews.report's table) are a review session's."""

    runs: pd.DataFrame | None = None
    options: dict[str, Any] = field(default_factory=dict)
    trust: pd.DataFrame | None = None
    ratings: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None
    rule: str | None = None
    #: jobs of several protocols in one figure (srtui.results.scoring.mixed): refused unless this
    allow_mixed: bool = False
    #: the workspace's methods, every suite's (srtui.results.store.queries.workspace_methods): what each
    #: method's look is a function of; empty for runs from a CSV (their own methods then)
    methods: tuple[str, ...] = ()
    _scores: dict[tuple[str, tuple[tuple[str, str], ...]], Score] = field(default_factory=dict, repr=False)
    _looks: dict[str, Look] | None = field(default=None, repr=False)
    _published: dict[str, str] | None = field(default=None, repr=False)

    def need_runs(self, kind: str) -> pd.DataFrame:
        if self.runs is None or self.runs.empty:
            raise FigureError(f"figure {kind!r} needs runs: give --suite (a workspace) or --from-csv FILE")
        return self.runs

    def score(self, rule: str, **defaults: Any) -> Score:
        """The rule's Score under the user's options (over the figure's defaults), computed once
        per rule and options for all the figures drawn from this data."""
        from srtui.results.scoring import score

        opts = {**defaults, **self.options}
        key = (rule, tuple(sorted((k, str(v)) for k, v in opts.items())))
        if key not in self._scores:
            runs = self.need_runs(rule)
            self._scores[key] = score(rule, runs, trust=self.trust, allow_mixed=self.allow_mixed, **opts)
        return self._scores[key]

    def scores(self) -> list[Score]:
        """The Scores computed so far (their notes go to the user)."""
        return list(self._scores.values())

    @property
    def looks(self) -> dict[str, Look]:
        """One look per method: the workspace's methods first (``methods``), then the input's
        others, so a method looks the same in every figure of a workspace."""
        if self._looks is None:
            names: list[str] = []
            for frame in (self.runs, self.trust, self.ratings):
                if frame is not None and "method" in frame.columns:
                    names += [str(m) for m in frame["method"].dropna().unique()]
            from srtui.results.outputs.figures.sources import published_methods

            self._looks = looks(self.methods, extra=names, published=published_methods(self))
        return self._looks

    def look(self, method: str) -> Look:
        """The method's look; a published method's colour is tagged (figures.sources: hollow)."""
        from srtui.results.outputs.figures.sources import published_methods, tagged

        look = self.looks.get(str(method)) or looks(self.methods, extra=[method])[str(method)]
        if self._published is None:
            self._published = published_methods(self)
        return replace(look, color=tagged(look.color)) if str(method) in self._published else look


def workspace_data(store: Store, suite: str | None, options: dict[str, Any] | None = None) -> FigureData:
    """A figure's input from the workspace: one suite's runs (every suite's with None), each
    method looking as in every figure of the workspace (`srtui plot`, the report, the app's Plots
    screen all start here)."""
    from srtui.results.scoring.tables import runs_frame
    from srtui.results.store.queries import workspace_methods

    return FigureData(runs=runs_frame(store, suite), options=dict(options or {}), methods=workspace_methods(store))


@dataclass(frozen=True)
class Kind:
    """A figure kind, declared once with :func:`figure` beside its drawing function: `srtui plot`
    (its help and ``--list``), the report, docs/figures.md's table (:func:`docs_table`) and the
    draw-and-parse test (tests/e2e/test_figures.py, over ``axes``) all read it."""

    name: str
    rule: str  # the scoring rule whose Score it draws ("(review)": a review session's ratings)
    summary: str  # what it shows (`srtui plot --list`, the docs table)
    draw: Callable[[FigureData, float], Figure]
    #: words the drawn figure shows besides the method names (its axes, legend, title)
    axes: tuple[str, ...] = ()
    source: str = ""  # the docs table's rule column, when more than the rule's name
    publication: str = ""  # the publication and notebook it reproduces
    order: int = 100  # its place in listings


_KINDS: dict[str, Kind] = {}


def figure(
    name: str,
    rule: str,
    summary: str,
    *,
    axes: tuple[str, ...] = (),
    source: str = "",
    publication: str = "",
    order: int = 100,
) -> Callable[[Callable[[FigureData, float], Figure]], Callable[[FigureData, float], Figure]]:
    """Declare the decorated function as the figure ``name`` (a module of this package each)."""

    def register(draw: Callable[[FigureData, float], Figure]) -> Callable[[FigureData, float], Figure]:
        if name in _KINDS:
            raise ValueError(f"figure {name!r} is declared twice")
        _KINDS[name] = Kind(name, rule, summary, draw, axes, source, publication, order)
        return draw

    return register


def kinds() -> dict[str, Kind]:
    """Every figure kind, in listing order: each module of this package is imported once (as the
    scoring rules are), so a new figure is a new module."""
    import_every_module(sys.modules[__name__])
    return {k.name: k for k in sorted(_KINDS.values(), key=lambda k: (k.order, k.name))}


def docs_table() -> str:
    """docs/figures.md's table of the figures (tests/e2e/test_figures.py checks the page has it)."""
    rows = ["| figure | rule | what it shows | publication |", "| --- | --- | --- | --- |"]
    for k in kinds().values():
        rows.append(f"| `{k.name}` | {k.source or f'`{k.rule}`'} | {k.summary} | {k.publication} |")
    return "\n".join(rows) + "\n"


def get_kind(name: str) -> Kind:
    found = kinds()
    if name not in found:
        raise FigureError(f"unknown figure {name!r} (figures: {', '.join(found)})")
    return found[name]


#: the figure that shows a rule's leaderboard (the app's save key): the rule drawn, else points
RULE_FIGURES = {
    "srbench2021": "pareto",
    "srbench-groundtruth": "solution-rate",
    "srbench2025": "profiles",
    "srbench2022-synthetic": "ranks",
    "srbench2022-realworld": "ranks",
    "friedman": "cd",
    "wilcoxon": "wilcoxon",
}


def figure_for_rule(rule: str | None) -> str:
    return RULE_FIGURES.get(rule or "", "points")


def draw(kind: str, data: FigureData, width: float = TWO_COLUMNS, style: Path | None = None) -> Figure:
    k = get_kind(kind)
    with paper_style(style):
        return _drawn(k, data, width)


def _drawn(k: Kind, data: FigureData, width: float) -> Figure:
    """The figure with what it says besides its data (figures.sources: workspace vs published,
    the reference profile's caption)."""
    from srtui.results.outputs.figures.sources import finish

    return finish(k.draw(data, width), k, data)


def render(
    kind: str, data: FigureData, out: Path, width: float = TWO_COLUMNS, style: Path | None = None, dpi: int = 300
) -> Path:
    """Draw ``kind`` and write it to ``out`` (.pdf, .svg or .png)."""
    if Path(out).suffix.lower().lstrip(".") not in ("pdf", "svg", "png"):
        raise FigureError(f"--out must end in .pdf, .svg or .png, not {Path(out).name!r}")
    k = get_kind(kind)
    with paper_style(style):
        fig = _drawn(k, data, width)
        return save(fig, Path(out), dpi)


def svg(kind: str, data: FigureData, width: float = TWO_COLUMNS, style: Path | None = None) -> str:
    k = get_kind(kind)
    with paper_style(style):
        return svg_text(_drawn(k, data, width))


__all__ = [
    "RULE_FIGURES",
    "FigureData",
    "FigureError",
    "Kind",
    "docs_table",
    "draw",
    "figure",
    "figure_for_rule",
    "get_kind",
    "kinds",
    "render",
    "svg",
    "workspace_data",
]
