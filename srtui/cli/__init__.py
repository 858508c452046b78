"""The `srtui` command line. Each command group lives in its own module; this one wires them.

Imports stay lazy inside commands so `srtui status` answers fast on a large workspace.
"""

from __future__ import annotations

import sys

import typer

from srtui import warnings_policy
from srtui.cli.common import CommandGroup, plain_help_types

warnings_policy.install()  # before any command imports a dependency that warns about itself

app = typer.Typer(
    cls=CommandGroup,
    name="srtui",
    help="Benchmark symbolic regression: run suites under hard limits, score, explore, review.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # command groups, each in its own module; imported here, their own imports stay lazy
    from srtui.cli import (
        env_cmd,
        methods_cmd,
        plot_cmd,
        review_cmd,
        run_cmd,
        score_cmd,
        tasks_cmd,
        tui_cmd,
    )

    for module in (run_cmd, tasks_cmd, methods_cmd, env_cmd, score_cmd, plot_cmd, review_cmd, tui_cmd):
        module.register(app)
    _joined_summaries(app)


def _joined_summaries(group: typer.Typer) -> None:
    """Each command's first paragraph as one line of text: typer's rich help keeps a docstring's
    line breaks, which would break `srtui --help`'s descriptions mid-sentence."""
    import inspect

    for info in group.registered_commands:
        doc = info.help or inspect.getdoc(info.callback) or ""
        first, sep, rest = doc.partition("\n\n")
        info.help = " ".join(first.split()) + sep + rest
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _joined_summaries(sub.typer_instance)


plain_help_types()
_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one clear line and a non-zero exit for every expected failure.

    Every command lets an engine.errors.SrtuiError through to here, where it is printed the
    same way (``srtui: error: MESSAGE``) with its exit code (2; 130 for a run interrupted
    before it began). stdout and stderr show control characters visibly (engine.textsafe)."""
    import sqlite3

    from engine.errors import SrtuiError
    from engine.private import isolate_interpreters
    from engine.textsafe import SafeStream
    from results.store.guard import why_stopped

    isolate_interpreters()  # every interpreter this run starts: -P (no cwd first on its sys.path)
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        app(args=optional_values(sys.argv[1:] if argv is None else argv), prog_name="srtui", standalone_mode=True)
    except SrtuiError as exc:
        _one_line(exc.one_line(), exc.exit_code)
    except sqlite3.DatabaseError as exc:  # corrupted, truncated, not a database, disk I/O
        stopped = why_stopped(exc)  # or a statement results/store/guard.py stopped (Ctrl-C, its budget)
        if stopped is not None:
            _one_line(stopped, 130)
        _one_line(f"the workspace's srtui.db is not a usable srtui database: {exc}")
    except OSError as exc:  # read-only or full file system, permissions
        where = f": {str(exc.filename)[:300]}" if exc.filename else ""  # a crafted name may be megabytes
        _one_line(f"{exc.strerror or exc}{where}")


#: options whose value may be left out (typer has no optional values): the value they then take
OPTIONAL_VALUES = {"--published": "default"}


def optional_values(args: list[str]) -> list[str]:
    """``--published`` alone (last, or before another option) means ``--published default``."""
    out = []
    for i, arg in enumerate(args):
        out.append(arg)
        if arg in OPTIONAL_VALUES and (i + 1 == len(args) or args[i + 1].startswith("-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


#: an error line's ceiling: whatever bad value a message quotes, the line stays readable
ERROR_MAX_CHARS = 1000


def _one_line(message: str, code: int = 2) -> None:
    line = " ".join(message.split())
    if len(line) > ERROR_MAX_CHARS:
        line = line[: ERROR_MAX_CHARS - 3] + "..."
    print(f"srtui: error: {line}", file=sys.stderr)
    sys.exit(code)
