"""The srtui Textual app: screens as modes, global keys, command palette, runs started from here.

Every blocking read runs in a thread worker that posts a typed message (``srtui.app.messages``);
``on_worker_state_changed`` below is the one place that turns a failed worker into a notice.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from engine.textsafe import visible
from engine.workspace import Workspace
from srtui.app.messages import RunFinished
from srtui.app.screens.dialogs import APP_HELP, HelpScreen, StartRunScreen
from srtui.app.screens.expression import ExpressionScreen
from srtui.app.screens.leaderboard import LeaderboardScreen
from srtui.app.screens.monitor import MonitorScreen
from srtui.app.screens.plots import JobPlotsScreen, SuitePlotsScreen
from srtui.app.screens.results import ResultsScreen


class SrtuiApp(App):
    CSS_PATH = "srtui.tcss"
    TITLE = "srtui"
    MODES = {"monitor": MonitorScreen, "results": ResultsScreen, "leaderboard": LeaderboardScreen, "plots": SuitePlotsScreen}
    DEFAULT_MODE = "monitor"
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("1", "switch_mode('monitor')", "Monitor", id="app.monitor"),
        Binding("2", "switch_mode('results')", "Results", id="app.results"),
        Binding("3", "switch_mode('leaderboard')", "Board", id="app.leaderboard"),
        Binding("4", "switch_mode('plots')", "Plots", id="app.plots"),
        Binding("5", "reviews", "Reviews", id="app.reviews"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 carries the text to the terminal: control characters go as visible text."""
        super().copy_to_clipboard(visible(text))

    def __init__(
        self,
        workspace: Workspace,
        *,
        label: str | None = None,
        clock: Callable[[], float] = time.time,
        theme: str | None = None,
        ascii: bool | None = None,
        timings: bool = True,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.workspace_label = label or _short(workspace.root)
        self.clock = clock
        self.timings = timings  # query times in the explorer's status line (off for snapshots)
        self.unicode_ok = (not ascii) if ascii is not None else (sys.stdout.encoding or "").lower().replace("-", "").startswith("utf")
        self.sub_title = self.workspace_label
        if theme:
            self.theme = theme
        self.run_active = False
        self._cancel = threading.Event()
        self._force = threading.Event()
        self._quit_armed = False
        self._last_error: tuple[str, float] | None = None
        # multiprocessing's resource tracker starts with sys.stderr's fd, which Textual replaces
        # while it runs (fileno() -1): start it now, so the metrics pool of a run started here works
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()

    def on_mount(self) -> None:
        try:  # the terminal went away (ssh dropped, tmux killed): stop cleanly instead of spinning
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGHUP, signal.SIGTERM):
                loop.add_signal_handler(sig, self.terminal_gone)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread (tests) or no signals here
        self.warm_up()

    @work(thread=True, group="warm-up", exit_on_error=False)
    def warm_up(self) -> None:
        """Import the expression stack (sympy) in the background, so the first view is quick."""
        import engine.expression  # noqa: F401
        import results.expr_metrics  # noqa: F401

    def terminal_gone(self) -> None:
        self._cancel.set()
        self._force.set()
        self.exit(return_code=129)

    # --- navigation --------------------------------------------------------------------------

    def open_expression(self, job_id: str) -> None:
        self.push_screen(ExpressionScreen(job_id))

    def open_plots(self, job_id: str) -> None:
        self.push_screen(JobPlotsScreen(job_id))

    def action_reviews(self) -> None:
        from srtui.app.review.organiser import ReviewSessionsScreen

        if not isinstance(self.screen, ReviewSessionsScreen):
            self.push_screen(ReviewSessionsScreen())

    def action_help(self) -> None:
        screen = self.screen
        if isinstance(screen, HelpScreen):
            return
        seen, ranked = set(), []
        for key, active in screen.active_bindings.items():
            b = active.binding
            if b.description and (b.action, active.node) not in seen:
                seen.add((b.action, active.node))
                order = 0 if active.node is screen else 1 if active.node is self else 2  # screen, app, widget
                ranked.append((order, self.get_key_display(b), b.description))
        rows = [(key, text) for _, key, text in sorted(ranked, key=lambda r: r[0])]
        rows.append(("ctrl+p", "Command palette"))
        self.push_screen(HelpScreen(getattr(screen, "HELP", APP_HELP), rows))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Monitor", "Live counts, running jobs and failures (1)", lambda: self.switch_mode("monitor"))
        yield SystemCommand("Results explorer", "Filter, sort and group every run (2)", lambda: self.switch_mode("results"))
        yield SystemCommand("Leaderboards", "Scoring rules per suite, with the per-dataset breakdown (3)", lambda: self.switch_mode("leaderboard"))
        yield SystemCommand("Suite plots", "Performance profiles and Pareto fronts (4)", lambda: self.switch_mode("plots"))
        yield SystemCommand("Review sessions", "Blinded expert sessions: progress, report, close, unblind (5)", self.action_reviews)
        yield SystemCommand("Start a run", "Choose a suite, methods and limits and run it here", self.action_start_run)
        if self.run_active:
            yield SystemCommand("Stop the run", "Stop the run started here (running jobs are terminated)", self.action_stop_run)
        yield SystemCommand("Help", "What this screen shows and its keys (F1)", self.action_help)
        yield from super().get_system_commands(screen)

    # --- errors --------------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every failed worker ends here as one notice (repeats within 10 s are dropped)."""
        if event.state == WorkerState.ERROR:
            self.report_error(event.worker.error)

    def report_error(self, error: BaseException | None) -> None:
        message = str(error).strip().splitlines()[0] if error and str(error).strip() else type(error).__name__
        now = time.monotonic()
        if self._last_error and self._last_error[0] == message and now - self._last_error[1] < 10:
            return
        self._last_error = (message, now)
        self.notify(message, severity="error", markup=False, timeout=8)

    # --- runs started from the app -------------------------------------------------------------

    def action_start_run(self) -> None:
        if self.run_active:
            self.notify("a run started here is still going (x stops it)", severity="warning")
            return
        from engine.scheduler import usable_cores
        from tasks.suites import builtin_suite_names

        self.push_screen(StartRunScreen(builtin_suite_names(), len(usable_cores())), self._start_run)

    def _start_run(self, req) -> None:
        if req is None:
            return
        self._cancel, self._force = threading.Event(), threading.Event()
        self.run_active = True
        self.notify(f"starting suite {req.suite}...", markup=False)
        self.run_suite(req)

    @work(thread=True, group="run", exit_on_error=False)
    def run_suite(self, req) -> None:
        """Plan and execute in this one thread: it lives for the whole run, as jobs need."""
        from engine.workspace import WorkspaceError
        from srtui import runner

        try:
            self.workspace.ensure()
            plan = runner.plan_run(self.workspace, req)
            result = runner.execute(plan, req, cancel=self._cancel, force=self._force)
        except (runner.RunError, WorkspaceError) as exc:
            self.post_message(RunFinished("", error=str(exc)))
            return
        except BaseException as exc:  # still end the run's state; the notice names the failure
            import traceback

            self.log.error(traceback.format_exc())
            self.post_message(RunFinished("", error=f"the run failed: {type(exc).__name__}: {exc}"))
            raise
        counts = ", ".join(f"{k} {v}" for k, v in sorted(result.state.counts.items())) or "nothing to run"
        how = "interrupted" if result.interrupted else "finished"
        self.post_message(RunFinished(f"run {result.run_id} {how}: {counts}; {result.skipped} already done"))

    def on_run_finished(self, message: RunFinished) -> None:
        self.run_active = False
        if message.error:
            self.notify(message.error, severity="error", markup=False, timeout=10)
        else:
            self.notify(message.summary, markup=False, timeout=10)
        if self._quit_armed:
            self.exit()

    def action_stop_run(self) -> None:
        if not self.run_active:
            self.notify("no run started here is going", severity="warning")
            return
        if self._cancel.is_set():
            self._force.set()
            self.notify("killing the running jobs now", severity="warning")
        else:
            self._cancel.set()
            self.notify("stopping: no new jobs; running jobs are terminated (x again kills them)", severity="warning")

    async def action_quit(self) -> None:
        if not self.run_active:
            self.exit()
            return
        if not self._quit_armed:
            self._quit_armed = True
            self.notify("a run started here is going: q again stops it and quits", severity="warning")
            return
        self._cancel.set()
        self._force.set()
        self.notify("stopping the run, then quitting...", severity="warning")
        self.set_timer(20, self.exit)  # never hang on a job that will not die


def _short(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
