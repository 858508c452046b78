"""Small widgets and helpers shared by the screens."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, SelectionList, Static
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

from srtui.styles import STATUS_STYLE
from srtui.views import visible


class VimTable(DataTable[Any]):
    """A DataTable with vim-style keys (j/k, h/l, g/G, ctrl+d/ctrl+u); a table wider than the
    screen scrolls sideways with h/l or the arrow keys (a row cursor moves only up and down)."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("h", "cursor_left", "Left", show=False),
        Binding("l", "cursor_right", "Right", show=False),
        Binding("0", "scroll_home_x", "First column", show=False),
        Binding("$", "scroll_end_x", "Last column", show=False),
        Binding("home,g", "scroll_top", "Top", show=False),
        Binding("end,G", "scroll_bottom", "Bottom", show=False),
        Binding("ctrl+d", "page_down", "Page down", show=False),
        Binding("ctrl+u", "page_up", "Page up", show=False),
    ]

    def action_cursor_right(self) -> None:
        if self.cursor_type == "row":  # a row cursor has no column to move to: the next column shows
            self._scroll_to_column(+1)
        else:
            super().action_cursor_right()

    def action_cursor_left(self) -> None:
        if self.cursor_type == "row":
            self._scroll_to_column(-1)
        else:
            super().action_cursor_left()

    def action_scroll_home_x(self) -> None:
        self.scroll_to(x=0, animate=False)

    def action_scroll_end_x(self) -> None:
        self.scroll_to(x=self.max_scroll_x, animate=False)

    def _scroll_to_column(self, step: int) -> None:
        """Scroll sideways by one whole column: the next (or previous) column's left edge at the
        table's left edge (one cell at a time, a 190-column board took a hundred presses)."""
        starts, x = [], 0
        for column in self.columns.values():
            starts.append(x)
            x += column.get_render_width(self)
        now = round(self.scroll_x)
        ahead = [s for s in starts if s > now] if step > 0 else [s for s in starts if s < now]
        target = (min(ahead) if step > 0 else max(ahead)) if ahead else (self.max_scroll_x if step > 0 else 0)
        self.scroll_to(x=min(target, self.max_scroll_x), animate=False)


def cell(value: Any, width: int | None = None) -> Text:
    """Any value as a table cell. Always a Text: DataTable reads plain str as markup, and model
    strings, stderr and task names are untrusted."""
    if value is None:
        return Text("-", style="dim")
    if isinstance(value, float):
        if math.isnan(value):
            return Text("nan", style="dim")
        return Text(f"{value:.4g}", justify="right")
    if isinstance(value, int):
        return Text(str(value), justify="right")
    text = visible(str(value).replace("\n", " "), one_line=True)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return Text(text)


def add_sized_columns(table: DataTable[Any], columns: list[tuple[str, str]], rows: list[list[Text]]) -> None:
    """Add (label, key) columns as wide as their widest cell. The table's own sizing, done on
    idle, can lose a race with a quick refill and leave columns collapsed to their headers until
    a resize: widths from the cells themselves never do."""
    for j, (label, key) in enumerate(columns):
        width = max([len(label), *(r[j].cell_len for r in rows if j < len(r))])
        table.add_column(label, key=key, width=width)


def fill(
    table: DataTable[Any], columns: tuple[str, ...], rows: list[tuple[Any, ...]], keys: list[str] | None = None
) -> None:
    """Replace the table's columns and rows, each value shown as a ``cell``; ``keys``: the rows' keys."""
    table.clear(columns=True)
    table.add_columns(*columns)
    for i, values in enumerate(rows):
        table.add_row(*(cell(v) for v in values), key=None if keys is None else keys[i])


def status_cell(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    seconds = int(max(seconds, 0))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


#: the app's sections: mode, number key, label (the section bar and the number keys)
SECTIONS = (
    ("monitor", "Monitor"),
    ("results", "Results"),
    ("leaderboard", "Board"),
    ("plots", "Plots"),
    ("reviews", "Reviews"),
)


class Confirm:
    """The one confirmation pattern for destructive actions: the same key again within 3 s."""

    WINDOW_S = 3.0

    def __init__(self) -> None:
        self._armed: tuple[str, float] | None = None

    def confirmed(
        self, node: App[Any] | Widget, what: str, key: str, clock: Callable[[], float] = time.monotonic
    ) -> bool:
        """True on the second press within the window; the first press says what a second does."""
        now = clock()
        if self._armed is not None and self._armed[0] == what and now - self._armed[1] <= self.WINDOW_S:
            self._armed = None
            return True
        self._armed = (what, now)
        node.notify(f"press {key} again within 3 s to {what}", severity="warning", markup=False, timeout=self.WINDOW_S)
        return False


class NavBar(Horizontal):
    """The sections of the app (number keys, clickable) and the keys that work everywhere."""

    DEFAULT_CSS = """
    NavBar { height: 1; background: $panel; }
    NavBar #nav-tabs { width: auto; }
    NavBar #nav-label { width: 1fr; color: $text-muted; text-align: right; text-overflow: ellipsis; text-wrap: nowrap; }
    NavBar #nav-keys { width: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        current = getattr(self.app, "current_mode", None) if getattr(self.app, "MODES", None) else None
        tabs = Content("")
        for number, (mode, label) in enumerate(SECTIONS, 1):
            style = "reverse bold" if mode == current else ""
            spec = f"{style} @click=app.section('{mode}')".strip()
            tabs += Content.from_markup(f"[{spec}] {number} {label} [/]")
        yield Static(tabs, id="nav-tabs")
        yield Static(Text(self._label()), id="nav-label", markup=False)
        yield Static(Text(" F1 help ^p palette ^q quit"), id="nav-keys", markup=False)

    def _label(self) -> str:
        return f" {getattr(self.app, 'workspace_label', '')} "

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_label)

    def _fit_label(self) -> None:
        """The workspace's name where it fits whole; nothing rather than a cut name (80 columns)."""
        label = self.query_one("#nav-label", Static)
        room = label.size.width
        label.update(Text(self._label() if len(self._label()) <= room else ""))


#: one glyph per plotted series, so a plot reads without colour (NO_COLOR, a monochrome terminal)
MARKERS = ("•", "x", "+", "o", "*", "#", "@", "%", "&", "=")
_THEME_COLOURS = ("primary", "warning", "success", "error", "accent", "secondary")


#: how a series is drawn: (glyph, RGB for plotext, hex for the legend)
Style = tuple[str, tuple[int, int, int], str]


def series_styles(app: App[Any], n: int) -> list[Style]:
    """(glyph, RGB for plotext, hex for the legend) per series, colours from the app's theme."""
    from textual.color import Color

    variables = app.theme_variables
    colours = [Color.parse(variables[k]) for k in _THEME_COLOURS if variables.get(k)] or [Color.parse("white")]
    return [(MARKERS[i % len(MARKERS)], colours[i % len(colours)].rgb, colours[i % len(colours)].hex) for i in range(n)]


def method_styles(app: App[Any], looks: dict[str, tuple[str, str]], methods: list[str]) -> list[Style]:
    """(glyph, RGB, hex) per method from its figures' look (``SuiteAggregate.looks``): the same
    colour and marker as in every figure and the report. The palette's black is drawn in the
    theme's foreground colour (on a dark theme black points would not show)."""
    from textual.color import Color

    foreground = Color.parse(app.theme_variables.get("foreground") or "white")
    out = []
    for i, m in enumerate(methods):
        glyph, colour = looks.get(m) or (MARKERS[i % len(MARKERS)], "#888888")
        c = foreground if colour.lower() == "#000000" else Color.parse(colour)
        out.append((glyph, c.rgb, c.hex))
    return out


def legend(names: list[str], styles: list[Style]) -> Text:
    """The plot's legend as a line of text beside the plot, never over its data."""
    text = Text()
    for name, (glyph, _rgb, hex_colour) in zip(names, styles):
        text.append(f"{glyph}{glyph} ", style=f"bold {hex_colour}")
        text.append(f"{name}   ")
    return text


class CheckList(SelectionList[str]):
    """A SelectionList whose boxes differ by more than colour: a chosen item's box holds X, the
    others are empty (Textual draws X in every box and tells them apart by colour only)."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        segments = list(line)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return line
        if len(segments) > 1 and segments[1].text == ToggleButton.BUTTON_INNER and option.value not in self._selected:
            segments[1] = Segment(" " * len(segments[1].text), segments[1].style)
            return Strip(segments, line.cell_length)
        return line
