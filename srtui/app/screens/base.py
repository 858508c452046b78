"""What every screen of the main app shares: the section bar, r to refresh, Escape to go back
(only on a screen opened from another), and, for screens over the results, a refresh of their
own while a run writes the workspace."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import getters, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from srtui.app.widgets import SECTIONS

if TYPE_CHECKING:
    from srtui.app.app import SrtuiApp
    from srtui.views import Reader


class DataChanged(Message):
    """Another connection committed to the workspace since the screen last read it."""


class SectionScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", id="screen.back"),
        Binding("r", "refresh", "Refresh", id="screen.refresh"),
    ]
    #: seconds between checks for new data while the screen is shown (None: no live refresh)
    LIVE_S: float | None = None
    if TYPE_CHECKING:
        # Textual types `self.app` as App; the section screens run in SrtuiApp (its workspace, clock,
        # open_expression...). For mypy only: nothing is checked at run time (a test hosts the review
        # screens in an app of its own)
        app = getters.app(SrtuiApp)

    def __init__(self) -> None:
        super().__init__()
        self._seen_version: int | None = None

    def on_mount(self) -> None:  # Textual calls this as well as a subclass's own on_mount
        if self.LIVE_S and not getattr(self, "_live_timer", None):
            self._live_timer = self.set_interval(self.LIVE_S, self._check_live)
            self.call_after_refresh(self._check_live)  # the baseline, taken as the screen first reads

    @property
    def pushed(self) -> bool:
        """Opened from another screen (Escape goes back to it), not a section's root."""
        return self in self.app.screen_stack[1:]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self.pushed  # not in the Footer of a section's root
        return True

    def action_back(self) -> None:
        if self.pushed and self.app.screen is self:
            self.app.pop_screen()

    def action_refresh(self) -> None:
        self.refresh_data()

    def refresh_data(self) -> None:
        """Read the screen's data again (overridden by each screen)."""

    # --- live refresh --------------------------------------------------------------------------

    def _check_live(self) -> None:
        reader = getattr(self, "reader", None)
        if reader is not None and (self.is_current or self._seen_version is None):
            self._read_version(reader)

    @work(thread=True, exclusive=True, group="live-check", exit_on_error=False)
    def _read_version(self, reader: Reader) -> None:
        with reader.lock:
            version = reader.data_version()
        changed = self._seen_version is not None and version != self._seen_version
        self._seen_version = version
        if changed:
            self.post_message(DataChanged())

    def on_data_changed(self, message: DataChanged) -> None:
        self.refresh_data()


class JobScreen(SectionScreen):
    """A screen of one run (its expression, its plots): a Reader of its own, the run read in a
    worker on mount and at each refresh (``read``: the message the screen shows), a read that
    fails said in red in the title (``#job-title``)."""

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id

    def on_mount(self) -> None:  # after a subclass's own on_mount (Textual calls both)
        from srtui.views import Reader

        self.reader = Reader(self.app.workspace)
        self.load()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self.load()

    def read(self) -> Message:
        """The run's data, as the message the screen shows it from (called in the worker)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="job", exit_on_error=False)
    def load(self) -> None:
        self.post_message(self.read())

    @on(Worker.StateChanged)
    def _job_failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "job" and event.state == WorkerState.ERROR:
            self.query_one("#job-title", Static).update(Text(f"run {self.job_id}: {event.worker.error}", style="red"))


#: the sections in the command palette: the names of the bar on top (one name each, also in the
#: docs), and what they show
PALETTE_NAMES = dict(SECTIONS)
SECTION_HELP = {
    "monitor": "Live counts, running jobs and failures",
    "results": "The results explorer: filter, sort and group every run",
    "leaderboard": "The leaderboards: scoring rules per suite, with the per-dataset breakdown",
    "plots": "Performance profiles and Pareto fronts",
    "reviews": "Blinded expert sessions: progress, report, close, unblind",
}


#: actions that move a cursor, scroll or copy, the same on every screen: listed after the
#: screen's own actions
MOVES = ("cursor_", "scroll_", "page_", "focus_next", "focus_previous", "select_cursor", "copy_text")


def screen_commands(app: App[Any], screen: Screen[Any]) -> Iterable[SystemCommand]:
    """Every action the current screen offers by a key, also in the command palette: what the
    screen does first, then its widgets' actions, cursor moves and scrolling last."""
    seen: set[tuple[str, object]] = set()
    ranked: list[tuple[int, int, SystemCommand]] = []
    for _key, active in screen.active_bindings.items():
        b = active.binding
        if active.node is app or not b.description or not active.enabled or (b.action, active.node) in seen:
            continue
        seen.add((b.action, active.node))
        move = b.action.rsplit(".", 1)[-1].startswith(MOVES)
        rank = 2 if move else 0 if active.node is screen else 1
        command = SystemCommand(
            b.description, f"{app.get_key_display(b)} on this screen", partial(app.run_action, b.action, active.node)
        )
        ranked.append((rank, len(ranked), command))
    return [command for *_, command in sorted(ranked, key=lambda r: r[:2])]
