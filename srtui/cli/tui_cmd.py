"""`srtui tui`, and bare `srtui` (no subcommand): open the Textual app on the workspace."""

from __future__ import annotations

from typing import Annotated

import typer

from srtui.cli.common import WorkspaceOption, require_terminal

CLI_INSTEAD = (
    "the app cannot start here; the same views from the command line: srtui status, "
    "srtui results, srtui score RULE, srtui expr MODEL, srtui review list"
)


def tui(
    workspace: WorkspaceOption = None,
    theme: Annotated[str | None, typer.Option(help="Textual theme, e.g. textual-light, nord, gruvbox.")] = None,
    ascii: Annotated[bool, typer.Option("--ascii", help="Draw expressions with ASCII only.")] = False,
) -> None:
    """Open the terminal app: monitor, results explorer, expressions, plots, leaderboards."""
    require_terminal(CLI_INSTEAD)
    from srtui.app import run_app

    code = run_app(workspace, theme=theme, ascii=True if ascii else None)
    if code:
        raise typer.Exit(code)


def default(ctx: typer.Context, workspace: WorkspaceOption = None) -> None:
    """With no subcommand, open the app (as `srtui tui`)."""
    if ctx.invoked_subcommand is None:
        from srtui.cli.lazy import before_a_command

        before_a_command()
        tui(workspace=workspace)


def register(app: typer.Typer) -> None:
    app.command()(tui)
