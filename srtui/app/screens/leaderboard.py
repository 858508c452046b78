"""Board (the leaderboards): a suite scored by one of the scoring rules, with the per-dataset breakdown.

The scores come from ``srtui.results.scoring`` (the rules `srtui score RULE` uses); this screen only
chooses the suite and rule, shows the tables and exports them.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Select, Static
from textual.worker import Worker, WorkerState

from srtui.app.messages import LeaderboardReady
from srtui.app.screens.base import SectionScreen
from srtui.app.screens.saving import SAVE_BINDINGS, SAVE_HELP, save_in_background
from srtui.app.widgets import NavBar, VimTable, add_sized_columns, cell
from srtui.views import (
    PUBLISHED_MARK,
    Board,
    Profile,
    Reader,
    export_board,
    has_profiles,
    has_published,
    load_board,
    rule_names,
    suite_rule,
    suites,
    visible,
)

HELP = """\
A suite ranked by a scoring rule (the suite's own rule is chosen first; the selector offers every
rule). The top table is the leaderboard; the bottom one breaks it down per dataset for the
method highlighted above. The rules of a published release are scored as the publication's code
does (profile reference) by default; p switches to srtui's corrected profile and back (docs/scoring.md,
"Fidelity"). u puts SRBench's published results beside the suite's (rules srbench2021,
srbench-groundtruth, srbench2025; each row's source column says where it comes from, and one
warning line per difference from the published protocol shows above the table; docs/published.md)
and back. The notes and those warnings show as one line with their count; n shows each of them
and hides them again. o opens the rule selector. e exports both tables as CSV into
<workspace>/exports/.
"""


class LeaderboardScreen(SectionScreen):
    HELP = HELP + SAVE_HELP
    AUTO_FOCUS = "#board"
    BINDINGS = [
        *SAVE_BINDINGS,
        Binding("e", "export", "Export", id="board.export"),
        Binding("p", "toggle_profile", "Profile", id="board.profile"),
        Binding("u", "toggle_published", "Published", id="board.published"),
        Binding("o", "choose_rule", "Rule", id="board.rule"),
        Binding("n", "toggle_notes", "Notes", id="board.notes"),
    ]
    LIVE_S = 5.0  # scores follow a run writing the workspace

    def __init__(self) -> None:
        super().__init__()
        self.board: Board | None = None
        self._requested: tuple[str, str, Profile, bool] | None = None
        self.profile = Profile.REFERENCE
        self.published = False
        self._breakdown_of: tuple[int, object] | None = None
        self._suites_shown = False
        self.notes_open = False  # the notes and protocol warnings: one line with a count, n opens them

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Horizontal(classes="toolbar"):
            yield Select([], prompt="suite", id="board-suite")
            yield Select([(r, r) for r in rule_names()], prompt="rule", id="board-rule")
        with VerticalScroll(id="board-notes"):  # notes opened with n scroll here, never push the rows off
            yield Static(id="board-info", markup=False)
        yield VimTable(id="board", cursor_type="row", zebra_stripes=True)
        yield VimTable(id="breakdown", cursor_type="row")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reader = Reader(self.app.workspace)
        self.query_one("#board-info", Static).update(Text("reading suites...", style="dim"))
        self.load_suites()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self._requested = None  # score again even if suite and rule are the same
        self.load_suites()

    def on_screen_resume(self) -> None:
        # suites that appeared since (a run started meanwhile); not on the first show
        if self.board is None and self._suites_shown:
            self.load_suites()
        self._suites_shown = True

    @work(thread=True, exclusive=True, group="board-suites", exit_on_error=False)
    def load_suites(self) -> None:
        names = suites(self.reader)
        self.app.call_from_thread(self._set_suites, names)

    def _set_suites(self, names: list[str]) -> None:
        select = self.query_one("#board-suite", Select)
        keep = select.value if select.value in names else None  # a refresh keeps the chosen suite
        select.set_options([(n, n) for n in names])
        if names:
            select.value = keep or names[0]
            self._reload()  # in case the value did not change (no Changed event)
        else:
            self.query_one("#board-info", Static).update(Text("no runs in this workspace yet", style="dim"))

    @on(Select.Changed, "#board-suite")
    def _suite_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            rule = suite_rule(self.reader, event.value)
            rule_select = self.query_one("#board-rule", Select)
            if rule and rule != rule_select.value:
                rule_select.value = rule  # its Changed event loads the board
            else:
                self._reload()

    @on(Select.Changed, "#board-rule")
    def _rule_changed(self, event: Select.Changed) -> None:
        self._reload()

    def _reload(self) -> None:
        suite = self.query_one("#board-suite", Select).value
        rule = self.query_one("#board-rule", Select).value
        key = (suite, rule, self.profile, self.published)
        if isinstance(suite, str) and not isinstance(rule, str):  # a suite of one's own names no rule
            self.query_one("#board-info", Static).update(Text(f"choose a rule to score {suite} by", style="dim"))
        if isinstance(suite, str) and isinstance(rule, str) and key != self._requested:
            self._requested = (suite, rule, self.profile, self.published)  # Select posts Changed more than once
            self.query_one("#board-info", Static).update(Text(f"scoring {suite} by {rule}...", style="dim"))
            self.load(suite, rule, self.profile, self.published)

    def action_toggle_profile(self) -> None:
        self.profile = Profile.CORRECTED if self.profile == Profile.REFERENCE else Profile.REFERENCE
        self._reload()

    def action_toggle_published(self) -> None:
        self.published = not self.published
        self._reload()

    def action_choose_rule(self) -> None:
        """The rule selector, opened, from the keyboard (o)."""
        select = self.query_one("#board-rule", Select)
        select.focus()
        select.action_show_overlay()  # as Enter on it does: the list takes the arrow keys

    def action_toggle_notes(self) -> None:
        self.notes_open = not self.notes_open
        if self.board is not None:
            self._show_info(self.board)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_notes":  # offered when the board has notes or protocol warnings
            return self.board is not None and bool(self.board.notes or self.board.warnings)
        if action in ("toggle_profile", "toggle_published"):  # offered only where the rule has them
            rule = self.query_one("#board-rule", Select).value if self.is_mounted else None
            has = has_profiles if action == "toggle_profile" else has_published
            return isinstance(rule, str) and has(rule)
        return super().check_action(action, parameters)

    @work(thread=True, exclusive=True, group="board", exit_on_error=False)
    def load(self, suite: str, rule: str, profile: Profile, published: bool) -> None:
        self.post_message(LeaderboardReady(load_board(self.reader, suite, rule, profile, published)))

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "board" and event.state == WorkerState.ERROR:
            self.query_one("#board-info", Static).update(Text(str(event.worker.error), style="red"))

    def on_leaderboard_ready(self, message: LeaderboardReady) -> None:
        b = self.board = message.board
        self.refresh_bindings()  # the Profile and Published keys follow the rule just scored
        self._show_info(b)
        table = self.query_one("#board", DataTable)
        table.clear(columns=True)
        cells = [[cell(v) for v in row] for row in b.rows]
        if "source" in b.columns and b.method_column >= 0:  # the source column is last: mark the rows
            at, src = b.method_column, b.columns.index("source")
            for row, values in zip(cells, b.rows):
                if str(values[src]).startswith("published:"):
                    row[at] = cell(f"{values[at]}{PUBLISHED_MARK}")
        add_sized_columns(table, [(col, col) for col in b.columns], cells)
        for i, row in enumerate(cells):
            table.add_row(*row, key=str(i))
        self._show_breakdown(0)

    def _show_info(self, b: Board) -> None:
        """The board's heading, then its notes and protocol warnings as one line with their
        count (n shows each on its own line, and hides them again): at 80x24 they never take
        the rows' place."""
        profile = f" (profile {b.profile})" if b.profile else ""
        beside = " beside the published results" if b.published else ""
        info = Text(f"{b.suite} by {b.rule}{profile}{beside}: {len(b.rows)} rows", style="bold")
        notes = list(b.notes)
        counts = [f"{len(notes)} note{'s' * (len(notes) != 1)}"] if notes else []
        counts += [f"{len(b.warnings)} protocol warning{'s' * (len(b.warnings) != 1)}"] if b.warnings else []
        if counts:
            shown = "n hides them" if self.notes_open else "n shows them"
            info.append(f"\n{' and '.join(counts)} ({shown})", style="yellow" if b.warnings else "dim")
        if self.notes_open:
            for line in notes:
                info.append(f"\nnote: {visible(line, one_line=True)}", style="dim")
            for line in b.warnings:
                info.append(f"\nwarning: {visible(line, one_line=True)}", style="yellow")
        self.query_one("#board-info", Static).update(info)
        box = self.query_one("#board-notes", VerticalScroll)
        box.scroll_home(animate=False)
        # its height follows the lines, wrapped (closed notes give theirs back; at most 8 rows)
        room = max(20, (box.size.width or self.size.width or 80) - 4)
        lines = sum(max(1, -(-len(line) // room)) for line in info.plain.split("\n"))
        height = min(8, lines + 1)  # + the padding line above
        box.styles.height = height
        self._fit_board(len(b.rows), height)

    #: rows the screen gives the nav bar, the toolbar and the footer; the breakdown's least
    _CHROME, _BREAKDOWN_MIN = 5, 5

    def _fit_board(self, rows: int, notes: int) -> None:
        """The board takes the height its rows need (header included) before the breakdown below
        it, as far as the screen allows: opened notes never hide a row that would fit."""
        left = (self.size.height or 24) - self._CHROME - notes - self._BREAKDOWN_MIN
        self.query_one("#board", DataTable).styles.height = max(5, min(rows + 1, left)) if left >= 5 else "1fr"

    @on(DataTable.RowHighlighted, "#board")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_breakdown(event.cursor_row)

    def _show_breakdown(self, index: int) -> None:
        b = self.board
        key = None
        if b is not None and b.method_column >= 0 and 0 <= index < len(b.rows):
            key = (id(b), b.rows[index][b.method_column])
        if key is not None and key == self._breakdown_of:
            return  # RowHighlighted repeats the row just filled in
        self._breakdown_of = key
        table = self.query_one("#breakdown", DataTable)
        table.clear(columns=True)
        if b is None or key is None:
            return
        cells = [[cell(v) for v in row] for row in b.breakdown.get(key[1], ())]
        add_sized_columns(table, [(col, col) for col in b.breakdown_columns], cells)
        for row in cells:
            table.add_row(*row)

    def action_save_figure(self) -> None:
        from srtui.views import figure_for_rule

        if self.board is None:
            self.notify("nothing to draw yet", severity="warning")
            return
        kind = figure_for_rule(self.board.rule)
        save_in_background(self, self.reader, "figure", self.board.suite, kind, self.board.profile)

    def action_save_report(self) -> None:
        if self.board is None:
            self.notify("nothing to report yet", severity="warning")
            return
        save_in_background(self, self.reader, "report", self.board.suite)

    def action_export(self) -> None:
        if self.board is None:
            self.notify("nothing to export yet", severity="warning")
            return
        paths = export_board(self.board, self.app.workspace.root / "exports")
        self.notify("exported " + ", ".join(str(p) for p in paths), markup=False, timeout=8)
