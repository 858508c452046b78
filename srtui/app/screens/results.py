"""Results explorer: runs filtered, sorted, grouped; per-method summaries; a page at a time.

Never loads every run for a page: the explorer's columns of every job are held in memory (a
column store loaded once, then kept current from the store's change log), so filter, sort and
group are numpy operations and only the page's rows are read; until it is loaded, and for a
filter on another column, SQLite answers (srtui.results.store.explore). A newer key cancels the query it
supersedes; a slow count is estimated, then refined. Interactive with millions of runs.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static
from textual.worker import get_current_worker

from srtui.app.messages import CountReady, PageReady
from srtui.app.screens.base import SectionScreen
from srtui.app.widgets import NavBar, VimTable, add_sized_columns, cell, status_cell
from srtui.views import (
    NUMBER_COLUMNS,
    TEXT_COLUMNS,
    Cancelled,
    Reader,
    ResultsPage,
    ResultsQuery,
    count_jobs,
    filter_token,
    prefetch_columns,
    results_page,
)

GROUPINGS: tuple[tuple[str, ...], ...] = (
    (),
    ("method",),
    ("suite", "method"),
    ("task",),
    ("task", "method"),
    ("status",),
    ("method", "status"),
)
SORTS = ("task", "method", "seed", "status", "r2_test", "wall_s", "suite", "job_id")
HEADERS = {
    "r2_test": "R² test",
    "wall_s": "wall s",
    "median_r2_test": "median R²",
    "mean_r2_test": "mean R²",
    "best_r2_test": "best R²",
    "mean_wall_s": "mean wall s",
}

HELP = """\
Every run in the workspace, a page at a time. Type a filter and press Enter:
  method=linear,ffx   status!=ok   r2_test>0.9   task~feynman   free words

(= and != take comma-separated values or one "quoted value", ~ is a substring, words match
suite/task/method).
o / O change the sort column / direction (or select a column header); b cycles the grouping
(per-method summaries with median R²); [ and ] page. Enter opens the run's expression,
p its plots; on a grouped row Enter drills into that group.
"""


class ResultsScreen(SectionScreen):
    HELP = HELP
    AUTO_FOCUS = "#results"
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="results.filter"),
        Binding("o", "cycle_sort", "Sort", id="results.sort"),
        Binding("O", "reverse", "Reverse sort", show=False, id="results.reverse"),
        Binding("b", "cycle_group", "Group", id="results.group"),
        Binding("right_square_bracket", "page(1)", "Next page", show=False),
        Binding("left_square_bracket", "page(-1)", "Prev page", show=False),
        Binding("p", "plots", "Plots", id="results.plots"),
        Binding("escape", "focus_table", "Back to the table", show=False),
    ]
    PAGE = 100
    LIVE_S = 2.0  # while a run writes the workspace, the page follows

    def __init__(self) -> None:
        super().__init__()
        self.query_state = ResultsQuery(sort="task", limit=self.PAGE)
        self.page: ResultsPage | None = None
        self._group_index = 0
        self._debounce: Timer | None = None
        self._shown_query: ResultsQuery | None = None
        #: every job's explorer columns are in memory (set by the prefetch worker)
        self.columns_ready = False
        self._prefetching = False
        #: why the filter box's text is not in use (the previous filter is), else None
        self.filter_problem: str | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Input(placeholder="filter: method=linear status!=ok r2_test>0.9 task~feyn (Enter)", id="filter")
        yield Static(id="info", markup=False)
        yield VimTable(id="results", cursor_type="row", zebra_stripes=True)
        # the highlighted run's model across the whole width: at 80 columns the table's model
        # column starts near the right edge, a few characters of it in view
        yield Static(id="model-line", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reader = Reader(self.app.workspace)
        self.query_one("#info", Static).update(Text("loading..."))
        self.load()
        self.query_one("#results").focus()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self.load()

    # --- reading -------------------------------------------------------------------------------

    def load(self, query: ResultsQuery | None = None) -> None:
        if query is not None:
            self.query_state = query
        self.read_page(self.query_state)

    @work(thread=True, exclusive=True, group="results-page", exit_on_error=False)
    def read_page(self, query: ResultsQuery) -> None:
        worker = get_current_worker()
        try:  # a newer key cancels this worker, and SQLite stops its query at once
            page = results_page(self.reader, query, lambda: worker.is_cancelled)
        except Cancelled:
            return
        if worker.is_cancelled:
            return
        self.post_message(PageReady(page))
        if not page.exact:  # estimated: count exactly now, unless a newer key comes first
            try:
                total = count_jobs(self.reader, query, lambda: worker.is_cancelled)
            except Cancelled:
                return
            if total is not None and not worker.is_cancelled:
                self.post_message(CountReady(query, total))

    @work(thread=True, exclusive=True, group="results-prefetch", exit_on_error=False)
    def prefetch(self) -> None:
        """The column store (every job's explorer columns in memory): seconds for a million jobs;
        pages come from SQL until it is there, then from memory."""
        if prefetch_columns(self.reader):
            self.columns_ready = True

    def on_count_ready(self, message: CountReady) -> None:
        if self.page is not None and self.page.query == message.query:
            self.page = replace(self.page, total=message.total, exact=True)
            self._show_info(self.page)

    def on_page_ready(self, message: PageReady) -> None:
        page = message.page
        self.page = page
        if not self._prefetching or (self.columns_ready and self.reader.columns is None):
            # after the first paint (the load competes for the CPU); again when the column
            # store fell too far behind the change log and was dropped
            self._prefetching, self.columns_ready = True, False
            self.prefetch()
        table = self.query_one("#results", DataTable)
        same_view = table.row_count and self._shown_query is not None and self._shown_query == page.query
        keep_row = table.cursor_row if same_view else 0  # a live refresh keeps the highlighted row
        self._shown_query = page.query
        model_at = page.columns.index("model") if "model" in page.columns else -1
        status_at = page.columns.index("status") if "status" in page.columns else -1
        id_at = page.columns.index("job_id") if "job_id" in page.columns else -1
        rows = [
            [
                status_cell(v) if j == status_at else cell(v, 50 if j == model_at else 28 if j == 0 else None)
                for j, v in enumerate(row)
            ]
            for row in page.rows
        ]
        table.clear(columns=True)
        labels = []
        for col in page.columns:
            label = HEADERS.get(col, col)
            if col == page.query.sort:
                label += " ↓" if page.query.descending else " ↑"
            labels.append((label, col))
        add_sized_columns(table, labels, rows)
        for i, (row, cells) in enumerate(zip(page.rows, rows)):
            table.add_row(*cells, key=row[id_at] if id_at >= 0 else f"group-{i}")
        if keep_row:
            table.move_cursor(row=min(keep_row, table.row_count - 1))
        self._show_info(page)
        self._show_model(table.cursor_row)

    @on(DataTable.RowHighlighted, "#results")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_model(event.cursor_row)

    def _show_model(self, index: int) -> None:
        """The model of the run at ``index`` on one line under the table (none for groups)."""
        line = self.query_one("#model-line", Static)
        page = self.page
        line.display = page is not None and "model" in page.columns
        if page is None or not line.display:
            return
        model = page.rows[index][page.columns.index("model")] if 0 <= index < len(page.rows) else None
        text = Text("model: ", style="bold")
        text.append(cell(model))
        line.update(text)

    def _show_info(self, page: ResultsPage) -> None:
        q = page.query
        first = q.offset + 1 if page.rows else 0
        text = Text()
        about = "" if page.exact else "~"
        text.append(f"{first}-{q.offset + len(page.rows)} of {about}{page.total:,}", style="bold")
        text.append(f" groups by {'+'.join(q.group_by)}" if q.group_by else " runs")
        text.append(f"  sort {q.sort} {'↓' if q.descending else '↑'}")  # as the column header shows it
        if q.filter_text:
            text.append("  filter: ")
            text.append(q.filter_text, style="italic")
        if self.filter_problem:
            text.append(f"  (box: not a filter, {'kept' if q.filter_text else 'none in use'})", style="bold red")
        if self.app.timings:
            text.append(f"  ({page.seconds * 1000:.0f} ms)", style="dim")
        self.query_one("#info", Static).update(text)

    # --- filter / sort / group -----------------------------------------------------------------

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self._apply_filter(event.value)
        self.query_one("#results").focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.3, lambda: self._apply_filter(event.value, quiet=True))

    def _apply_filter(self, text: str, quiet: bool = False) -> None:
        from srtui.views import filter_problem

        text = text.strip()
        problem = filter_problem(text)
        if problem is not None:  # the box keeps the text to fix; the info line says what is active
            self.filter_problem = problem
            if self.page is not None:
                self._show_info(self.page)
            if not quiet:
                active = self.query_state.filter_text or "none"
                self.notify(f"{problem}; the filter in use is still: {active}", severity="error", markup=False)
            return
        self.filter_problem = None
        if text == self.query_state.filter_text:
            if self.page is not None:
                self._show_info(self.page)
            return
        self.load(replace(self.query_state, filter_text=text, offset=0))

    def action_focus_filter(self) -> None:
        self.query_one("#filter").focus()

    def action_focus_table(self) -> None:
        self.query_one("#results").focus()

    def _sorts(self) -> tuple[str, ...]:
        if self.query_state.group_by:
            return self.page.columns if self.page and self.page.query.group_by else self.query_state.group_by
        return SORTS

    def action_cycle_sort(self) -> None:
        sorts = self._sorts()
        i = sorts.index(self.query_state.sort) if self.query_state.sort in sorts else -1
        sort = sorts[(i + 1) % len(sorts)]
        self.load(
            replace(
                self.query_state, sort=sort, offset=0, descending=sort in NUMBER_COLUMNS or sort.endswith("r2_test")
            )
        )

    def action_reverse(self) -> None:
        self.load(replace(self.query_state, descending=not self.query_state.descending, offset=0))

    def action_cycle_group(self) -> None:
        self._group_index = (self._group_index + 1) % len(GROUPINGS)
        group = GROUPINGS[self._group_index]
        sort = "median_r2_test" if group else "task"
        self.load(replace(self.query_state, group_by=group, sort=sort, descending=bool(group), offset=0))

    @on(DataTable.HeaderSelected, "#results")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        col = str(event.column_key.value)
        if not self.query_state.group_by and col not in TEXT_COLUMNS + NUMBER_COLUMNS:
            return
        descending = not self.query_state.descending if col == self.query_state.sort else False
        self.load(replace(self.query_state, sort=col, descending=descending, offset=0))

    def action_page(self, step: int) -> None:
        total = self.page.total if self.page else 0
        offset = self.query_state.offset + step * self.PAGE
        if 0 <= offset < max(total, 1):
            self.load(replace(self.query_state, offset=offset))

    # --- opening a run -------------------------------------------------------------------------

    def _selected(self) -> tuple[str, ...] | None:
        table = self.query_one("#results", DataTable)
        if not table.row_count or self.page is None:
            return None
        return tuple(self.page.rows[table.cursor_row]) if table.cursor_row < len(self.page.rows) else None

    def _job_id(self, row: tuple[str, ...]) -> str:
        """The run id of a row `_selected` returned (a run, not a group)."""
        assert self.page is not None  # `_selected` returns a row only while a page is shown
        return str(row[self.page.columns.index("job_id")])

    @on(DataTable.RowSelected, "#results")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        row = self._selected()
        if row is None:
            return
        q = self.query_state
        if q.group_by:  # drill into the group: filter on its keys, show its runs
            # every key, quoted when it has a space or a comma, "" when missing: only the group's runs
            extra = " ".join(filter_token(col, row[i]) for i, col in enumerate(q.group_by))
            self._group_index = 0
            self.query_one("#filter", Input).value = f"{q.filter_text} {extra}".strip()
            self.load(
                replace(
                    q,
                    filter_text=f"{q.filter_text} {extra}".strip(),
                    group_by=(),
                    sort="task",
                    descending=False,
                    offset=0,
                )
            )
        else:
            self.app.open_expression(self._job_id(row))

    def action_plots(self) -> None:
        row = self._selected()
        if row is not None and not self.query_state.group_by:
            self.app.open_plots(self._job_id(row))
