"""The srtui Textual app: screens as modes, global keys, command palette, runs started from here.

Every blocking read runs in a thread worker that posts a typed message (``srtui.app.messages``);
``on_worker_state_changed`` below is the one place that turns a failed worker into a notice.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hits
from textual.events import Resize
from textual.screen import ModalScreen, Screen
from textual.system_commands import SystemCommandsProvider
from textual.worker import Worker, WorkerState

from srtui.app.messages import RunFinished
from srtui.app.review.expert import MIN_SIZE
from srtui.app.review.organiser import ReviewSessionsScreen
from srtui.app.screens.base import PALETTE_NAMES, SECTION_HELP, screen_commands
from srtui.app.screens.dialogs import StartRunScreen, show_help
from srtui.app.screens.expression import ExpressionScreen
from srtui.app.screens.leaderboard import LeaderboardScreen
from srtui.app.screens.monitor import MonitorScreen
from srtui.app.screens.plots import ENERGY_FIGURE, JobPlotsScreen, SuitePlotsScreen
from srtui.app.screens.results import ResultsScreen
from srtui.app.terminal import HANGUP_CODE, HangupWatch
from srtui.app.widgets import SECTIONS, Confirm
from srtui.views import Workspace, visible

if TYPE_CHECKING:
    from srtui.views import RunRequest


class OrderedCommands(SystemCommandsProvider):
    """The palette's list in the app's order (the sections, the screen's own actions, then its
    cursor moves): Textual's provider sorts it by name, which put "Focus Next" above "Filter"."""

    async def discover(self) -> Hits:
        for name, help_text, callback, discover in self.app.get_system_commands(self.screen):
            if discover:
                yield DiscoveryHit(name, callback, help=help_text)


class SrtuiApp(App[None]):
    CSS_PATH = "srtui.tcss"
    TITLE = "srtui"
    MODES = {
        "monitor": MonitorScreen,
        "results": ResultsScreen,
        "leaderboard": LeaderboardScreen,
        "plots": SuitePlotsScreen,
        "reviews": ReviewSessionsScreen,
    }
    DEFAULT_MODE = "monitor"
    COMMANDS = {OrderedCommands}
    # global keys: not in the Footer (the section bar on top shows them), in F1 and the palette
    BINDINGS = [
        Binding("f1", "help", "Help", show=False, id="app.help"),
        Binding("question_mark", "help", "Help", show=False, id="app.help-question"),  # as in less, vim
        *(
            Binding(str(n), f"section('{mode}')", label, show=False, id=f"app.{mode}")
            for n, (mode, label) in enumerate(SECTIONS, 1)
        ),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit"),
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
        self.unicode_ok = (
            (not ascii) if ascii is not None else (sys.stdout.encoding or "").lower().replace("-", "").startswith("utf")
        )
        self.sub_title = self.workspace_label
        if theme:
            self.theme = theme
        self.run_active = False
        self._cancel = threading.Event()
        self._force = threading.Event()
        self._confirm = Confirm()
        self._small = False
        self._last_error: tuple[str, float] | None = None
        # multiprocessing's resource tracker starts with sys.stderr's fd, which Textual replaces
        # while it runs (fileno() -1): start it now, so the metrics pool of a run started here works
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()

    def on_mount(self) -> None:
        if not self.is_headless:  # the terminal went away (ssh dropped, tmux killed): leave, never spin
            # a run started here gets time to stop its jobs before the exit is forced
            HangupWatch(self.terminal_gone, lambda: 10.0 if self.run_active else 1.0).start(asyncio.get_running_loop())
        self.warm_up()

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        if small and not self._small:  # say so once per shrink, and keep working
            self.notify(
                f"the window is {width}x{height}: srtui is made for {MIN_SIZE[0]}x{MIN_SIZE[1]} or more, "
                "so parts may be cut off",
                severity="warning",
                markup=False,
            )
        self._small = small

    @work(thread=True, group="warm-up", exit_on_error=False)
    def warm_up(self) -> None:
        """Import the expression stack (sympy) in the background, so the first view is quick."""
        from srtui.views import warm_up

        warm_up()

    def terminal_gone(self) -> None:
        self._cancel.set()
        self._force.set()
        self.exit(return_code=HANGUP_CODE)

    # --- navigation --------------------------------------------------------------------------

    def open_expression(self, job_id: str) -> None:
        self.push_screen(ExpressionScreen(job_id))

    def open_plots(self, job_id: str) -> None:
        self.push_screen(JobPlotsScreen(job_id))

    async def action_section(self, mode: str) -> None:
        """A section's number key: its root screen, whatever was opened on top of it."""
        if isinstance(self.screen, ModalScreen):
            self.screen.dismiss()
        if self.current_mode != mode:
            await self.switch_mode(mode)
        while len(self.screen_stack) > 1:
            await self.pop_screen()

    async def action_energy_plot(self) -> None:
        await self.action_section("plots")
        if isinstance(self.screen, SuitePlotsScreen):
            self.screen.show_plot(ENERGY_FIGURE)

    def action_help(self) -> None:
        show_help(self)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for n, (mode, _label) in enumerate(SECTIONS, 1):
            yield SystemCommand(
                PALETTE_NAMES[mode], f"{SECTION_HELP[mode]} ({n})", partial(self.run_action, f"section('{mode}')")
            )
        yield from screen_commands(self, screen)
        if not isinstance(screen, SuitePlotsScreen):  # there its own key (e) is listed above
            yield SystemCommand(
                "Energy vs time",
                "Median energy against median training time per method (SRBench 2.0's Figure 1), in Plots",
                self.action_energy_plot,
            )
        yield SystemCommand("Start a run", "Choose a suite, methods and limits and run it here", self.action_start_run)
        if self.run_active:
            yield SystemCommand(
                "Stop the run", "Stop the run started here (running jobs are terminated)", self.action_stop_run
            )
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
        self.push_screen(StartRunScreen(self.workspace), self._start_run)

    def _start_run(self, req: RunRequest | None) -> None:
        if req is None:
            return
        self._cancel, self._force = threading.Event(), threading.Event()
        self.run_active = True
        self.screen.refresh_bindings()
        self.notify(f"starting suite {req.suite}...", markup=False)
        self.run_suite(req)

    @work(thread=True, group="run", exit_on_error=False)
    def run_suite(self, req: RunRequest) -> None:
        """Plan and execute in this one thread: it lives for the whole run, as jobs need."""
        from srtui.views import SrtuiError, run_suite

        try:
            result = run_suite(self.workspace, req, self._cancel, self._force)
        except SrtuiError as exc:
            self.post_message(RunFinished("", error=str(exc)))
            return
        except BaseException as exc:  # still end the run's state; the notice names the failure
            import traceback

            self.log.error(traceback.format_exc())
            self.post_message(RunFinished("", error=f"the run failed: {type(exc).__name__}: {exc}"))
            raise
        counts = ", ".join(f"{k} {v}" for k, v in sorted(result.counts.items())) or "nothing to run"
        how = "interrupted" if result.interrupted else "finished"
        self.post_message(RunFinished(f"run {result.run_id} {how}: {counts}; {result.skipped} already done"))

    def on_run_finished(self, message: RunFinished) -> None:
        self.run_active = False
        self.screen.refresh_bindings()
        if message.error:
            self.notify(message.error, severity="error", markup=False, timeout=10)
        else:
            self.notify(message.summary, markup=False, timeout=10)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_run":
            return not self.run_active  # one run from the app at a time (the Footer shows what applies)
        if action == "stop_run":
            return self.run_active
        return True

    def action_stop_run(self) -> None:
        if not self.run_active:
            self.notify("no run started here is going", severity="warning")
            return
        if self._cancel.is_set():
            self._force.set()
            self.notify("killing the running jobs now", severity="warning")
        elif self._confirm.confirmed(self, "stop the run (running jobs are terminated)", "x"):
            self._cancel.set()
            self.notify("stopping: no new jobs; running jobs are terminated (x again kills them)", severity="warning")

    async def action_quit(self) -> None:
        if not self.run_active:
            self.exit()
            return
        if not self._confirm.confirmed(self, "stop the run started here and quit", "ctrl+q"):
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
