"""matplotlib's drawing of a figure kind's ``Plot`` (plotdata.Plot): the file `srtui plot` writes
and the report inlines for a kind that gives no publication drawing of its own (``@figure(...,
draw=...)``). The app's Plots screen draws the same ``Plot`` in the terminal
(``srtui.app.terminal_plot``)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from srtui.results.outputs.figures.style import annotate_points, label, log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from srtui.results.outputs.figures import FigureData
    from srtui.results.outputs.figures.plotdata import Plot, Trace

GUIDE = "#555555"  # a trace of no method's (a front's line, an identity line)


def draw_plot(plot: Plot, data: FigureData, width: float) -> Figure:
    """One pair of axes: each trace in its method's look (a guide in grey, dashed), later traces
    on top; the legend under the axes, the notes after it."""
    from matplotlib.lines import Line2D

    fig = new_figure(width, width * 0.62 + 0.12 * len(plot.traces) / max(1.0, width / 3.5))
    ax = fig.add_subplot()
    words: list[tuple[float, float, str]] = []
    handles = []
    for t in plot.traces:
        line = _trace(ax, t, data)
        if t.label:
            handles.append(Line2D([], [], label=label(t.label, 48), **line))
        words += [(x, y, w) for x, y, w in zip(t.x, t.y, t.text) if w]
    _axes(ax, plot, width)
    handles += [Line2D([], [], linestyle="", label=textwrap.fill(n, int(width * 15))) for n in plot.notes]
    if handles:
        cols = 1 if plot.notes else max(1, min(len(handles), int(width // 2.2)))
        fig.legend(handles=handles, loc="outside lower center", ncols=cols)
    if words:  # last: placed on the final axes
        annotate_points(ax, words)
    return fig


def _trace(ax: Axes, t: Trace, data: FigureData) -> dict[str, Any]:
    """Draw ``t``; the line's keywords (its legend handle draws the same)."""
    if t.method is None:
        look: dict[str, Any] = {"color": GUIDE, "linestyle": "--", "marker": ""}
    else:
        m = data.look(t.method)
        look = {"color": m.color, "marker": m.marker, "linestyle": m.dash}
    if t.mode == "markers":
        look["linestyle"] = ""
    if t.mode == "lines":
        look["marker"] = ""
    every = max(1, len(t.x) // 6) if t.mode == "lines+markers" else None
    ax.plot(list(t.x), list(t.y), markevery=every, zorder=1 if t.method is None else 3, **look)
    return look


def _axes(ax: Axes, plot: Plot, width: float) -> None:
    chars = 18 if width < 5 else 60
    ax.set_xlabel(textwrap.fill(plot.x_label, int(width * 15)))
    ax.set_ylabel(textwrap.fill(plot.y_label, chars))
    if plot.title:
        ax.set_title(textwrap.fill(plot.title, int(width * 16)), fontsize=7)
    if plot.x_scale == "log":
        log_axis(ax.xaxis)
    if plot.y_scale == "log":
        log_axis(ax.yaxis)
    if plot.x_lim:
        ax.set_xlim(*plot.x_lim)
    if plot.y_lim:
        ax.set_ylim(*plot.y_lim)
    if plot.x_ticks:
        ax.set_xticks([v for v, _ in plot.x_ticks], [label(w) for _, w in plot.x_ticks])
    if plot.y_ticks:
        ax.set_yticks([v for v, _ in plot.y_ticks], [label(w) for _, w in plot.y_ticks])
        ax.grid(axis="y", visible=False)
