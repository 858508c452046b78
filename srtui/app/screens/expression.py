"""Expression view of one run: 2-D pretty print beside the ground truth, metrics, Pareto front.

Models are untrusted text: only the safe parser reads them, and every piece is shown through
``rich.text.Text`` (never markup). Copy goes through OSC 52, so it works over SSH.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, ScrollableContainer, Vertical, VerticalScroll
from textual.events import Resize
from textual.widgets import DataTable, Footer, Static

from srtui.app.messages import DetailReady
from srtui.app.screens.base import JobScreen
from srtui.app.widgets import NavBar, VimTable, cell, status_cell
from srtui.views import PAGE_BYTES, ExpressionDetail, Rendered, expression_detail, read_page

VIEWS = ("rounded", "simplified", "raw")
#: a model's text longer than this many characters is shown a page at a time (a stored text too long
#: to read whole: pages of as many bytes)
TEXT_PAGE = PAGE_BYTES
COPY_MAX_CHARS = 1_000_000
VIEW_NOTES = {
    "rounded": "numbers to 4 significant digits",
    "simplified": "simplified by sympy, rounded",
    "raw": "as the method printed it",
}

HELP = """\
One run's model. The expression is parsed by srtui's safe parser and pretty-printed in 2-D
(unicode; a toggles ASCII), with the task's ground truth beside it (above it in a narrow window)
when it is known. v switches the model's view: numbers rounded to 4 significant digits,
simplified by sympy, or the text as the method printed it. Tab moves into the model and truth
boxes, whose arrow keys scroll a wide formula. Models of 1,000 characters or more are shown as
text, one over 4,000 a page at a time (] next page, [ previous). Below: every expression metric,
then the Pareto front when the method gave one (Enter on a front row shows that expression).
c copies the model as plain text, l as LaTeX (OSC 52: works over SSH in most terminals).
"""


class ExpressionScreen(JobScreen):
    HELP = HELP
    AUTO_FOCUS = "#model-scroll"
    BINDINGS = [
        Binding("c", "copy('plain')", "Copy text", id="expression.copy"),
        Binding("l", "copy('latex')", "Copy LaTeX", id="expression.latex"),
        Binding("v", "cycle_view", "View", id="expression.view"),
        Binding("a", "toggle_ascii", "ASCII", id="expression.ascii"),
        Binding("p", "plots", "Plots", id="expression.plots"),
        Binding("right_square_bracket", "page(1)", "Next page", show=False, id="expression.next_page"),
        Binding("left_square_bracket", "page(-1)", "Previous page", show=False, id="expression.previous_page"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self, job_id: str) -> None:
        super().__init__(job_id)
        self.detail: ExpressionDetail | None = None
        self.shown: Rendered | None = None  # model or a Pareto member
        self.pareto_index: int | None = None  # which member is shown (None: the final model)
        self.ascii = False
        self.view = VIEWS[0]
        self._simplified: dict[str, Rendered | None] = {}  # by model text; None while computing
        self.page = 0  # which TEXT_PAGE characters of a long model's text are shown
        #: (id of the text, page) -> (its text, first and last character or byte), read in a worker
        self._pages: dict[tuple[int, int], tuple[str, int, int]] = {}

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static(Text(f"run {self.job_id}: loading...", style="bold"), id="job-title", markup=False)
        with VerticalScroll(id="expression-body"):
            with Container(id="expressions"):  # side by side when wide, model over truth when narrow
                with Vertical(classes="expr-box"):
                    yield Static(Text("Model", style="bold"), classes="section", id="model-title", markup=False)
                    with ScrollableContainer(id="model-scroll", classes="expr-scroll"):
                        yield Static(id="model", markup=False, classes="expr")
                with Vertical(classes="expr-box", id="truth-box"):
                    yield Static(Text("Ground truth", style="bold"), classes="section", markup=False)
                    with ScrollableContainer(id="truth-scroll", classes="expr-scroll"):
                        yield Static(id="truth", markup=False, classes="expr")
            yield Static(Text("Metrics", style="bold"), classes="section")
            yield VimTable(id="metrics", cursor_type="none", show_header=False)
            yield Static(Text("Pareto front", style="bold"), classes="section", id="pareto-title")
            yield VimTable(id="pareto", cursor_type="row")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:  # then JobScreen's: the reader and the first read
        self.ascii = not self.app.unicode_ok

    def read(self) -> DetailReady:
        return DetailReady(expression_detail(self.reader, self.job_id))

    def on_detail_ready(self, message: DetailReady) -> None:
        d = self.detail = message.detail
        job = d.job
        title = Text(f"{job['method']} / {job['task']} / seed {job['seed']}  ", style="bold")
        title.append_text(status_cell(job["status"]))
        title.append(f"  {job['suite']}  {job['job_id']}", style="dim")
        self.query_one("#job-title", Static).update(title)
        self.shown, self.pareto_index, self.page = d.model, None, 0
        self._show_expressions()
        metrics = self.query_one("#metrics", DataTable)
        metrics.clear(columns=True)
        metrics.add_columns("metric", "value")
        for label, value in d.metrics:
            metrics.add_row(cell(label), cell(value))
        for note in d.notes:
            metrics.add_row(cell("note"), cell(note))
        pareto = self.query_one("#pareto", DataTable)
        pareto.clear(columns=True)
        has_front = bool(d.pareto)
        self.query_one("#pareto-title").display = has_front
        pareto.display = has_front
        if has_front:
            pareto.add_columns("complexity", "loss", "expression")
            for i, p in enumerate(d.pareto):
                pareto.add_row(
                    cell(p.get("complexity")), cell(p.get("loss")), cell(p.get("expression"), 200), key=str(i)
                )

    def on_resize(self, event: Resize) -> None:
        self.query_one("#expressions").set_class(event.size.width < 100, "stacked")

    def _show_expressions(self) -> None:
        d = self.detail
        model, truth = self._form(self.shown, self.view), self._form(d.truth if d else None, "rounded")
        for widget_id, form in (("#model", model), ("#truth", truth)):
            # 2-D prints keep their lines (scroll sideways); plain text wraps in its panel
            self.query_one(widget_id, Static).styles.width = (
                "auto" if form is not None and "\n" in form.plain else "100%"
            )
        self.query_one("#model", Static).update(
            model or Text("the run has no model" + (f" ({d.job['status']})" if d else ""), style="dim")
        )
        self.query_one("#truth", Static).update(truth or Text("no ground truth for this task", style="dim"))
        which = (
            "Model"
            if self.pareto_index is None or d is None
            else f"Model (Pareto #{self.pareto_index + 1} of {len(d.pareto)})"
        )
        title = Text(which, style="bold")
        title.append(f"  {VIEW_NOTES[self.view]} (v: {VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]})", style="dim")
        self.query_one("#model-title", Static).update(title)

    def _form(self, rendered: Rendered | None, view: str) -> Text | None:
        """The expression in the chosen view, as text (never markup): rounded, simplified or raw."""
        if rendered is None:
            return None
        if view == "simplified" and rendered.pretty:
            done = self._simplified.get(rendered.text)
            if done is None:
                if rendered.text not in self._simplified:
                    self._simplified[rendered.text] = None
                    self.simplify(rendered.text)
                return Text("simplifying...", style="dim")
            if done.error:
                return Text(f"{done.error}", style="italic dim")
            rendered = done
        if view != "raw" and rendered.pretty:
            ascii_form: str | None
            unicode_form: str | None
            if view == "rounded" and rendered.rounded_unicode is not None:
                ascii_form, unicode_form = rendered.rounded_ascii, rendered.rounded_unicode
            else:
                ascii_form, unicode_form = rendered.ascii, rendered.unicode
            form = ascii_form if self.ascii else unicode_form
            if form is not None:  # render() and simplified() fill the ASCII and unicode prints together
                return Text(form, no_wrap=True)
        if rendered.stored is not None or len(rendered.text) > TEXT_PAGE:
            return self._paged(rendered)
        body = Text(rendered.text)  # as the method printed it: wrapped, never markup
        if rendered.error:
            body.append(f"\n\n(not parsed: {rendered.error})", style="italic dim")
        elif rendered.unrendered:
            body.append(f"\n\n(not rendered: {rendered.unrendered}; shown as text)", style="italic dim")
        elif len(rendered.text) >= 1000:
            body.append(
                f"\n\n({len(rendered.text):,} characters: shown as text, not pretty-printed)", style="italic dim"
            )
        return body

    def _paged(self, rendered: Rendered) -> Text:
        """A long text one page at a time (a 50 MB model laid out whole blocks the app for minutes):
        its size, the page shown, the keys to page; the page is read (a stored text: from the
        database, srtui.views.longtext) or cut in a worker."""
        stored = rendered.stored
        pages = stored.pages if stored is not None else -(-len(rendered.text) // TEXT_PAGE)
        self.page = min(max(self.page, 0), pages - 1)
        key = (id(stored if stored is not None else rendered.text), self.page)
        part = self._pages.get(key)
        if part is None:
            self.cut_page(rendered, self.page, key)
        body = Text(part[0] if part is not None else "reading...", style="" if part is not None else "dim")
        why = f"not parsed: {rendered.error}; " if rendered.error and stored is None else ""
        if stored is not None:
            size, unit = f"{stored.size:,} bytes ({stored.size / 1e6:.1f} MB)", "bytes"
        else:
            size, unit = f"{len(rendered.text):,} characters", "characters"
        where = f"{unit} {part[1]:,}-{part[2]:,}, " if part is not None else ""
        body.append(
            f"\n\n({why}{size}; {where}page {self.page + 1:,} of {pages:,}: ] next page, [ previous)",
            style="italic dim",
        )
        return body

    @work(thread=True, group="page", exit_on_error=False)
    def cut_page(self, rendered: Rendered, page: int, key: tuple[int, int]) -> None:
        if rendered.stored is not None:
            part = read_page(self.reader, rendered.stored, page)
        else:
            text = rendered.text[page * TEXT_PAGE : (page + 1) * TEXT_PAGE]
            part = (text, page * TEXT_PAGE + 1, page * TEXT_PAGE + len(text))
        self.app.call_from_thread(self._page_ready, key, part)

    def _page_ready(self, key: tuple[int, int], part: tuple[str, int, int]) -> None:
        self._pages = {key: part}  # one page kept
        if self.detail is not None:
            self._show_expressions()

    def action_page(self, step: int) -> None:
        self.page += step
        if self.detail is not None:
            self._show_expressions()

    @work(thread=True, group="simplify", exit_on_error=False)
    def simplify(self, text: str) -> None:
        from srtui.views import features_of, simplified

        detail = self.detail
        if detail is None:  # started from a shown detail, which is never unset
            return
        features = features_of(self.reader.workspace, detail.job) or ()
        result = simplified(text, tuple(features), detail.job.get("dialect") or "python")
        self.app.call_from_thread(self._simplified_ready, text, result)

    def _simplified_ready(self, text: str, result: Rendered) -> None:
        self._simplified[text] = result
        if self.detail is not None:
            self._show_expressions()

    def action_cycle_view(self) -> None:
        self.view = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        if self.detail is not None:
            self._show_expressions()

    def action_toggle_ascii(self) -> None:
        self.ascii = not self.ascii
        if self.detail is not None:
            self._show_expressions()

    def action_copy(self, form: str) -> None:
        r = self.shown
        if r is None:
            self.notify("nothing to copy", severity="warning")
            return
        if r.stored is not None:  # never read whole
            self.notify(f"not copied: {r.stored.size:,} bytes", severity="warning", markup=False)
            return
        if form == "latex":
            if r.latex is None:
                self.notify("no LaTeX: the model could not be parsed", severity="warning", markup=False)
                return
            text = r.latex
        else:
            text = r.text
        if len(text) > COPY_MAX_CHARS:  # OSC 52 would send the terminal megabytes
            self.notify(f"not copied: {len(text):,} characters", severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {'LaTeX' if form == 'latex' else 'text'} ({len(text):,} characters)", markup=False)

    @on(DataTable.RowSelected, "#pareto")
    def _pareto_selected(self, event: DataTable.RowSelected) -> None:
        if self.detail is not None:  # the Pareto table is filled from a detail only
            self.show_pareto(self.detail, event.cursor_row)

    @work(thread=True, exclusive=True, group="pareto", exit_on_error=False)
    def show_pareto(self, d: ExpressionDetail, index: int) -> None:
        """Read and print one member of the front in a worker: printing is bounded (srtui.views.render)
        but takes seconds on a hostile string, and the event loop must not wait for it."""
        from srtui.views import features_of, render

        p = d.pareto[index]
        features = features_of(self.reader.workspace, d.job)
        text = str(p.get("expression") or "")
        shown = render(text, features, d.job.get("dialect") or "python") if features else Rendered(text)
        self.app.call_from_thread(self._pareto_ready, d, index, shown)

    def _pareto_ready(self, d: ExpressionDetail, index: int, shown: Rendered) -> None:
        if d is not self.detail:  # reloaded meanwhile
            return
        self.shown, self.pareto_index, self.page = shown, index, 0
        self._show_expressions()
        self.query_one("#expression-body", VerticalScroll).scroll_home()
        self.notify(
            f"showing Pareto member {index + 1} of {len(d.pareto)} (complexity {d.pareto[index].get('complexity')})",
            markup=False,
        )

    def action_scroll(self, direction: str) -> None:
        body = self.query_one("#expression-body", VerticalScroll)
        body.scroll_down() if direction == "down" else body.scroll_up()

    def action_plots(self) -> None:
        self.app.open_plots(self.job_id)
