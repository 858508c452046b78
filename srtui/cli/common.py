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


def printable(text: str) -> str:
    """Untrusted text made safe for a terminal: control and other non-printable characters
    (escape sequences included) are shown escaped, never sent as they are."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
