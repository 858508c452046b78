"""Modal screens: F1 help (what the keys of the current screen do) and the start-a-run form."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

from srtui.app.widgets import CheckList
from srtui.views import installed_methods

if TYPE_CHECKING:
    from srtui.views import RunRequest, Workspace

_Number = TypeVar("_Number", int, float)

APP_HELP = """\
srtui benchmarks symbolic regression methods. Sections (number keys, or click the bar on top; each
lands on the section's first screen): 1 Monitor (live runs), 2 Results (the explorer), 3 Board
(the leaderboards), 4 Plots (suite plots), 5 Reviews (expert review sessions). From a run in the
explorer, Enter opens its expression and p its plots; Escape goes back. r refreshes any screen;
Tab moves between its controls.
ctrl+p opens the command palette (every action of the screen, start/stop a run, themes); ctrl+q
quits. Tables take j/k (down/up), g/G (top/bottom) and ctrl+d/ctrl+u (page).
"""


def _reflow(text: str) -> str:
    """Join hard-wrapped lines into paragraphs (indented lines stay as they are)."""
    return re.sub(r"(?<!\n)\n(?![\n ])", " ", text.strip())


class HelpScreen(ModalScreen[None]):
    """What the current screen shows and every key it answers to."""

    AUTO_FOCUS = "#help-box"

    BINDINGS = [
        Binding("escape,f1,q,question_mark", "dismiss", "Close"),
        *(Binding(str(n), f"section('{n}')", show=False) for n in range(1, 6)),
    ]

    def __init__(self, screen_help: str, bindings: list[tuple[str, str]], general: str = APP_HELP) -> None:
        super().__init__()
        self.screen_help = screen_help
        self.bindings = bindings
        self.general = general

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "section" or hasattr(self.app, "action_section")  # not in the expert's app

    async def action_section(self, number: str) -> None:
        from srtui.app.widgets import SECTIONS

        await self.app.run_action(f"section('{SECTIONS[int(number) - 1][0]}')")

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=False)
        table.add_column("key")
        table.add_column("does")
        for key, description in self.bindings:
            table.add_row(Text(key, style="bold"), Text(description))
        with VerticalScroll(id="help-box"):  # what the screen is for, then its keys
            yield Static(Text("Help  (Escape closes; arrows and PgDn scroll)", style="bold"), markup=False)
            yield Static(Text(_reflow(self.screen_help) + "\n"), markup=False)
            yield Static(table)
            if self.general:
                yield Static(Text("\n" + _reflow(self.general), style="dim"), markup=False)


GENERIC_ACTIONS = ("focus_next", "focus_previous", "copy_text")


def show_help(app: App[Any], general: str = APP_HELP) -> None:
    """F1 on any screen: what it shows and every key it answers to (its own first, then the app's)."""
    screen = app.screen
    if isinstance(screen, HelpScreen):
        return
    seen, ranked = set(), []
    for active in screen.active_bindings.values():
        b = active.binding
        if b.description and (b.action, active.node) not in seen:
            seen.add((b.action, active.node))
            order = 0 if active.node is screen else 1 if active.node is app else 2  # screen, app, widget
            if b.action.rsplit(".", 1)[-1] in GENERIC_ACTIONS:
                order = 3  # Tab, copy: the same on every screen, listed last
            ranked.append((order, app.get_key_display(b), b.description))
    rows = [(key, text) for _, key, text in sorted(ranked, key=lambda r: r[0])]  # ctrl+p is the app's own
    app.push_screen(HelpScreen(getattr(screen, "HELP", general), rows, general))


class StartRunScreen(ModalScreen["RunRequest | None"]):
    """The same choices as `srtui run`: suite, methods, tasks, seeds, limits, parallel jobs.

    Start plans the run (as `srtui run --dry-run` does, in a worker) before closing: a bad choice
    is shown in the form, with every field kept."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, suites: list[str], default_jobs: int, workspace: Workspace) -> None:
        super().__init__()
        self.suites = suites
        self.default_jobs = default_jobs
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        with Vertical(id="start-box"):
            yield Static(
                Text("Start a run (like `srtui run`; blank means the suite's default)", style="bold"), markup=False
            )
            with Grid(id="start-form"):
                yield Label("suite")
                yield Select(
                    [(s, s) for s in self.suites],
                    value=("smoke" if "smoke" in self.suites else self.suites[0]) if self.suites else Select.BLANK,
                    id="suite",
                    allow_blank=False,
                    compact=True,
                )
                yield Label("tasks")
                yield Input(placeholder="comma-separated", id="tasks", compact=True)
                yield Label("seeds")
                yield Input(placeholder="number of seeds", id="seeds", type="integer", compact=True)
                yield Label("time limit s")
                yield Input(placeholder="per job", id="time", type="number", compact=True)
                yield Label("memory MB")
                yield Input(placeholder="per job", id="mem", type="number", compact=True)
                yield Label("parallel jobs")
                yield Input(value=str(self.default_jobs), id="jobs", type="integer", compact=True)
            yield Label("methods (installed ones; Space picks, none = the suite's own)")
            yield CheckList(*((name, name) for name in installed_methods()), id="methods", compact=True)
            yield Static(id="start-error", markup=False)
            with Horizontal(id="start-buttons"):
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#cancel")
    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def _say(self, text: str, style: str = "red") -> None:
        self.query_one("#start-error", Static).update(Text(text, style=style))

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def _start(self) -> None:
        from srtui.views import RunRequest

        def number(widget_id: str, kind: type[_Number]) -> _Number | None:
            value = self.query_one(widget_id, Input).value.strip()
            return kind(value) if value else None

        suite = self.query_one("#suite", Select).value
        if not isinstance(suite, str):
            self._say("choose a suite")
            return
        tasks = [t.strip() for t in self.query_one("#tasks", Input).value.split(",") if t.strip()]
        methods = list(self.query_one("#methods", SelectionList).selected)
        try:
            req = RunRequest(
                suite=suite,
                methods=methods or None,
                tasks=tasks or None,
                seeds=number("#seeds", int),
                time_s=number("#time", float),
                mem_mb=number("#mem", float),
                jobs=number("#jobs", int),
            )
        except ValueError as exc:
            self._say(f"not a number: {exc}")
            return
        self._say("checking the choices...", "dim")
        self.check(req)

    @work(thread=True, exclusive=True, group="start-check", exit_on_error=False)
    def check(self, req: RunRequest) -> None:
        """Plan without writing: the same errors `srtui run` gives, shown in the form."""
        from srtui.views import check_run

        problem = check_run(self.workspace, req)
        if problem is not None:
            self.app.call_from_thread(self._say, problem)
            return
        self.app.call_from_thread(self.dismiss, req)
