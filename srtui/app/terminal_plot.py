"""The terminal's drawing of a figure kind's ``Plot`` (srtui.results.outputs.figures.plotdata, through
the facade) with plotext: the app's Plots screen draws every kind the registry lists from the same
data `srtui plot` draws with matplotlib. Each method in its figures' look (glyph and colour);
words beside points placed so that none covers another's marker; log axes drawn as exponents on
linear axes, ticked in the data's units."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.text import Text

from srtui.app.widgets import Style, legend
from srtui.views import Plot, Trace, visible

#: longest word written beside a point (the legend has the full name)
LABEL_CHARS = 14
GUIDE: Style = ("·", (128, 128, 128), "#808080")  # a trace of no method's: a front's line


def log_axis(lo: float, hi: float) -> tuple[tuple[float, float], list[float]]:
    """(limits as base-10 exponents, tick values) of a log axis over [lo, hi]: the powers of
    ten inside it, with 2 and 5 times them when fewer than three powers fit."""
    a, b = math.log10(lo), math.log10(hi)
    ticks = [10.0**k for k in range(math.floor(a), math.ceil(b) + 1) if lo <= 10.0**k <= hi]
    if len(ticks) < 3:
        ticks = sorted(
            m * 10.0**k for k in range(math.floor(a), math.ceil(b) + 1) for m in (1, 2, 5) if lo <= m * 10.0**k <= hi
        )
    return (a, b), ticks


def shared_cells(points: dict[str, tuple[float, float]], grid: tuple[int, int]) -> dict[str, str]:
    """Methods whose point falls in the same character cell as another's (so one marker hides
    the other): each such method -> the others it shares its cell with, for the legend."""
    finite = {m: p for m, p in points.items() if all(math.isfinite(v) for v in p)}
    if len(finite) < 2:
        return {}
    xs, ys = [p[0] for p in finite.values()], [p[1] for p in finite.values()]

    def cell(v: float, lo: float, hi: float, n: int) -> int:
        return round((v - lo) / (hi - lo) * (n - 1)) if hi > lo else 0

    cells: dict[tuple[int, int], list[str]] = {}
    for m, (x, y) in finite.items():
        key = (cell(x, min(xs), max(xs), grid[0]), cell(y, min(ys), max(ys), grid[1]))
        cells.setdefault(key, []).append(m)
    return {m: ", ".join(o for o in group if o != m) for group in cells.values() if len(group) > 1 for m in group}


def place_labels(
    labels: list[tuple[float, float, int]],
    cell: tuple[float, float],
    top: float,
    points: Sequence[tuple[float, float]] = (),
) -> list[float | None]:
    """The height of each label (x, y, length in characters) so that no two share a row of the
    plot where they overlap: a label that would is moved one row up (down at the top) or one row
    down, never further, since a label rows away sat decades from its point on the log axes (#55);
    one that still clashes gets None (not written: the legend names the point by its marker).
    ``cell`` is one character's width and height in data units; no label covers one of ``points``
    (the plot's markers: a label once hid another method's point)."""
    width, height = cell
    placed: list[tuple[float, float, float]] = []  # x from, x to, row height
    out: list[float | None] = [None] * len(labels)
    for i in sorted(range(len(labels)), key=lambda k: labels[k][1]):
        x, y, n = labels[i]
        x_to = x + (n + 1) * width

        def clash(row: float, x_from: float = x, x_end: float = x_to) -> bool:
            if any(abs(row - py) < 0.5 * height and x_from <= px < x_end for px, py in points):
                return True
            return any(abs(row - r) < 0.999 * height and x_from < b and a < x_end for a, b, r in placed)

        # its own row, a row up or down, or a row off a label already there, within 1.5 rows
        near = [y, y + height, y - height, *(r + d for _, _, r in placed for d in (height, -height))]
        rows = sorted((r for r in near if abs(r - y) <= 1.5 * height and r <= top), key=lambda r: abs(r - y))
        row = next((r for r in rows if not clash(r)), None)
        if row is not None:
            placed.append((x, x_to, row))
        out[i] = row
    return out


class _Axis:
    """One axis of the drawing: a log axis holds exponents (plotext's own log scale transforms
    the stored data at every build, and a widget builds at every render)."""

    def __init__(self, plot: Plot, which: str) -> None:
        self.log = getattr(plot, f"{which}_scale") == "log"
        self.which = which

    def of(self, values: Sequence[float]) -> list[float]:
        if not self.log:
            return [float(v) for v in values]
        return [math.log10(v) if v > 0 else math.nan for v in values]

    def limits(self, plot: Plot, values: list[float], words: bool) -> tuple[float, float, list[float] | None]:
        """(low, high, log ticks or None) in drawing units; with ``words`` beside the points an
        x axis leaves room right of the last one."""
        given = getattr(plot, f"{self.which}_lim")
        finite = [v for v in values if math.isfinite(v)] or [0.0, 1.0]
        room = words and self.which == "x"
        if self.log:
            low, high = 10 ** min(finite) / (2 if room else 3), 10 ** max(finite) * (40 if room else 3)
            (lo, hi), ticks = log_axis(*(given or (low, high)))
            return lo, hi, ticks
        if given:
            return given[0], given[1], None
        lo, hi = min(finite), max(finite)
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        return lo, hi + (hi - lo) * (0.25 if room else 0.0), None


def _tick(v: float) -> str:
    return f"{v:.0e}" if v and (abs(v) < 1e-2 or abs(v) >= 1e4) else f"{v:g}"


def draw_plot(plt: Any, plot: Plot, styles: dict[str, Style], grid: tuple[int, int]) -> Text:
    """Draw ``plot`` on plotext's ``plt`` (cleared first); the legend as text. ``grid``: the
    plot's character columns and rows (where words beside points go)."""
    plt.clear_data()
    x_axis, y_axis = _Axis(plot, "x"), _Axis(plot, "y")
    xs = {id(t): x_axis.of(t.x) for t in plot.traces}
    ys = {id(t): y_axis.of(t.y) for t in plot.traces}
    words_shown = any(t.text for t in plot.traces)
    x_lo, x_hi, x_ticks = x_axis.limits(plot, [v for t in plot.traces for v in xs[id(t)]], words_shown)
    y_lo, y_hi, y_ticks = y_axis.limits(plot, [v for t in plot.traces for v in ys[id(t)]], words_shown)
    plt.xlim(x_lo, x_hi)
    plt.ylim(y_lo, y_hi)
    _ticks(plt.xticks, plot.x_ticks, x_ticks, x_axis)
    _ticks(plt.yticks, plot.y_ticks, y_ticks, y_axis)

    def style(t: Trace) -> Style:
        return GUIDE if t.method is None else styles.get(t.method, GUIDE)

    for t in plot.traces:  # lines first: later data is drawn on top, so no marker is hidden
        if t.mode == "lines":  # a method's line is fine (its markers say whose); a guide's dotted
            marker = style(t)[0] if t.method is None else "braille"
            plt.plot(xs[id(t)], ys[id(t)], color=style(t)[1], marker=marker)
    cell = ((x_hi - x_lo) / grid[0], (y_hi - y_lo) / grid[1])
    markers = [(x, y) for t in plot.traces if t.mode != "lines" for x, y in zip(xs[id(t)], ys[id(t)])]
    words = [(w, x, y, t) for t in plot.traces for w, x, y in zip(t.text, xs[id(t)], ys[id(t)]) if w]
    shift = (x_hi - x_lo) / 40  # a word starts a cell or two right of its point
    texts = [visible(w, one_line=True)[:LABEL_CHARS] for w, *_ in words]
    rows = place_labels([(x + shift, y, len(s)) for s, (_, x, y, _) in zip(texts, words)], cell, y_hi, markers)
    for s, row, (_, x, _, t) in zip(texts, rows, words):
        if row is not None:  # no room beside its point: the legend names its marker
            plt.text(s, x + shift, row, color=style(t)[1], alignment="left")
    for t in plot.traces:  # after the words: no word covers another's marker
        if t.mode == "lines+markers":
            plt.plot(xs[id(t)], ys[id(t)], color=style(t)[1], marker=style(t)[0])
        elif t.mode == "markers":
            plt.scatter(xs[id(t)], ys[id(t)], color=style(t)[1], marker=style(t)[0])
    # the y axis's words in the title (plotext writes both axes' labels on one line under the
    # plot), the plot's title after them when it fits: plotext leaves out a title too long
    title = f"y: {_logged(plot.y_label, y_axis.log)}"
    if plot.title and len(title) + len(plot.title) + 2 <= grid[0]:  # plotext drops a longer one
        title += f"; {plot.title}"
    plt.title(visible(title, one_line=True))
    plt.xlabel(visible(f"x: {_logged(plot.x_label, x_axis.log)}", one_line=True))
    single = {
        t.method: (xs[id(t)][0], ys[id(t)][0])
        for t in plot.traces
        if t.method and t.mode == "markers" and len(t.x) == 1
    }
    return _legend(plot, style, shared_cells(single, grid))


def _logged(words: str, log: bool) -> str:
    """An axis's words saying it is logarithmic: "time (s)" -> "time (s, log)"."""
    if not log:
        return words
    return f"{words[:-1]}, log)" if words.endswith(")") else f"{words} (log)"


def _ticks(set_ticks: Any, words: tuple[tuple[float, str], ...], log: list[float] | None, axis: _Axis) -> None:
    if words:
        set_ticks(axis.of([v for v, _ in words]), [visible(w, one_line=True)[:LABEL_CHARS] for _, w in words])
    elif log is not None:
        set_ticks([math.log10(v) for v in log], [_tick(v) for v in log])


def _legend(plot: Plot, style: Any, hidden: dict[str, str]) -> Text:
    """Each labelled trace with its glyph; a method whose marker shares a cell with another's
    says where it is hidden (``hidden``); the plot's notes after."""
    shown = [t for t in plot.traces if t.label]
    names = [
        visible(t.label, one_line=True) + (f" (at {hidden[t.method]})" if t.method in hidden else "") for t in shown
    ]
    text = legend(names, [style(t) for t in shown])
    for note in plot.notes:
        text.append("\n" + visible(note, one_line=True))  # unstyled: the spans are the methods'
    return text
