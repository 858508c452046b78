"""Publication figures drawn from the scoring rules' own tables (``srtui.results.scoring``): no figure
computes a score of its own, it draws the ``Score`` the rule returns (the tables `srtui score`
prints). matplotlib (Agg) is imported only when a figure is drawn.

Each figure kind is declared once, by ``@figure(...)`` in a module of this package, on the
function that returns its data (``plotdata.Plot``: traces with labels, axes, scales): its name,
the rule it draws, what it shows (`srtui plot --list`, the docs table) and the words its drawing
shows; ``kinds()`` finds them all. matplotlib draws that data (``drawplot``; a kind may give a
publication drawing of its own) and so does the terminal (the app's Plots screen).
``draw(kind, data, width, style)`` returns a matplotlib Figure; ``render`` writes it as PDF, SVG
or PNG; ``svg(kind, data)`` gives the SVG text the HTML report inlines.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from srtui.engine.extensions import import_every_module
from srtui.results.outputs.figures.style import TWO_COLUMNS, FigureError, Look, looks, paper_style, save, svg_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from srtui.results.outputs.figures.plotdata import Plot
    from srtui.results.outputs.figures.ranks import RankBoard
    from srtui.results.scoring.base import Score
    from srtui.results.store.store import Store


RULE = "srbench2021"  # the rule of the Pareto figure's board (``FigureData.rank_board``)


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
    #: the workspace the runs are read from when a figure needs them (``store_data``): a figure
    #: whose board the store gives (``ranks.from_store``) reads no runs table (no pandas, #56)
    store: Store | None = None
    suite: str | None = None
    _board: RankBoard | None = field(default=None, repr=False)
    _scores: dict[tuple[str, tuple[tuple[str, str], ...]], Score] = field(default_factory=dict, repr=False)
    _looks: dict[str, Look] | None = field(default=None, repr=False)
    _published: dict[str, str] | None = field(default=None, repr=False)

    def need_runs(self, kind: str) -> pd.DataFrame:
        if self.runs is None and self.store is not None:
            from srtui.results.scoring.tables import runs_frame

            self.runs = runs_frame(self.store, self.suite)
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

    def notes(self) -> list[str]:
        """The notes of the rules drawn so far, each after its rule: ``(rule): note``."""
        board = [f"({RULE}): {n}" for n in self._board.notes] if self._board and self._board.stored else []
        return board + [f"({s.rule}): {note}" for s in self._scores.values() for note in s.notes]

    def rank_board(self) -> RankBoard:
        """srbench2021's board as the Pareto figure draws it: the store's (numpy only) for a
        workspace's runs under the reference profile, else the rule's Score's (figures.ranks)."""
        from srtui.results.outputs.figures import ranks

        if self._board is None:
            lean = None
            if self.runs is None and self.store is not None and self.trust is None:
                lean = ranks.from_store(self.store, self.suite, self.options)
            self._board = lean or ranks.from_score(self.score(RULE))
        return self._board

    def takes_profile(self, rule: str) -> bool:
        """Whether ``rule`` has the option ``profile`` (a release's rule)."""
        if self._board is not None and self._board.stored and rule == RULE:
            return True  # the store's board is srbench2021's reference profile
        from srtui.results.scoring import RULES

        found = RULES.get(rule)
        return found is not None and "profile" in found.options

    @property
    def looks(self) -> dict[str, Look]:
        """One look per method: the workspace's methods first (``methods``), then the input's
        others, so a method looks the same in every figure of a workspace."""
        if self._looks is None:
            from srtui.results.outputs.figures.sources import published_methods
            from srtui.results.store.queries import run_methods

            names: list[str] = []
            if self.runs is None and self.store is not None:  # the runs not read (yet): the store's methods
                names += run_methods(self.store, self.suite)
            for frame in (self.runs, self.trust, self.ratings):
                if frame is not None and "method" in frame.columns:
                    names += [str(m) for m in frame["method"].dropna().unique()]
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


def store_data(store: Store, suite: str | None, options: dict[str, Any] | None = None) -> FigureData:
    """``workspace_data`` whose runs table is read only when a figure needs it: `srtui plot`'s
    input (a Pareto figure of a workspace reads its board from the store, ``rank_board``)."""
    from srtui.results.store.queries import workspace_methods

    return FigureData(options=dict(options or {}), methods=workspace_methods(store), store=store, suite=suite)


@dataclass(frozen=True)
class Kind:
    """A figure kind, declared once with :func:`figure` beside the function that makes its data:
    `srtui plot` (its help and ``--list``), the report, the app's Plots screen, docs/figures.md's
    table (:func:`docs_table`), the leaderboard a rule's figure is (:func:`rule_figures`) and the
    contract tests (tests/e2e/test_figures.py, test_figure_kinds.py) all read it."""

    name: str
    rule: str  # the scoring rule whose Score it draws ("(review)": a review session's ratings)
    summary: str  # what it shows (`srtui plot --list`, the docs table)
    draw: Callable[[FigureData, float], Figure]  # matplotlib: its file (and the report's SVG)
    #: its data (plotdata.Plot), which the terminal draws; None: no terminal form (``terminal`` says why)
    plot: Callable[[FigureData], Plot] | None = None
    terminal: str = ""  # why the app's Plots screen cannot draw it ("" when it can)
    also: tuple[str, ...] = ()  # other rules it draws (`--rule`)
    #: words the drawn figure shows besides the method names (its axes, legend, title)
    axes: tuple[str, ...] = ()
    source: str = ""  # the docs table's rule column, when more than the rule's name
    publication: str = ""  # the publication and notebook it reproduces
    order: int = 100  # its place in listings


_KINDS: dict[str, Kind] = {}
_F = TypeVar("_F", bound=Callable[..., Any])


def figure(
    name: str,
    rule: str,
    summary: str,
    *,
    draw: Callable[[FigureData, float], Figure] | None = None,
    terminal: str = "",
    also: tuple[str, ...] = (),
    axes: tuple[str, ...] = (),
    source: str = "",
    publication: str = "",
    order: int = 100,
) -> Callable[[_F], _F]:
    """Declare the figure ``name`` (a module of this package each). The decorated function takes
    the ``FigureData`` and returns the kind's ``Plot`` (plotdata: its traces, axes and scales),
    which matplotlib (``drawplot``) and the terminal both draw; ``draw=`` gives matplotlib a
    publication drawing of its own (read from the same data). A kind that has no terminal form
    (a heatmap, a critical-difference diagram) decorates its matplotlib drawing ``(data, width)
    -> Figure`` instead and says why in ``terminal``."""

    def register(fn: _F) -> _F:
        if name in _KINDS:
            raise ValueError(f"figure {name!r} is declared twice")
        if terminal:
            kind = Kind(name, rule, summary, fn, None, terminal, also, axes, source, publication, order)
        else:
            drawing = draw or partial(_draw_plot, fn)
            kind = Kind(name, rule, summary, drawing, fn, "", also, axes, source, publication, order)
        _KINDS[name] = kind
        return fn

    return register


def _draw_plot(plot: Callable[[FigureData], Plot], data: FigureData, width: float) -> Figure:
    from srtui.results.outputs.figures.drawplot import draw_plot

    return draw_plot(plot(data), data, width)


def forget(name: str) -> None:
    """Take a declared kind out of the registry (a test's throwaway kind)."""
    _KINDS.pop(name, None)


def kinds() -> dict[str, Kind]:
    """Every figure kind, in listing order: each module of this package is imported once (as the
    scoring rules are), so a new figure is a new module."""
    import_every_module(sys.modules[__name__])
    return {k.name: k for k in sorted(_KINDS.values(), key=lambda k: (k.order, k.name))}


def docs_table() -> str:
    """docs/figures.md's table of the figures (tests/e2e/test_figures.py checks the page has it)."""
    rows = ["| figure | rule | what it shows | publication | in the app |", "| --- | --- | --- | --- | --- |"]
    for k in kinds().values():
        app = f"a file only: {k.terminal}" if k.terminal else "drawn"
        rows.append(f"| `{k.name}` | {k.source or f'`{k.rule}`'} | {k.summary} | {k.publication} | {app} |")
    return "\n".join(rows) + "\n"


def get_kind(name: str) -> Kind:
    found = kinds()
    if name not in found:
        raise FigureError(f"unknown figure {name!r} (figures: {', '.join(found)})")
    return found[name]


#: the figure of a rule no kind draws (its leaderboard's per-dataset medians)
DEFAULT_FIGURE = "points"


def rule_figures() -> dict[str, str]:
    """Rule -> the figure that shows its leaderboard (the app's save key): the first kind in
    listing order that draws it (its ``rule`` or ``also``)."""
    out: dict[str, str] = {}
    for k in kinds().values():
        for rule in (k.rule, *k.also):
            out.setdefault(rule, k.name)
    return out


def figure_for_rule(rule: str | None) -> str:
    return rule_figures().get(rule or "", DEFAULT_FIGURE)


def plot_data(kind: str, data: FigureData) -> Plot:
    """The kind's data as every backend draws it (raises FigureError, also for a kind with no
    terminal form, saying why)."""
    k = get_kind(kind)
    if k.plot is None:
        raise FigureError(f"figure {kind!r} has no terminal form ({k.terminal}): draw it as a file (srtui plot)")
    return k.plot(data)


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
    "DEFAULT_FIGURE",
    "FigureData",
    "FigureError",
    "Kind",
    "docs_table",
    "draw",
    "figure",
    "figure_for_rule",
    "forget",
    "get_kind",
    "kinds",
    "plot_data",
    "render",
    "rule_figures",
    "store_data",
    "svg",
    "workspace_data",
]
