"""Options and error handling shared by the CLI commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.text import Text


class CliError(Exception):
    """An expected failure (bad input, missing data): printed as one line, exit code 2."""


WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace directory (default: $SRTUI_WORKSPACE, else ./srtui-workspace).",
        show_default=False,
    ),
]

RAW_HELP = (
    "CSV: write text cells that start with = + - @ or a tab as they are (by default they get a leading ' "
    "so a spreadsheet does not run them as formulas). Control characters stay escaped; JSON is exact."
)


def fail(message: str) -> None:
    """Raise the one-line error the entry point prints."""
    raise CliError(message)


def require_terminal(instead: str) -> None:
    """Refuse a full-screen app without a terminal: one line, before anything is opened."""
    import sys

    from engine.textsafe import raw_stream
    from srtui.app.terminal import terminal_problem

    # the CLI's SafeStream says "no terminal" to keep styled output plain: ask the real stream
    problem = terminal_problem(sys.stdin, raw_stream(sys.stdout))
    if problem:
        fail(f"{problem}: {instead}")


MAX_OPERATION_TIMEOUT_S = 86400.0


def check_timeout(value: float, option: str = "--timeout") -> float:
    """A per-operation timeout: finite, positive, at most a day (a thread/alarm would overflow)."""
    import math

    if not math.isfinite(value) or value <= 0:
        fail(f"{option} must be a positive number of seconds, got {value!r}")
    if value > MAX_OPERATION_TIMEOUT_S:
        fail(f"{option} must be at most {MAX_OPERATION_TIMEOUT_S:g} s, got {value:g}")
    return value


def console(**kwargs):
    """A rich Console on the real stdout (rich writes its own escape codes; the entry point's
    SafeStream would show them as text). Put untrusted strings in through ``cell``."""
    import sys

    from rich.console import Console

    from engine.textsafe import raw_stream

    return Console(file=raw_stream(sys.stdout), **kwargs)


def cell(text: object) -> Text:
    """An untrusted string as a rich Text: no markup (``[link=...]`` would emit OSC 8), control
    characters shown visibly."""
    from rich.text import Text

    from engine.textsafe import visible

    return Text(visible("" if text is None else text, one_line=True))
