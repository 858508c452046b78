"""The expert's screen: one frozen item at a time, rated 1-5 on the Likert scale.

Blind by construction: it only reads :class:`reviews.ExpertSession`, which holds the frozen item
content (no method, no job id) and opaque assignment ids. Every rating is committed (one
``BEGIN IMMEDIATE`` transaction) before the next item is drawn. The app around it has no
command palette and no other screens: over a restricted SSH key this is all the expert reaches.

Made for 80x24 first: the item (task, model, figures, plots) scrolls in the middle; the rating
bar, the comment line, the status line and the keys stay on screen at every size.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, ProgressBar, Static
from textual_plotext import PlotextPlot

from srtui.app.review.expert_view import (
    draw_scatter,
    draw_series,
    figures_text,
    likert_text,
    task_text,
    wrap_model,
)
from srtui.app.screens.dialogs import show_help
from srtui.app.terminal import HANGUP_CODE, HangupWatch
from srtui.views import LIKERT, ExpertError, ExpertSession, visible

MIN_SIZE = (80, 24)
#: seconds from the terminal going away to the forced exit of the expert's app
HANGUP_GRACE_S = 0.1

HELP = """\
Rate how much you would trust each model: 1 strongly distrust, 2 distrust, 3 neutral, 4 trust,
5 strongly trust. Press a number to choose, Enter to save (saved at once), c to write an
optional comment first (Enter in the comment saves it with the rating, Escape leaves it). s
skips an item for now, p and n go to the previous and next item (a saved rating can be
revised). Up/Down, PgUp/PgDn and Home/End scroll the item: the plots of the data and the
model's predictions are below the figures. A wide formula is wrapped between its terms, so all
of it is on the screen (one whose fractions are wider than the screen is written on lines, with
/ for the fraction bar). Tab moves between the item and the comment. The session resumes at your
first unrated item; ctrl+q leaves (every saved rating is kept).
"""

CSS = """
ExpertScreen #progress-row { height: auto; }
ExpertScreen #progress-text { width: 1fr; height: auto; }
ExpertScreen #bar { width: 16; margin-left: 1; }
ExpertScreen #size-warning { height: auto; padding: 0 1; background: $warning 30%; display: none; }
ExpertScreen #size-warning.shown { display: block; }
ExpertScreen #body { height: 1fr; scrollbar-size-vertical: 1; }
ExpertScreen #task { height: auto; padding: 0 1; }
ExpertScreen #model-box { height: auto; border: round $primary; border-title-align: left; }
ExpertScreen #model-box:focus { border: round $accent; }
ExpertScreen #expression { width: 100%; }
ExpertScreen #figures { height: auto; padding: 0 1; }
ExpertScreen #plots { height: 16; margin-top: 1; }
ExpertScreen #plots.stacked { layout: vertical; height: 30; }
ExpertScreen PlotextPlot { width: 1fr; height: 1fr; }
ExpertScreen #likert { height: auto; padding: 0 1; background: $boost; }
ExpertScreen #comment { margin: 0 1; }
ExpertScreen #message { height: 1; padding: 0 1; }
"""


class CommentInput(Input):
    """The optional comment; its keys in the Footer while it is being written."""

    BINDINGS = [
        Binding("enter", "submit", "Save with rating", id="review.comment-save"),
        Binding("escape", "screen.leave_comment", "Back to the item", id="review.comment-leave"),
    ]


class ExpertScreen(Screen[None]):
    HELP = HELP
    DEFAULT_CSS = CSS
    AUTO_FOCUS = "#body"
    BINDINGS = [
        Binding("1", "choose(1)", "Rate", key_display="1-5", id="review.rate"),
        *(Binding(str(k), f"choose({k})", show=False) for k in list(LIKERT)[1:]),
        Binding("enter", "submit", "Save", id="review.submit"),
        Binding("c", "comment", "Comment", id="review.comment"),
        Binding("s", "skip", "Skip", id="review.skip"),
        Binding("p", "move(-1)", "Prev", id="review.prev"),
        Binding("n", "move(1)", "Next", id="review.next"),
        Binding("escape", "leave_comment", show=False),
        Binding("f1", "help", "Help", id="review.help"),
        Binding("question_mark", "help", show=False),
        Binding("q", "app.quit", show=False),
    ]

    def __init__(self, session: ExpertSession) -> None:
        super().__init__()
        self.session = session
        self.index = 0
        self.choice: int | None = None
        self.finished = False
        self.model = ""
        self.plain = ""  # the one-line form: shown instead of a 2-D print that can't be cut whole

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="progress-row"):
            yield Static(id="progress-text", markup=False)
            yield ProgressBar(total=len(self.session), show_eta=False, show_percentage=False, id="bar")
        yield Static(id="size-warning", markup=False)
        with VerticalScroll(id="body"):
            yield Static(id="task", markup=False)
            with Vertical(id="model-box"):
                yield Static(id="expression", markup=False)
            yield Static(id="figures", markup=False)
            with Horizontal(id="plots"):
                yield PlotextPlot(id="series")
                yield PlotextPlot(id="scatter")
        yield Static(id="likert", markup=False)
        yield CommentInput(
            placeholder="c: comment (optional); Enter saves it with the rating",
            id="comment",
            max_length=2000,
            compact=True,
        )
        yield Static(id="message", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#model-box").border_title = "Model"
        start = self.session.first_unrated()
        if start is None:
            self.finished = True
            start = 0
        self.show_item(start)
        if self.finished:
            self.say(self._all_done(), "green")

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        self.query_one("#plots").set_class(width < 100, "stacked")
        warning = self.query_one("#size-warning", Static)
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        warning.set_class(small, "shown")
        self.draw_model()
        if small:
            warning.update(
                Text(
                    f"This window is {width}x{height}; the screen is made for {MIN_SIZE[0]}x{MIN_SIZE[1]} "
                    "or more. Everything still works: scroll with PgUp/PgDn."
                )
            )

    # --- drawing ---------------------------------------------------------------------------

    def say(self, text: str, style: str = "") -> None:
        self.query_one("#message", Static).update(Text(text, style=style))

    def _all_done(self) -> str:
        return f"All {len(self.session)} rated - thank you; p/n to revise, ctrl+q to leave"

    def show_item(self, index: int) -> None:
        self.index = index
        content = self.session.show(index)
        saved = self.session.rating(index)
        self.choice = saved[0] if saved else None
        self.query_one("#comment", Input).value = (saved[1] or "") if saved else ""
        self.query_one("#task", Static).update(task_text(content))
        key = "expression" if getattr(self.app, "unicode_ok", True) else "expression_ascii"
        self.model = content.get(key) or content.get("expression") or ""
        self.plain = content.get("plain") or ""
        self.draw_model()
        self.query_one("#figures", Static).update(figures_text(content))
        draw_series(self.query_one("#series", PlotextPlot), content)
        draw_scatter(self.query_one("#scatter", PlotextPlot), content)
        self.query_one("#body", VerticalScroll).scroll_home(animate=False)
        self.draw_progress()
        self.say("1-5 choose a rating, Enter saves it; PgDn shows the plots")

    def draw_model(self) -> None:
        """The whole model, wrapped to the box between its terms (no sideways scrolling to miss its
        end, no number cut in two)."""
        width = self.app.size.width - 5  # the body's scrollbar, the box's border and padding
        self.query_one("#expression", Static).update(Text(wrap_model(self.model, width, self.plain)))

    def draw_progress(self) -> None:
        n, rated = len(self.session), self.session.rated
        saved = self.session.rating(self.index)
        state = f"saved {saved[0]} ({LIKERT[saved[0]]})" if saved else "not rated yet"  # one line at 80
        self.query_one("#progress-text", Static).update(
            Text.assemble((f"Item {self.index + 1} of {n}", "bold"), f" · {rated} rated · this one: {state}")
        )
        self.query_one("#bar", ProgressBar).update(progress=rated)
        self.query_one("#likert", Static).update(likert_text(self.choice, saved[0] if saved else None))

    # --- actions ---------------------------------------------------------------------------

    def action_choose(self, value: int) -> None:
        self.choice = value
        self.draw_progress()
        self.say(f"{value} = {LIKERT[value]}: Enter saves it")

    def action_comment(self) -> None:
        self.query_one("#comment", Input).focus()
        self.say("type a comment; Enter saves it with the rating, Escape leaves the comment")

    def action_leave_comment(self) -> None:
        self.query_one("#body").focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()

    def action_submit(self) -> None:
        if self.choice is None:
            self.say("choose a rating first: 1 strongly distrust ... 5 strongly trust", "yellow")
            return
        comment = self.query_one("#comment", Input).value
        try:
            self.session.rate(self.index, self.choice, comment)
        except ExpertError as exc:
            self.say(str(exc), "red")
            return
        self.advance(f"saved {self.choice} ({LIKERT[self.choice]})")

    def action_skip(self) -> None:
        try:
            self.session.skip(self.index)
        except ExpertError as exc:
            self.say(str(exc), "red")
            return
        self.advance("skipped for now")

    def advance(self, note: str) -> None:
        self.query_one("#body").focus()  # never leave the next item behind the comment line
        nxt = self.session.next_unrated(self.index)
        if nxt is None:
            self.finished = True
            self.show_item(self.index)
            self.say(f"{note}. {self._all_done()}", "green")  # one line at 80 columns
            return
        self.show_item(nxt)
        self.say(f"{note}; this is the next unrated item", "green")

    def action_move(self, step: int) -> None:
        self.query_one("#body").focus()
        self.show_item((self.index + step) % len(self.session))

    def action_help(self) -> None:
        show_help(self.app, general="")


class ReviewApp(App[None]):
    """The expert's whole app: one screen, no command palette, nothing else to reach."""

    TITLE = "srtui review"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True, id="review.quit")]  # shown in the Footer

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 carries the text to the terminal: control characters go as visible text."""
        super().copy_to_clipboard(visible(text))

    def __init__(self, session: ExpertSession, *, unicode_ok: bool = True) -> None:
        super().__init__()
        self.session = session
        self.unicode_ok = unicode_ok
        self.sub_title = visible(f"{session.session} - {session.expert}", one_line=True)

    def on_mount(self) -> None:
        if not self.is_headless:  # ssh dropped or the window closed: leave within a second
            # every rating is committed as it is given, so nothing is lost by not waiting for
            # Textual's shutdown (0.7 s and more on a loaded machine): the process ends 0.1 s on
            HangupWatch(self.terminal_gone, lambda: HANGUP_GRACE_S).start(asyncio.get_running_loop())
        self.push_screen(ExpertScreen(self.session))

    def terminal_gone(self) -> None:
        self.exit(return_code=HANGUP_CODE)  # every rating given is already committed


def run_expert(session: ExpertSession) -> int:
    import sys

    app = ReviewApp(session, unicode_ok=(sys.stdout.encoding or "").lower().replace("-", "").startswith("utf"))
    app.run()
    return app.return_code or 0
