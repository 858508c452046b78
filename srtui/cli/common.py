"""Options and error handling shared by the CLI commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from srtui.engine.errors import SrtuiError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


class CliError(SrtuiError):
    """An expected failure (bad input, missing data): printed as one line, exit code 2."""


def _with_root_workspace(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Path | None:
    """A command's -w, else the root one (`srtui -w DIR tasks add ...`); two different ones are
    refused."""
    root = ctx.find_root()
    given = root.params.get("workspace") if root is not ctx else None
    if value is not None and given is not None and Path(value).resolve() != Path(given).resolve():
        raise CliError(f"two workspaces given: -w {given} before the command and -w {value} after it")
    return value if value is not None else given


WORKSPACE_HELP = "Workspace directory (default: $SRTUI_WORKSPACE, else ./srtui-workspace)."


def workspace_option(help_text: str = WORKSPACE_HELP) -> Any:
    """The -w/--workspace option of a command; it takes the root `srtui -w DIR` when not given."""
    return typer.Option("--workspace", "-w", help=help_text, show_default=False, callback=_with_root_workspace)


WorkspaceOption = Annotated[Path | None, workspace_option()]

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Folder holding data files: srtui's layout (as `srtui tasks fetch --to` writes it), a PMLB "
        "checkout or a pmlb cache, read in place (else $SRTUI_DATA_DIR, else the workspace cache).",
        show_default=False,
    ),
]


class CommandGroup(TyperGroup):
    """A command group that refuses the root -w for a command that has no workspace, instead
    of ignoring it (every group of the CLI is one of these)."""

    # ctx is click's Context, which typer vendors in some versions: typed Any to fit both
    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        root = ctx.find_root()
        if (
            command is not None
            and not isinstance(command, TyperGroup)
            and root.params.get("workspace") is not None
            and not any(p.name == "workspace" for p in command.params)
        ):
            path = " ".join([*ctx.command_path.split()[1:], name or ""])
            raise CliError(f"-w/--workspace does not apply to `srtui {path}`: it uses no workspace")
        return name, command, rest


class ExpressionCommand(TyperCommand):
    """A command whose argument is a model string, which may start with ``-``
    (``srtui expr "-4.39e-07 + x1"``): a token with one leading ``-`` that is no option of the
    command (nor an option's value) is read as the argument, not refused as an unknown option."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, dash_led_arguments(args, self.params))


def dash_led_arguments(args: list[str], params: list[Any]) -> list[str]:
    """``args`` with each ``-``-led token that is no option (nor an option's value) moved behind
    ``--``, where click reads it as an argument; unchanged when ``--`` is there already."""
    if "--" in args:
        return args
    names = {name for p in params if p.param_type_name == "option" for name in (*p.opts, *p.secondary_opts)}
    takes_value = {
        name for p in params if p.param_type_name == "option" and not p.is_flag and not p.count for name in p.opts
    }
    names |= {"--help", "-h"}
    kept: list[str] = []
    moved: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if token in takes_value:
            kept += [token, next(tokens, "")] if token else [token]
        elif token.startswith("-") and not token.startswith("--") and token not in names and len(token) > 1:
            moved.append(token)
        else:
            kept.append(token)
    return [*kept, "--", *moved] if moved else args


RAW_HELP = (
    "CSV: write text cells that start with = + @ a tab or - and no digit as they are (by default they get a "
    "leading ' so a spreadsheet does not run them as formulas). Control characters stay escaped; JSON is exact."
)


def leave(code: int = 0) -> NoReturn:
    """End the command now as the interpreter ends it, less its teardown of the imported modules:
    the output flushed, non-daemon threads joined, every exit handler run (the fork servers waited
    for, multiprocessing's folder removed), then ``os._exit``. The teardown (numpy, sqlite, the
    engine's modules) was 0.1-0.2 s of a loaded machine's wall time after `methods check` had
    answered (issue 56); no file or process of srtui needs it."""
    import atexit
    import os
    import sys
    import threading

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    os._exit(code)


def fail(message: str) -> NoReturn:
    """Raise the one-line error the entry point prints."""
    raise CliError(message)


FORCE_HELP = "Build it again even when it is built from this spec (in place: runs using it fail meanwhile)."


def already_built(name: str, env: Any, force: bool, dry_run: bool) -> bool:
    """Say so and return True when ``env`` is built from its current spec and not forced:
    rebuilding it in place would only break the runs that use it (another srtui's, say)."""
    if force or dry_run or not env.built_as_declared():
        return False
    print(f"{name}: already built from this spec at {env.folder}; nothing to do (--force builds it again)")
    return True


def run_steps(steps: list[list[str]], what: str, dry_run: bool) -> None:
    """Print and run install steps one after another (``srtui env create``, ``srtui methods
    install``); ``dry_run`` prints them only. A failing step ends the command: one line."""
    import subprocess

    for step in steps:
        print("$ " + " ".join(step))
        if dry_run:
            continue
        rc = subprocess.call(step)
        if rc != 0:
            fail(f"{what}: `{' '.join(step)}` exited with code {rc}")


def require_terminal(instead: str) -> None:
    """Refuse a full-screen app without a terminal: one line, before anything is opened."""
    import sys

    from srtui.app.terminal import terminal_problem
    from srtui.engine.textsafe import raw_stream

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


def console(**kwargs: Any) -> Console:
    """A rich Console on the real stdout (rich writes its own escape codes; the entry point's
    SafeStream would show them as text). Put untrusted strings in through ``cell``."""
    import sys

    from rich.console import Console

    from srtui.engine.textsafe import raw_stream

    return Console(file=raw_stream(sys.stdout), **kwargs)


def cell(text: object) -> Text:
    """An untrusted string as a rich Text: no markup (``[link=...]`` would emit OSC 8), control
    characters shown visibly."""
    from rich.text import Text

    from srtui.engine.textsafe import visible

    return Text(visible("" if text is None else text, one_line=True))


def _help_type(param: Any, ctx: Any) -> str | None:
    """What `--help` shows for a parameter's value: its metavar, else a plain word (FLOAT, PATH,
    PATH... for a repeatable one); nothing for a flag or an argument (its name says it). typer's
    own is the Python annotation (`<bool>`, `<list[Path]>`), which tells a user little."""
    if param.param_type_name == "argument":
        return None
    if param.metavar is not None:
        return str(param.metavar) or None
    label = str(param.display_type(ctx)).strip("<>")
    if getattr(param, "is_flag", False) or label == "bool":
        return None
    many = label.startswith("list[") and label.endswith("]")
    label = label[5:-1] if many else label
    return {"str": "TEXT", "int": "INTEGER"}.get(label, label.upper()) + ("..." if many else "")


def plain_help_types() -> None:
    """Make every command's --help show `_help_type` (called once, where the app is built)."""
    from typer.core import TyperArgument, TyperOption

    TyperOption.display_type_rich = _help_type  # type: ignore[method-assign,assignment]
    TyperArgument.display_type_rich = _help_type  # type: ignore[method-assign,assignment]
