"""Plots (plotext through textual-plotext): one run's predictions, and a suite's profiles/front."""

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

from srtui.app.data import Reader, suites
from srtui.app.detail import (
    PredictionSeries,
    SuiteAggregate,
    prediction_series,
    suite_aggregate,
)
from srtui.app.messages import AggregateReady, SeriesReady
from srtui.app.screens.base import SectionScreen
from srtui.app.widgets import NavBar, legend, series_styles

JOB_HELP = """\
Predicted against true values of one run, with the identity line (a perfect model lies on it);
train and test points in two colours. For time-series tasks, t switches to the series over
dates: training truth, test truth and the predictions.
"""

SUITE_HELP = """\
A suite's methods compared. Performance profile: for each R² threshold, the share of tasks whose
median test R² (over seeds; failed runs count as unsolved) reaches it - higher and further
right is better. Pareto front: median model size against median test R²; methods on the front
(no other is both smaller and more accurate) are joined by the line. t switches the plot,
the selector above picks the suite.
"""


def _downsample(n: int, limit: int = 2000) -> np.ndarray:
    """Plotting every point of a large task only slows the terminal: keep an even sample."""
    return np.arange(n) if n <= limit else np.linspace(0, n - 1, limit).astype(int)


class JobPlotsScreen(SectionScreen):
    HELP = JOB_HELP
    AUTO_FOCUS = ""
    BINDINGS = [
        Binding("t", "toggle", "Switch plot", id="plots.toggle"),
    ]

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id
        self.series: PredictionSeries | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static(Text(f"run {self.job_id}: loading...", style="bold"), id="plot-title", markup=False)
        with ContentSwitcher(initial="scatter", id="switcher"):
            yield PlotextPlot(id="scatter")
            yield PlotextPlot(id="timeseries")
        yield Static(id="legend", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reader = Reader(self.app.workspace)
        self.load()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="plots", exit_on_error=False)
    def load(self) -> None:
        self.post_message(SeriesReady(prediction_series(self.reader, self.job_id)))

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "plots" and event.state == WorkerState.ERROR:
            self.query_one("#plot-title", Static).update(Text(str(event.worker.error), style="red"))

    def on_series_ready(self, message: SeriesReady) -> None:
        s = self.series = message.series
        hint = "  (t: time series)" if s.dates_train else ""
        self.query_one("#plot-title", Static).update(Text(s.label + hint, style="bold"))
        self.refresh_bindings()  # t applies to time series only
        plt = self.query_one("#scatter", PlotextPlot).plt
        plt.clear_data()
        styles = self.series_look = series_styles(self.app, 3)
        for (_name, y, pred), (glyph, rgb, _hex) in zip((("train", s.y_train, s.pred_train), ("test", s.y_test, s.pred_test)), styles):
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

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "toggle":  # only a time-series task has a second plot
            return self.series is not None and bool(self.series.dates_train)
        return super().check_action(action, parameters)

    def action_toggle(self) -> None:
        switcher = self.query_one("#switcher", ContentSwitcher)
        switcher.current = "timeseries" if switcher.current == "scatter" else "scatter"
        self._legend()


class SuitePlotsScreen(SectionScreen):
    HELP = SUITE_HELP
    AUTO_FOCUS = ""  # keys go to the screen; Tab reaches the suite selector
    BINDINGS = [Binding("t", "toggle", "Switch plot", id="suite-plots.toggle")]

    def __init__(self) -> None:
        super().__init__()
        self.aggregate: SuiteAggregate | None = None
        self._requested: str | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Horizontal(classes="toolbar"):
            yield Select([], prompt="suite", id="suite", allow_blank=True)
            yield Static(id="suite-info", markup=False)
        with ContentSwitcher(initial="profile", id="switcher"):
            yield PlotextPlot(id="profile")
            yield PlotextPlot(id="front")
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

    def _load_once(self, suite) -> None:
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
        self.query_one("#suite-info", Static).update(Text(f"{len(a.methods)} methods x {a.n_tasks} tasks  (t: switch plot)"))
        styles = dict(zip(a.methods, series_styles(self.app, len(a.methods))))
        plt = self.query_one("#profile", PlotextPlot).plt
        plt.clear_data()
        for m in a.methods:
            plt.plot(list(a.thresholds), list(a.profiles[m]), color=styles[m][1], marker=styles[m][0])
        plt.title(f"performance profile (srbench2025, {a.profile})")
        plt.xlabel("R² threshold")
        plt.ylabel("share of tasks")
        plt.ylim(0, 1.05)
        self.query_one("#profile", PlotextPlot).refresh()
        front = self.query_one("#front", PlotextPlot).plt
        front.clear_data()
        for m, (size, acc) in a.points.items():
            front.scatter([size], [acc], color=styles[m][1], marker=styles[m][0])
        if len(a.front) > 1:
            front.plot([a.points[m][0] for m in a.front], [a.points[m][1] for m in a.front], color="gray", marker="·")
        front.title("Pareto front: model size vs median R² (· joins the front)")
        front.xlabel("median model size (nodes)")
        front.ylabel("median test R²")
        self.query_one("#front", PlotextPlot).refresh()
        names = [f"{m} (front)" if m in a.front else m for m in a.methods]
        self.query_one("#legend", Static).update(legend(names, [styles[m] for m in a.methods]))

    def action_toggle(self) -> None:
        switcher = self.query_one("#switcher", ContentSwitcher)
        switcher.current = "front" if switcher.current == "profile" else "profile"
