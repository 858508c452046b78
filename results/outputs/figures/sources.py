"""What every figure says besides its data: which methods are this workspace's and which are
published (``--published``), and, under the ``reference`` profile, where the publication's code
draws something srtui's ``corrected`` profile would draw otherwise.

A published method keeps its colour and marker (``style.looks``) but its colour is tagged
(``tagged``: an alpha byte of ``PUBLISHED_ALPHA``, invisible) by ``FigureData.look``; ``finish``
turns every tagged marker hollow (filled: this workspace, hollow: published, which survives
greyscale printing), every tagged line without a marker dotted, and adds a legend of the two
groups with the footnotes of published names (``Linear`` = SGDRegressor). The caption sentences
(``REFERENCE_CAVEATS``) restate rows of the fidelity table of docs/scoring.md.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from srtui.results.outputs.figures import FigureData, Kind

PUBLISHED_ALPHA = "fe"
WORKSPACE = "this workspace"  # srtui.results.scoring.published.merge.WORKSPACE

#: per figure, one sentence under the reference profile (docs/scoring.md, the fidelity table)
REFERENCE_CAVEATS = {
    "pareto": "Reference profile (SRBench 2021's notebook): fronts are its loop's 6 levels, so a front can "
    "join dominated methods and with fewer fronts every method ends on the last; "
    "-o profile=corrected draws complete non-dominated sorting.",
    "points": "Reference profile (SRBench 2021's code): failed runs are dropped before the medians; "
    "-o profile=corrected counts them as the worst value.",
    "profiles": "Reference profile (SRBench 2.0's perfprof code): each curve stays flat after its highest R2 "
    "instead of dropping to 0, which overstates every area; -o profile=corrected gives the exact area.",
}


def tagged(color: str) -> str:
    """``#rrggbb`` marked as a published method's (the same colour to the eye)."""
    return color + PUBLISHED_ALPHA if isinstance(color, str) and len(color) == 7 and color.startswith("#") else color


def published_methods(data: FigureData) -> dict[str, str]:
    """Method -> its published source label, for the rows that are not this workspace's."""
    runs = data.runs
    if runs is None or "source" not in runs.columns:
        return {}
    rows = runs[runs["source"].notna() & (runs["source"] != WORKSPACE)]
    return dict(zip(rows["method"].astype(str), rows["source"].astype(str)))


def finish(fig: Figure, kind: Kind, data: FigureData) -> Figure:
    """One legend above the axes (in the layout: nothing overlaps it): the two groups of methods
    and the published names' footnotes with ``--published``, and the reference caveat."""
    from matplotlib.lines import Line2D

    published = published_methods(data)
    handles: list[Line2D] = []
    if published:
        drawn = _tagged_colours(fig)  # a legend only for what is drawn (a rule can leave them all out)
        published = {m: s for m, s in published.items() if tagged(data.look(m).color).lower() in drawn}
        _hollow(fig)
    if published:
        handles += _source_handles(data, published)
    caveat = caveat_for(kind, data)
    if caveat:
        handles.append(Line2D([], [], linestyle="", label=textwrap.fill(caveat, int(fig.get_figwidth() * 15))))
    if handles:
        cols = 1 if caveat else min(2, len(handles))
        fig.legend(handles=handles, loc="outside upper center", ncols=cols, handlelength=1.2, fontsize="x-small")
    return fig


def caveat_for(kind: Kind, data: FigureData) -> str:
    """The figure's reference-artefact sentence when it is drawn under the reference profile."""
    if kind.name not in REFERENCE_CAVEATS or not data.takes_profile(kind.rule):
        return ""
    return REFERENCE_CAVEATS[kind.name] if str(data.options.get("profile", "reference")) == "reference" else ""


def _tagged_colours(fig: Figure) -> set[str]:
    """The tagged (published) colours of the figure's lines, lower-case ``#rrggbbaa``: what
    ``_hollow`` draws hollow or dotted, so what the legend's "hollow" can speak of."""
    out: set[str] = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            colour = line.get_color()
            if isinstance(colour, str) and len(colour) == 9 and colour.lower().endswith(PUBLISHED_ALPHA):
                out.add(colour.lower())
    return out


def _untag(line: Any) -> None:
    color = line.get_color()
    if not (isinstance(color, str) and len(color) == 9 and color.endswith(PUBLISHED_ALPHA)):
        return
    line.set_color(color[:7])
    if line.get_marker() not in (None, "None", "", " "):
        line.set_markerfacecolor("none")
        line.set_markeredgecolor(color[:7])
        line.set_markeredgewidth(1.1)
    else:
        line.set_linestyle(":")


def _hollow(fig: Figure) -> None:
    for ax in fig.axes:
        for line in ax.get_lines():
            _untag(line)
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        for handle in getattr(legend, "legend_handles", None) or []:
            if hasattr(handle, "get_marker"):
                _untag(handle)


def _source_handles(data: FigureData, published: dict[str, str]) -> list[Any]:
    from matplotlib.lines import Line2D

    from srtui.results.scoring.published.names import footnotes

    runs = data.runs
    assert runs is not None
    mine = sorted({str(m) for m in runs["method"].dropna()} - set(published))
    handles = [Line2D([], [], marker="o", color="#333333", linestyle="", label=f"{WORKSPACE} ({len(mine)}): filled")]
    for source in sorted(set(published.values())):
        n = sum(1 for s in published.values() if s == source)
        label = f"{source} ({n}): hollow"
        handles.append(Line2D([], [], marker="o", color="#333333", markerfacecolor="none", linestyle="", label=label))
    return handles + [Line2D([], [], linestyle="", label=note) for note in footnotes(published)]
