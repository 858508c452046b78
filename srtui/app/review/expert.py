"""The expert's screen: one frozen item at a time, rated 1-5 on the Likert scale.

Blind by construction: it only reads :class:`reviews.ExpertSession`, which holds the frozen item
content (no method, no job id) and opaque assignment ids. Every rating is committed (one
``BEGIN IMMEDIATE`` transaction) before the next item is drawn. The app around it has no
command palette and no other screens: over a restricted SSH key this is all the expert reaches.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, ProgressBar, Static
from textual_plotext import PlotextPlot

from engine.textsafe import visible
from reviews import LIKERT, ExpertError, ExpertSession

HELP = """\
Rate how much you would trust each model: 1 strongly distrust, 2 distrust, 3 neutral, 4 trust,
5 strongly trust. Press a number to choose, Enter to save (saved at once), c to write an
optional comment first. s skips an item for now, p and n go to the previous and next item (a
saved rating can be revised). The session resumes at your first unrated item.
"""

CSS = """
ExpertScreen #progress-row { height: 1; }
ExpertScreen #progress-text { width: 1fr; }
ExpertScreen #bar { width: 30; }
ExpertScreen #facts { height: auto; padding: 0 1; background: $boost; }
ExpertScreen #description { height: auto; padding: 0 1; color: $text-muted; }
ExpertScreen #expr-box { height: 9; border: round $primary; border-title-align: left; }
ExpertScreen #expression { width: auto; }
ExpertScreen #plots { height: 1fr; min-height: 12; }
ExpertScreen PlotextPlot { width: 1fr; }
ExpertScreen #likert { height: 1; padding: 0 1; }
ExpertScreen #comment { margin: 0 1; }
ExpertScreen #message { height: 1; padding: 0 1; }
"""


def _points(xs: list, ys: list) -> tuple[list, list]:
    keep = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    return [k[0] for k in keep], [k[1] for k in keep]


def _fmt(value: Any, digits: str = ".3g") -> str:
    return "n/a" if value is None else format(value, digits)


class ExpertScreen(Screen):
    HELP = HELP
    DEFAULT_CSS = CSS
    AUTO_FOCUS = ""
    BINDINGS = [
        *(Binding(str(k), f"choose({k})", f"{k}", show=False) for k in LIKERT),
        Binding("enter", "submit", "Save", id="review.submit"),
        Binding("c", "comment", "Comment", id="review.comment"),
        Binding("s", "skip", "Skip", id="review.skip"),
        Binding("p,left", "move(-1)", "Previous", id="review.prev"),
        Binding("n,right", "move(1)", "Next", id="review.next"),
        Binding("escape", "leave_comment", "Done commenting", show=False),
        Binding("question_mark", "help", "Help", id="review.help"),
        Binding("q", "app.quit", "Quit", id="review.quit"),
    ]

    def __init__(self, session: ExpertSession) -> None:
        super().__init__()
        self.session = session
        self.index = 0
        self.choice: int | None = None
        self.finished = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="progress-row"):
            yield Static(id="progress-text", markup=False)
            yield ProgressBar(total=len(self.session), show_eta=False, id="bar")
        yield Static(id="facts", markup=False)
        yield Static(id="description", markup=False)
        with ScrollableContainer(id="expr-box"):
            yield Static(id="expression", markup=False)
        with Horizontal(id="plots"):
            yield PlotextPlot(id="series")
            yield PlotextPlot(id="scatter")
        yield Static(id="likert", markup=False)
        yield Input(placeholder="optional comment (c), Enter saves", id="comment", max_length=2000)
        yield Static(id="message", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#expr-box").border_title = "Model"
        start = self.session.first_unrated()
        if start is None:
            self.finished = True
            start = 0
        self.show_item(start)
        if self.finished:
            self.say(f"All {len(self.session)} items are rated - thank you. p/n to revise, q to quit.")

    # --- drawing ---------------------------------------------------------------------------

    def say(self, text: str, style: str = "") -> None:
        self.query_one("#message", Static).update(Text(text, style=style))

    def show_item(self, index: int) -> None:
        self.index = index
        content = self.session.show(index)
        saved = self.session.rating(index)
        self.choice = saved[0] if saved else None
        comment = self.query_one("#comment", Input)
        comment.value = (saved[1] or "") if saved else ""
        n, rated = len(self.session), self.session.rated
        state = f"saved: {saved[0]} ({LIKERT[saved[0]]})" if saved else "not rated yet"
        self.query_one("#progress-text", Static).update(Text(
            f"Item {index + 1} of {n}   {rated} rated, {n - rated} to go   item {self.session.order[index]}   {state}"))
        self.query_one("#bar", ProgressBar).update(progress=rated)
        facts = Text()
        for label, value in (("Task", content.get("task")), ("Horizon", content.get("horizon") or "n/a"),
                             ("R² test", _fmt(content.get("r2_test"))), ("Simplicity", _fmt(content.get("simplicity"), "g"))):
            facts.append(f"{label} ", style="bold")
            facts.append(f"{value}    ")
        self.query_one("#facts", Static).update(facts)
        self.query_one("#description", Static).update(Text(content.get("description") or ""))
        key = "expression" if self.app_unicode() else "expression_ascii"
        self.query_one("#expression", Static).update(Text(content.get(key) or content.get("expression") or ""))
        self.draw_plots(content)
        self.draw_likert()
        self.say("")

    def app_unicode(self) -> bool:
        return getattr(self.app, "unicode_ok", True)

    def draw_likert(self) -> None:
        t = Text("Rating: ")
        for k, label in LIKERT.items():
            style = "reverse bold" if self.choice == k else ""
            t.append(f" {k} {label} ", style=style)
            t.append(" ")
        self.query_one("#likert", Static).update(t)

    def draw_plots(self, content: dict[str, Any]) -> None:
        s = content.get("series") or {}
        y_train, y_test = s.get("y_train") or [], s.get("y_test") or []
        p_train, p_test = s.get("pred_train") or [], s.get("pred_test") or []
        dates = bool(s.get("dates_train")) and bool(s.get("dates_test"))
        x_train = s["dates_train"] if dates else list(range(len(y_train)))
        x_test = s["dates_test"] if dates else list(range(len(y_train), len(y_train) + len(y_test)))
        widget = self.query_one("#series", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        if dates:
            plt.date_form("Y-m-d")
        for xs, ys, label, color in ((x_train, y_train, "training truth", "blue"), (x_test, y_test, "test truth", "green"),
                                     (x_train + x_test, p_train + p_test, "prediction", "orange")):
            px, py = _points(xs, ys)
            if px:
                plt.plot(px, py, label=label, color=color, marker="braille")
        plt.title("over time" if dates else "by row")
        widget.refresh()
        widget = self.query_one("#scatter", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        for ys, ps, label, color in ((y_train, p_train, "train", "blue"), (y_test, p_test, "test", "orange")):
            px, py = _points(ys, ps)
            if px:
                plt.scatter(px, py, label=label, color=color, marker="dot")
        truth = [v for v in y_train + y_test if v is not None]
        if truth:
            lo, hi = min(truth), max(truth)
            plt.plot([lo, hi], [lo, hi], label="identity", color="gray")
        plt.title("predicted vs true")
        plt.xlabel("true")
        plt.ylabel("predicted")
        widget.refresh()

    # --- actions ---------------------------------------------------------------------------

    def action_choose(self, value: int) -> None:
        self.choice = value
        self.draw_likert()
        self.say(f"{value} = {LIKERT[value]}: Enter saves")

    def action_comment(self) -> None:
        self.query_one("#comment", Input).focus()

    def action_leave_comment(self) -> None:
        self.set_focus(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.set_focus(None)
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
        nxt = self.session.next_unrated(self.index)
        if nxt is None:
            self.finished = True
            self.show_item(self.index)
            self.say(f"{note}. All {len(self.session)} items are rated - thank you. p/n to revise, q to quit.", "green")
            return
        self.show_item(nxt)
        self.say(note, "green")

    def action_move(self, step: int) -> None:
        self.show_item((self.index + step) % len(self.session))

    def action_help(self) -> None:
        self.notify(HELP, title="How to rate", timeout=20, markup=False)


class ReviewApp(App):
    """The expert's whole app: one screen, no command palette, nothing else to reach."""

    TITLE = "srtui review"
    ENABLE_COMMAND_PALETTE = False

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52 carries the text to the terminal: control characters go as visible text."""
        super().copy_to_clipboard(visible(text))

    def __init__(self, session: ExpertSession, *, unicode_ok: bool = True) -> None:
        super().__init__()
        self.session = session
        self.unicode_ok = unicode_ok
        self.sub_title = visible(f"{session.session} - {session.expert}", one_line=True)

    def on_mount(self) -> None:
        self.push_screen(ExpertScreen(self.session))


def run_expert(session: ExpertSession) -> int:
    import sys

    app = ReviewApp(session, unicode_ok=(sys.stdout.encoding or "").lower().replace("-", "").startswith("utf"))
    app.run()
    return app.return_code or 0
