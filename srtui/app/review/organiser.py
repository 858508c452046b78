"""The organiser's review views inside the main app: the sessions of the workspace, and one
session's progress per expert, its report, close and unblind (each asks to be pressed twice).

Both screens read ``self.app.workspace`` (or a workspace given to them) and open their own store.
Nothing touches the store on the UI thread: opening it, every read, close and unblind run in
thread workers that post typed messages back (the report, which imports pingouin, too).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Footer, Static

from srtui.app.screens.base import SectionScreen
from srtui.app.widgets import Confirm, NavBar, VimTable, fill
from srtui.views import (
    ReviewError,
    Store,
    StoreError,
    Workspace,
    change_review,
    open_review_store,
    review_progress,
    review_report,
    review_sessions,
    short_time,
)

SESSIONS_HELP = """\
The blinded expert review sessions of this workspace (create them with `srtui review create`).
Enter opens a session: progress per expert, the report (agreement, self-consistency, time per
item and, once unblinded, the srbench2022-realworld leaderboard with the trust scores).
"""

SESSION_HELP = """\
One review session. c closes it (no more ratings), u unblinds it (only after closing; logged),
each after a second press within 3 seconds. r refreshes the progress and the report.
"""

CSS = """
ReviewSessionsScreen #sessions { height: 1fr; }
ReviewSessionScreen #experts { height: auto; max-height: 12; }
ReviewSessionScreen #report-box { height: 1fr; }
ReviewSessionScreen .title { padding: 0 1; }
"""


@dataclass
class SessionsRead(Message):
    """The workspace's review sessions were read (or could not be: ``error``)."""

    rows: list[dict[str, Any]]
    error: str | None = None


@dataclass
class SessionRead(Message):
    """One session's row and progress per expert were read (or could not be: ``error``)."""

    row: dict[str, Any] | None
    progress: list[dict[str, Any]]
    error: str | None = None


@dataclass
class ReportRead(Message):
    text: Text


@dataclass
class SessionChanged(Message):
    """close or unblind finished (``error`` if it was refused)."""

    what: str
    error: str | None = None


class _ReviewScreen(SectionScreen):
    DEFAULT_CSS = CSS

    def __init__(self, workspace: Workspace | None = None) -> None:
        super().__init__()
        self._workspace = workspace
        self.store: Store | None = None
        self._opening = threading.Lock()

    @property
    def workspace(self) -> Workspace:
        return self._workspace or self.app.workspace

    def on_mount(self) -> None:
        self.reload()

    def on_unmount(self) -> None:
        if self.store is not None:
            with self.store.lock:  # after a worker's read in progress, not under it
                self.store.close()

    def open_store(self) -> Store:
        """The screen's store, opened on first use; called from workers only."""
        with self._opening:
            if self.store is None:
                self.store = open_review_store(self.workspace)  # names, models, comments shown visibly
            return self.store

    def reload(self) -> object:  # pragma: no cover - overridden (by a worker: it returns the Worker)
        return None

    def refresh_data(self) -> None:
        self.reload()


class ReviewSessionsScreen(_ReviewScreen):
    HELP = SESSIONS_HELP
    BINDINGS = [Binding("enter", "open", "Open", id="reviews.open")]

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static(Text("Review sessions", style="bold"), classes="title", markup=False)
        yield VimTable(id="sessions", cursor_type="row")
        yield Footer(compact=True, show_command_palette=False)

    @work(thread=True, exclusive=True, group="reviews-read", exit_on_error=False)
    def reload(self) -> None:
        try:
            store = self.open_store()
            with store.lock:
                message = SessionsRead(review_sessions(store))
        except (StoreError, ValueError) as exc:
            message = SessionsRead([], str(exc))
        self.post_message(message)

    def on_sessions_read(self, message: SessionsRead) -> None:
        title = self.query_one(".title", Static)
        if message.error:
            title.update(Text(message.error, style="red"))
            return
        columns = ("session", "suite", "status", "blinding", "items", "experts", "rated")
        blinding = ["unblinded" if r["unblinded_at"] else "blinded" for r in message.rows]
        rows = [
            (r["name"], r["suite"], r["status"], b, r["items"], r["experts"], f"{r['rated']}/{r['assigned']}")
            for r, b in zip(message.rows, blinding)
        ]
        fill(self.query_one("#sessions", DataTable), columns, rows, [r["name"] for r in message.rows])
        if not message.rows:
            title.update(Text("No review sessions: create one with `srtui review create NAME --suite SUITE`"))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(ReviewSessionScreen(str(event.row_key.value), self._workspace))

    def action_open(self) -> None:
        table = self.query_one("#sessions", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key
            self.app.push_screen(ReviewSessionScreen(str(key.value), self._workspace))


class ReviewSessionScreen(_ReviewScreen):
    HELP = SESSION_HELP
    BINDINGS = [
        Binding("c", "confirm('close')", "Close", id="review-session.close"),
        Binding("u", "confirm('unblind')", "Unblind", id="review-session.unblind"),
    ]

    def __init__(self, name: str, workspace: Workspace | None = None) -> None:
        super().__init__(workspace)
        self.session = name
        self._confirm = Confirm()

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static(Text(f"Review {self.session}", style="bold"), classes="title", id="session-title", markup=False)
        yield VimTable(id="experts", cursor_type="row")
        with VerticalScroll(id="report-box"):
            yield Static(Text("report: loading...", style="dim"), id="report", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    @work(thread=True, exclusive=True, group="review-read", exit_on_error=False)
    def reload(self) -> None:
        try:
            store = self.open_store()
            with store.lock:
                message = SessionRead(*review_progress(store, self.session))
        except (StoreError, ReviewError, ValueError) as exc:
            message = SessionRead(None, [], str(exc))
        self.post_message(message)

    def on_session_read(self, message: SessionRead) -> None:
        title = self.query_one("#session-title", Static)
        if message.error or message.row is None:
            title.update(Text(message.error or "no such session", style="red"))
            return
        row = message.row
        blind = f"unblinded {short_time(row['unblinded_at'])}" if row["unblinded_at"] else "blinded"
        title.update(
            Text(f"Review {self.session}: {row['status']}, {blind}, suite {row['suite'] or '-'}", style="bold")
        )
        columns = ("expert", "rated", "assigned", "skipped", "left", "s/item", "last rating (UTC)")
        keys = ("expert", "rated", "assigned", "skipped", "remaining")
        per_item = [
            "-" if r["median_s_per_item"] is None else f"{r['median_s_per_item']:.0f}" for r in message.progress
        ]
        rows = [(*(r[k] for k in keys), s, short_time(r["last_rating"])) for r, s in zip(message.progress, per_item)]
        fill(self.query_one("#experts", DataTable), columns, rows)
        self.load_report()

    @work(thread=True, exclusive=True, group="review-report", exit_on_error=False)
    def load_report(self) -> None:
        try:
            store = self.open_store()
            with store.lock:
                text = Text(review_report(store, self.session))
        except (StoreError, ReviewError) as exc:
            text = Text(str(exc), style="red")
        self.post_message(ReportRead(text))

    def on_report_read(self, message: ReportRead) -> None:
        self.query_one("#report", Static).update(message.text)

    def action_confirm(self, what: str) -> None:
        if self._confirm.confirmed(self, f"{what} review {self.session}", what[0]):
            self.change(what)

    @work(thread=True, exclusive=True, group="review-change", exit_on_error=False)
    def change(self, what: str) -> None:
        try:
            change_review(self.open_store(), self.session, what)
        except (StoreError, ReviewError) as exc:
            self.post_message(SessionChanged(what, str(exc)))
            return
        self.post_message(SessionChanged(what))

    def on_session_changed(self, message: SessionChanged) -> None:
        if message.error:
            self.notify(message.error, severity="error", markup=False)
            return
        self.notify(f"review {self.session}: {'closed' if message.what == 'close' else 'unblinded'}", markup=False)
        self.reload()
