"""Colours shared by the CLI's live panel and the app (no Textual here: the CLI imports it)."""

from __future__ import annotations

#: a job status -> its rich style, the same in `srtui run`'s panel and every app screen
STATUS_STYLE = {
    "ok": "green",
    "error": "red",
    "timeout": "yellow",
    "cpu_timeout": "yellow",
    "oom": "magenta",
    "disk": "magenta",
    "crashed": "red",
    "interrupted": "cyan",
    "lost": "cyan",
    "invalid_model": "red",
    "running": "bold blue",
    "pending": "dim",
}
