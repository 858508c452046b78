"""Plots (plotext through textual-plotext): one run's predictions, and a suite's figures: every
kind the figure registry lists (srtui.results.outputs.figures.kinds(), through the facade), drawn from
the kind's own data by ``srtui.app.terminal_plot``."""

from __future__ import annotations

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
from srtui.app.terminal_plot import draw_plot
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
A suite's methods compared: every figure kind `srtui plot --list` lists, drawn from the same data
`srtui plot` draws (results/outputs/figures declares them). The selector beside the suite picks
the figure; t cycles through them, e shows energy vs time. A figure the terminal cannot draw (a
heatmap, a critical-difference diagram) says so; f saves the figure shown as a PDF. Performance
profile (profiles): for each R² threshold, the share of datasets whose test R² reaches it, each
method's AUC in the legend. Pareto front (pareto): each method at its median rank of test R²
against its median rank of model size (1 = best), the first front joined by the line. Energy vs
time (energy): each method's median energy of a run against its median training time, log axes.
"""
#: the figure `e` shows (a key of its own since the monitor's palette offers it)
ENERGY_FIGURE = "energy"


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
    AUTO_FOCUS = ""  # keys go to the screen; Tab reaches the selectors
    BINDINGS = [
        Binding("t", "switch_plot", "Switch plot", id="suite-plots.toggle"),
        Binding("e", "show_cost", "Energy vs time", id="suite-plots.cost"),
        *SAVE_BINDINGS,
    ]

    def __init__(self) -> None:
        super().__init__()
        self.aggregate: SuiteAggregate | None = None
        self.kind: str | None = None  # the figure kind shown (the registry's name)
        self._requested: str | None = None
        self._styles: dict[str, Style] = {}
        self.legend = Text("")  # the legend of the figure shown

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Horizontal(classes="toolbar"):
            yield Select([], prompt="suite", id="suite", allow_blank=True)
            yield Select([], prompt="figure", id="plot-kind", allow_blank=True)
            yield Static(id="suite-info", markup=False)
        with ContentSwitcher(initial="plot", id="switcher"):
            yield PlotextPlot(id="plot")
            yield Static(id="why", markup=False)
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

    @on(Select.Changed, "#plot-kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.kind:
            self.show_plot(event.value)

    def _load_once(self, suite: object) -> None:
        if isinstance(suite, str) and suite != self._requested:
            self._requested = suite  # Select posts Changed more than once: load once
            self.query_one("#suite-info", Static).update(Text(f"computing the plots of {suite}...", style="dim"))
            self.query_one("#switcher").loading = True
            self.load(suite)

    @work(thread=True, exclusive=True, group="suite-plots", exit_on_error=False)
    def load(self, suite: str) -> None:
        # every kind's data (the rules' scores) is computed here, off the event loop
        self.post_message(AggregateReady(suite_aggregate(self.reader, suite)))

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in ("suite-plots", "suite-list") and event.state == WorkerState.ERROR:
            self.query_one("#switcher").loading = False
            self.query_one("#suite-info", Static).update(Text(str(event.worker.error), style="red"))

    def on_aggregate_ready(self, message: AggregateReady) -> None:
        a = self.aggregate = message.aggregate
        self.query_one("#switcher").loading = False
        self.query_one("#suite-info", Static).update(Text(f"{len(a.methods)} methods x {a.n_tasks} tasks"))
        # each method's look in the figures (srtui.results.outputs.figures.style.looks), not its place here
        self._styles = dict(zip(a.methods, method_styles(self.app, a.looks, list(a.methods))))
        names = [k.name for k in a.kinds]
        options = [(self._option(k.name, bool(k.terminal)), k.name) for k in a.kinds]
        kinds = self.query_one("#plot-kind", Select)
        with kinds.prevent(Select.Changed):
            kinds.set_options(options)
        first = next((n for n in names if n in a.plots), names[0] if names else None)
        if first is not None:
            self.show_plot(self.kind if self.kind in names else first)

    def _option(self, name: str, file_only: bool) -> str:
        """A kind's line in the selector: its name, and why nothing is drawn when it is not."""
        drawn = self.aggregate is not None and name in self.aggregate.plots
        return name if drawn else f"{name} ({'file' if file_only else 'no data'})"

    def show_plot(self, name: str) -> None:
        """Draw the figure kind ``name`` from the aggregate's data (or say why it is not drawn)."""
        self.kind = name
        kinds = self.query_one("#plot-kind", Select)
        if kinds.value != name and name in self._names():
            with kinds.prevent(Select.Changed):
                kinds.value = name
        a = self.aggregate
        if a is None:
            return
        switcher = self.query_one("#switcher", ContentSwitcher)
        legend_text = Text("")
        if name in a.plots:
            grid = self._plot_grid()
            legend_text = self._draw(name, grid)
            switcher.current = "plot"
            # the legend's new height changes the plot's: place the words again on the final grid
            self.call_after_refresh(self._redraw, name, grid)
        else:
            why = a.missing.get(name, f"no figure {name!r}")
            self.query_one("#why", Static).update(Text(visible(why, one_line=True), style="yellow"))
            switcher.current = "why"
        self.legend = legend_text
        self.query_one("#legend", Static).update(legend_text)

    def _draw(self, name: str, grid: tuple[int, int]) -> Text:
        assert self.aggregate is not None
        widget = self.query_one("#plot", PlotextPlot)
        text = draw_plot(widget.plt, self.aggregate.plots[name], self._styles, grid)
        widget.refresh()
        return text

    def _redraw(self, name: str, grid: tuple[int, int]) -> None:
        if self.kind == name and self.aggregate is not None and self._plot_grid() != grid:
            self._draw(name, self._plot_grid())

    def _plot_grid(self) -> tuple[int, int]:
        """Character columns and rows inside the plot's axes (the switcher's area minus ticks,
        title and labels)."""
        size = self.query_one("#switcher", ContentSwitcher).size
        if not size.width:  # not laid out yet (still loading): the screen less its bars
            return max(self.size.width - 12, 20), max(self.size.height - 12, 8)
        return max(size.width - 12, 20), max(size.height - 5, 8)

    def _names(self) -> list[str]:
        return [k.name for k in self.aggregate.kinds] if self.aggregate is not None else []

    def action_switch_plot(self) -> None:
        names = self._names()
        if names:
            at = names.index(self.kind) if self.kind in names else -1
            self.show_plot(names[(at + 1) % len(names)])

    def action_save_figure(self) -> None:
        if self._requested is None or self.kind is None:
            self.notify("no suite shown yet", severity="warning")
            return
        save_in_background(self, self.reader, "figure", self._requested, self.kind)

    def action_save_report(self) -> None:
        if self._requested is None:
            self.notify("no suite shown yet", severity="warning")
            return
        save_in_background(self, self.reader, "report", self._requested)

    def action_show_cost(self) -> None:
        """e: energy vs time, and e again back to the first figure the terminal draws."""
        if self.kind != ENERGY_FIGURE:
            self.show_plot(ENERGY_FIGURE)
            return
        drawn = [n for n in self._names() if self.aggregate is not None and n in self.aggregate.plots]
        if drawn:
            self.show_plot(drawn[0])
