"""Small widgets and helpers shared by the screens."""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from engine.textsafe import visible

STATUS_STYLE = {
    "ok": "green", "error": "red", "timeout": "yellow", "cpu_timeout": "yellow", "oom": "magenta",
    "crashed": "red", "interrupted": "cyan", "lost": "cyan", "invalid_model": "red", "running": "bold blue",
    "pending": "dim",
}


class VimTable(DataTable):
    """A DataTable with vim-style keys (j/k, g/G, ctrl+d/ctrl+u)."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("home,g", "scroll_top", "Top", show=False),
        Binding("end,G", "scroll_bottom", "Bottom", show=False),
        Binding("ctrl+d", "page_down", "Page down", show=False),
        Binding("ctrl+u", "page_up", "Page up", show=False),
    ]


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


def status_cell(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    seconds = int(max(seconds, 0))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
