"""Modal screens: F1 help (what the keys of the current screen do) and the start-a-run form."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

from srtui.app.widgets import CheckList
from srtui.views import FormInput, SrtuiError, run_form, run_request

if TYPE_CHECKING:
    from srtui.views import RunRequest, Workspace

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


def _widget(field: FormInput) -> Widget:
    """The start-a-run form's widget of one field (its id: the option's name)."""
    if field.widget == "pick":
        return CheckList(*((name, name) for name in field.choices), id=field.name, compact=True)
    if field.widget == "select":
        first = field.initial if field.initial in field.choices else field.choices[0]
        return Select([(c, c) for c in field.choices], value=first, id=field.name, allow_blank=False, compact=True)
    kind: Literal["integer", "number", "text"] = (
        "integer" if field.widget == "integer" else "number" if field.widget == "number" else "text"
    )
    return Input(value=field.initial, placeholder=field.placeholder, id=field.name, type=kind, compact=True)


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
    """The same choices as `srtui run`: the run options declared with a form field (srtui.runs.options:
    suite, methods, tasks, seeds, limits, parallel jobs), each a widget of its kind.

    Start plans the run (as `srtui run --dry-run` does, in a worker) before closing: a bad choice
    is shown in the form, with every field kept."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.inputs = run_form()

    def compose(self) -> ComposeResult:
        with Vertical(id="start-box"):
            yield Static(
                Text("Start a run (like `srtui run`; blank means the suite's default)", style="bold"), markup=False
            )
            with Grid(id="start-form"):
                for field in self.inputs:
                    if field.widget != "pick":
                        yield Label(field.label)
                        yield _widget(field)
            for field in self.inputs:  # a list to pick from takes the form's width, under the others
                if field.widget == "pick":
                    yield Label(f"{field.label} ({field.placeholder})")
                    yield _widget(field)
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
        values: dict[str, str | list[str]] = {}
        for field in self.inputs:
            widget = self.query_one(f"#{field.name}")
            if isinstance(widget, SelectionList):
                values[field.name] = [str(v) for v in widget.selected]
            elif isinstance(widget, Select):
                if not isinstance(widget.value, str):
                    self._say(f"choose a {field.label}")
                    return
                values[field.name] = widget.value
            elif isinstance(widget, Input):
                values[field.name] = widget.value
        try:
            req = run_request(values)
        except ValueError as exc:
            self._say(f"not a number: {exc}")
            return
        except SrtuiError as exc:
            self._say(str(exc))
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
