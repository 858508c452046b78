"""Plots (plotext through textual-plotext): one run's predictions, and a suite's profiles, front
and cost (median energy against median training time, SRBench 2.0's Figure 1)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import ContentSwitcher, Footer, Select, Static
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from srtui.app.messages import AggregateReady, SeriesReady
from srtui.app.screens.base import JobScreen, SectionScreen
from srtui.app.screens.saving import SAVE_BINDINGS, SAVE_HELP, save_in_background
from srtui.app.widgets import NavBar, Style, legend, method_styles, series_styles
from srtui.views import (
    PredictionSeries,
    Reader,
    SuiteAggregate,
    prediction_series,
    suite_aggregate,
    suites,
    visible,
)

JOB_HELP = """\
Predicted against true values of one run, with the identity line (a perfect model lies on it);
train and test points in two colours. For time-series tasks, t switches to the series over
dates: training truth, test truth and the predictions.
"""

SUITE_HELP = """\
A suite's methods compared, drawn from the data of its figures (`srtui plot`). Performance
profile (srbench2025): for each R² threshold, the share of tasks whose test R² reaches it -
higher and further right is better; each method's AUC in the legend. Pareto front (srbench2021,
the `pareto` figure): each method at its median rank of test R² against its median rank of
model size over tasks (1 = best); the first front (no other is both better ranked and smaller)
is joined by the line. Energy vs time (e): each method's median energy of a single run (kWh,
from RAPL or estimated: docs/running.md, "Training time and energy") against its median
training time, both on log axes (SRBench 2.0's Figure 1). t cycles through the plots, the
selector above picks the suite.
"""
#: the publication figure (srtui.results.outputs.figures) of each suite plot
PLOT_FIGURES = {"profile": "profiles", "front": "pareto", "cost": "energy"}
#: the suite plots in the order t cycles through them
SUITE_PLOTS = ("profile", "front", "cost")
#: longest method label written beside a point of the cost plot (the legend has the full name)
LABEL_CHARS = 14


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


def _downsample(n: int, limit: int = 2000) -> np.ndarray:
    """Plotting every point of a large task only slows the terminal: keep an even sample."""
    return np.arange(n) if n <= limit else np.linspace(0, n - 1, limit).astype(int)


class JobPlotsScreen(JobScreen):
    HELP = JOB_HELP
    AUTO_FOCUS = ""
    BINDINGS = [
        Binding("t", "switch_plot", "Switch plot", id="plots.toggle"),
    ]

    def __init__(self, job_id: str) -> None:
        super().__init__(job_id)
        self.series: PredictionSeries | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static(Text(f"run {self.job_id}: loading...", style="bold"), id="job-title", markup=False)
        with ContentSwitcher(initial="scatter", id="switcher"):
            yield PlotextPlot(id="scatter")
            yield PlotextPlot(id="timeseries")
        yield Static(id="legend", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def read(self) -> SeriesReady:
        return SeriesReady(prediction_series(self.reader, self.job_id))

    def on_series_ready(self, message: SeriesReady) -> None:
        s = self.series = message.series
        hint = "  (t: time series)" if s.dates_train else ""
        self.query_one("#job-title", Static).update(Text(s.label + hint, style="bold"))
        self.refresh_bindings()  # t applies to time series only
        plt = self.query_one("#scatter", PlotextPlot).plt
        plt.clear_data()
        styles = self.series_look = series_styles(self.app, 3)
        for (_name, y, pred), (glyph, rgb, _hex) in zip(
            (("train", s.y_train, s.pred_train), ("test", s.y_test, s.pred_test)), styles
        ):
            keep = _downsample(len(y))
            finite = np.isfinite(pred[keep])
            plt.scatter(y[keep][finite].tolist(), pred[keep][finite].tolist(), color=rgb, marker=glyph)
        lo = float(min(np.min(s.y_train), np.min(s.y_test)))
        hi = float(max(np.max(s.y_train), np.max(s.y_test)))
        plt.plot([lo, hi], [lo, hi], color=styles[2][1], marker="·")
        self._legend()
        plt.title("predicted vs true")
        plt.xlabel("true")
        plt.ylabel("predicted")
        self.query_one("#scatter", PlotextPlot).refresh()
        if s.dates_train and s.dates_test:
            ts = self.query_one("#timeseries", PlotextPlot).plt
            ts.clear_data()
            ts.date_form("Y-m-d")
            ts.plot(list(s.dates_train), s.y_train.tolist(), color=styles[0][1], marker=styles[0][0])
            ts.plot(list(s.dates_test), s.y_test.tolist(), color=styles[1][1], marker=styles[1][0])
            dates = list(s.dates_train) + list(s.dates_test)
            ts.plot(dates, np.concatenate([s.pred_train, s.pred_test]).tolist(), color=styles[2][1], marker="·")
            ts.title("over dates")
            self.query_one("#timeseries", PlotextPlot).refresh()

    def _legend(self) -> None:
        timeseries = self.query_one("#switcher", ContentSwitcher).current == "timeseries"
        names = ["train truth", "test truth", "predicted"] if timeseries else ["train", "test", "identity (perfect)"]
        styles = list(self.series_look)
        styles[2] = ("·", styles[2][1], styles[2][2])
        self.query_one("#legend", Static).update(legend(names, styles))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_plot":  # only a time-series task has a second plot
            return self.series is not None and bool(self.series.dates_train)
        return super().check_action(action, parameters)

    def action_switch_plot(self) -> None:
        switcher = self.query_one("#switcher", ContentSwitcher)
        switcher.current = "timeseries" if switcher.current == "scatter" else "scatter"
        self._legend()


class SuitePlotsScreen(SectionScreen):
    HELP = SUITE_HELP + SAVE_HELP
    AUTO_FOCUS = ""  # keys go to the screen; Tab reaches the suite selector
    BINDINGS = [
        Binding("t", "switch_plot", "Switch plot", id="suite-plots.toggle"),
        Binding("e", "show_cost", "Energy vs time", id="suite-plots.cost"),
        *SAVE_BINDINGS,
    ]

    def __init__(self) -> None:
        super().__init__()
        self.aggregate: SuiteAggregate | None = None
        self._requested: str | None = None
        self._legends: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Horizontal(classes="toolbar"):
            yield Select([], prompt="suite", id="suite", allow_blank=True)
            yield Static(id="suite-info", markup=False)
        with ContentSwitcher(initial="profile", id="switcher"):
            yield PlotextPlot(id="profile")
            yield PlotextPlot(id="front")
            yield PlotextPlot(id="cost")
        yield Static(id="legend", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reader = Reader(self.app.workspace)
        self.query_one("#suite-info", Static).update(Text("reading the suites...", style="dim"))
        self.query_one("#switcher").loading = True
        self.load_suites()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self._requested = None  # compute again even for the same suite
        self.load_suites()

    def on_screen_resume(self) -> None:
        # suites that appeared since (a run started meanwhile); not on the first show
        if self.aggregate is None and getattr(self, "_suites_shown", False):
            self.load_suites()
        self._suites_shown = True

    @work(thread=True, exclusive=True, group="suite-list", exit_on_error=False)
    def load_suites(self) -> None:
        names = suites(self.reader)
        self.app.call_from_thread(self._set_suites, names)

    def _set_suites(self, names: list[str]) -> None:
        select = self.query_one("#suite", Select)
        keep = select.value if select.value in names else None  # a refresh keeps the chosen suite
        select.set_options([(n, n) for n in names])
        if names:
            select.value = keep or names[0]
            self._load_once(select.value)  # in case the value did not change (no Changed event)
        else:
            self.query_one("#switcher").loading = False
            self.query_one("#suite-info", Static).update(Text("no runs in this workspace yet", style="dim"))

    @on(Select.Changed, "#suite")
    def _suite_changed(self, event: Select.Changed) -> None:
        self._load_once(event.value)

    def _load_once(self, suite: object) -> None:
        if isinstance(suite, str) and suite != self._requested:
            self._requested = suite  # Select posts Changed more than once: load once
            self.query_one("#suite-info", Static).update(Text(f"computing the plots of {suite}...", style="dim"))
            self.query_one("#switcher").loading = True
            self.load(suite)

    @work(thread=True, exclusive=True, group="suite-plots", exit_on_error=False)
    def load(self, suite: str) -> None:
        self.post_message(AggregateReady(suite_aggregate(self.reader, suite)))

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in ("suite-plots", "suite-list") and event.state == WorkerState.ERROR:
            self.query_one("#switcher").loading = False
            self.query_one("#suite-info", Static).update(Text(str(event.worker.error), style="red"))

    def on_aggregate_ready(self, message: AggregateReady) -> None:
        a = self.aggregate = message.aggregate
        self.query_one("#switcher").loading = False
        self.query_one("#suite-info", Static).update(
            Text(f"{len(a.methods)} methods x {a.n_tasks} tasks  (t: switch plot)")
        )
        # each method's look in the figures (srtui.results.outputs.figures.style.looks), not its place here
        styles = dict(zip(a.methods, method_styles(self.app, a.looks, list(a.methods))))
        drawings = {"profile": self._draw_profiles, "front": self._draw_front, "cost": self._draw_cost}
        for plot, draw in drawings.items():
            widget = self.query_one(f"#{plot}", PlotextPlot)
            widget.plt.clear_data()
            if plot in a.missing and plot != "cost":  # the rule could not score the runs: say why
                widget.plt.title(visible(a.missing[plot], one_line=True))
                self._legends[plot] = Text("")
            else:
                self._legends[plot] = draw(widget.plt, a, styles)
            widget.refresh()
        self._show_legend()

    def _draw_profiles(self, plt: Any, a: SuiteAggregate, styles: dict[str, Style]) -> Text:
        """The `profiles` figure's curves, each method's AUC in the legend, the rule's note under it."""
        p = a.profiles
        assert p is not None  # missing otherwise
        for m, curve in p.curves.items():
            plt.plot(list(p.thresholds), list(curve), color=styles[m][1], marker=styles[m][0])
        # the y axis's label in the title: plotext writes both labels on one line under the plot
        plt.title(f"share of tasks with R² ≥ x: performance profile (srbench2025, {p.profile})")
        plt.xlabel("x: R² threshold")
        plt.ylim(0, 1.05)
        text = legend([f"{m} (AUC {p.auc[m]:.3f})" for m in p.curves], [styles[m] for m in p.curves])
        for note in p.notes:  # the reference AUC's flat tail, as `srtui score` notes it
            text.append("\n" + visible(note, one_line=True))  # unstyled: the spans are the methods
        return text

    def _draw_front(self, plt: Any, a: SuiteAggregate, styles: dict[str, Style]) -> Text:
        """The `pareto` figure's ranks and its first front, joined by a line under the markers."""
        f = a.fronts
        assert f is not None  # missing otherwise
        front = f.fronts[0] if f.fronts else ()
        if len(front) > 1:  # the line first: plotext draws later data on top, so no marker is hidden
            plt.plot([f.points[m][0] for m in front], [f.points[m][1] for m in front], color="gray", marker="·")
        hidden = shared_cells(f.points, self._plot_grid())
        # the front's methods last, on top: where two share a cell, the front's marker shows
        for m, (x, y) in sorted(f.points.items(), key=lambda kv: kv[0] in front):
            plt.scatter([x], [y], color=styles[m][1], marker=styles[m][0])
        plt.title(f"Pareto front (· joins it), y: {f.y_label}")
        plt.xlabel(f"x: {f.x_label}")
        names = [f"{m}{' (front)' * (m in front)}{f' (at {hidden[m]})' if m in hidden else ''}" for m in f.points]
        return legend(names, [styles[m] for m in f.points])

    def _draw_cost(self, plt: Any, a: SuiteAggregate, styles: dict[str, Style]) -> Text:
        """The `energy` figure: one labelled point per method at (median fit_s, median energy), log axes."""
        points = a.energy
        if points:
            # plotext's own log scale transforms the stored data at every build, and a widget builds
            # at every render: plot the exponents on linear axes, tick labels in the figures' units
            xs = [math.log10(p.fit_s) for p in points]
            ys = [math.log10(p.energy_kwh) for p in points]
            (x_lo, x_hi), x_ticks = log_axis(10 ** min(xs) / 2, 10 ** max(xs) * 40)  # room for the labels
            (y_lo, y_hi), y_ticks = log_axis(10 ** min(ys) / 3, 10 ** max(ys) * 3)
            plt.xlim(x_lo, x_hi)
            plt.ylim(y_lo, y_hi)
            plt.xticks([math.log10(v) for v in x_ticks], [f"{v:g}" for v in x_ticks])
            plt.yticks([math.log10(v) for v in y_ticks], [f"{v:.0e}" for v in y_ticks])
            shift = (x_hi - x_lo) / 40  # the label starts a cell or two right of its point
            cols, rows = self._plot_grid()
            cell = ((x_hi - x_lo) / cols, (y_hi - y_lo) / rows)
            labels = [visible(p.method, one_line=True)[:LABEL_CHARS] for p in points]
            spans = [(x + shift, y, len(t)) for t, x, y in zip(labels, xs, ys)]
            label_ys = place_labels(spans, cell, y_hi, list(zip(xs, ys)))
            for label, x, label_y, p in zip(labels, xs, label_ys, points):
                if label_y is not None:  # no room beside its point: the legend names its marker
                    plt.text(label, x + shift, label_y, color=styles[p.method][1], alignment="left")
            for x, y, p in zip(xs, ys, points):  # after the labels: no label covers another's point
                glyph, rgb, _hex = styles[p.method]
                plt.scatter([x], [y], color=rgb, marker=glyph)
        # the y axis's label in the title: plotext writes both labels on one line under the plot
        plt.title(
            "y: median energy (kWh, log) vs median training time"
            if points
            else "no run of this suite has an energy figure yet"
        )
        plt.xlabel("x: median training time (s, log)")
        how = [f"{visible(p.method, one_line=True)} {p.energy_j:.3g} J ({p.how})" for p in points]
        return legend(how, [styles[p.method] for p in points])

    def _plot_grid(self) -> tuple[int, int]:
        """Character columns and rows inside a plot's axes. The plots share the switcher's area;
        a hidden one has no size of its own, so the switcher's is taken (minus ticks, title, labels)."""
        size = self.query_one("#switcher", ContentSwitcher).size
        return max(size.width - 12, 20), max(size.height - 5, 8)

    def _show_legend(self) -> None:
        current = self.query_one("#switcher", ContentSwitcher).current or SUITE_PLOTS[0]
        self.query_one("#legend", Static).update(self._legends.get(current, Text("")))

    def show_plot(self, name: str) -> None:
        self.query_one("#switcher", ContentSwitcher).current = name
        self._show_legend()

    def action_switch_plot(self) -> None:
        current = self.query_one("#switcher", ContentSwitcher).current or SUITE_PLOTS[0]
        self.show_plot(SUITE_PLOTS[(SUITE_PLOTS.index(current) + 1) % len(SUITE_PLOTS)])

    def action_save_figure(self) -> None:
        current = self.query_one("#switcher", ContentSwitcher).current or SUITE_PLOTS[0]
        if self._requested is None:
            self.notify("no suite shown yet", severity="warning")
            return
        save_in_background(self, self.reader, "figure", self._requested, PLOT_FIGURES[current])

    def action_save_report(self) -> None:
        if self._requested is None:
            self.notify("no suite shown yet", severity="warning")
            return
        save_in_background(self, self.reader, "report", self._requested)

    def action_show_cost(self) -> None:
        """e: the cost plot, and e again back to the performance profile."""
        current = self.query_one("#switcher", ContentSwitcher).current
        self.show_plot(SUITE_PLOTS[0] if current == "cost" else "cost")
