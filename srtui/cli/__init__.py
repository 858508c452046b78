"""The `srtui` command line. Each command group lives in its own module; this one wires them.

Imports stay lazy inside commands so `srtui status` answers fast on a large workspace.
"""

from __future__ import annotations

import sys

import typer

from srtui.cli.common import CliError

app = typer.Typer(
    name="srtui",
    help="Benchmark symbolic regression: run suites under hard limits, score, explore, review.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # command groups, each in its own module; imported here, their own imports stay lazy
    from srtui.cli import (
        methods_cmd,
        review_cmd,
        run_cmd,
        score_cmd,
        tasks_cmd,
        tui_cmd,
    )

    for module in (run_cmd, tasks_cmd, methods_cmd, score_cmd, review_cmd, tui_cmd):
        module.register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one clear line and a non-zero exit for every expected failure."""
    try:
        app(args=argv, prog_name="srtui", standalone_mode=True)
    except CliError as exc:
        print(f"srtui: error: {exc}", file=sys.stderr)
        sys.exit(2)
