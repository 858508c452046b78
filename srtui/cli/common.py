"""Options and error handling shared by the CLI commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


class CliError(Exception):
    """An expected failure (bad input, missing data): printed as one line, exit code 2."""


WorkspaceOption = Annotated[
    Optional[Path],
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace directory (default: $SRTUI_WORKSPACE, else ./srtui-workspace).",
        show_default=False,
    ),
]


def fail(message: str) -> None:
    """Raise the one-line error the entry point prints."""
    raise CliError(message)


def require_terminal(instead: str) -> None:
    """Refuse a full-screen app without a terminal: one line, before anything is opened."""
    from srtui.app.terminal import terminal_problem

    problem = terminal_problem()
    if problem:
        fail(f"{problem}: {instead}")
