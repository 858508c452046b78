"""The root command group, whose commands load when they run (issue 56).

Every command module imports what its commands need (the run machinery, the store, the scoring
rules...): importing all of them for `srtui --help` or a misspelt command cost 3.5x the start of
typer and rich. The root group lists each command from ``command_table.COMMANDS`` (its name, its
module, its one-line summary) and imports a module only when one of its commands is resolved to
run (``srtui run ...``, ``srtui run --help``). The summaries are declared once, in the commands'
own docstrings (and the groups' ``help=``): ``command_table.py`` is generated from them by
``python -m srtui.cli.write_command_table`` (``tests/unit/test_lazy_names.py`` says when it is stale).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand

from srtui.cli.common import CommandGroup

#: the command modules, in the order their commands are listed; each has ``register(app)``
MODULES = (
    "srtui.cli.run_cmd",
    "srtui.cli.score_cmd",
    "srtui.cli.plot_cmd",
    "srtui.cli.tui_cmd",
    "srtui.cli.tasks_cmd",
    "srtui.cli.methods_cmd",
    "srtui.cli.env_cmd",
    "srtui.cli.review_cmd",
)
TABLE = Path(__file__).with_name("command_table.py")


class Listed(TyperCommand):
    """A command's line in `srtui --help`: its name and summary, nothing imported. Resolving the
    name to run it replaces it by the real command (``LazyGroup.resolve_command``)."""


class LazyGroup(CommandGroup):
    """The root group: ``Listed`` stand-ins until a command is resolved, then the real one."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from srtui.cli.command_table import COMMANDS

        for name, (_, summary) in COMMANDS.items():
            self.commands.setdefault(name, Listed(name=name, help=summary))

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and isinstance(self.commands.get(args[0]), Listed):
            self.load(args[0])
        found = super().resolve_command(ctx, args)
        before_a_command()
        return found

    def load(self, name: str) -> None:
        """Import ``name``'s module and put its real commands in place of their stand-ins."""
        from srtui.cli.command_table import COMMANDS

        for command_name, command in commands_of(COMMANDS[name][0]).items():
            if isinstance(self.commands.get(command_name), Listed):
                self.commands[command_name] = command


def before_a_command() -> None:
    """What every command needs before it runs, and `srtui --help` or a misspelt name does not:
    each interpreter it starts gets -P (no cwd first on its sys.path; ``srtui.engine.private``)."""
    from srtui.engine.private import isolate_interpreters

    isolate_interpreters()


def commands_of(*modules: str) -> dict[str, Any]:
    """The click commands (and groups) the ``modules`` register, by name, in their order."""
    app = typer.Typer()
    for module in modules:
        importlib.import_module(module).register(app)
    joined_summaries(app)
    return dict(typer.main.get_group(app).commands)


def joined_summaries(group: typer.Typer) -> None:
    """Each command's first paragraph as one line of text: typer's rich help keeps a docstring's
    line breaks, which would break `srtui --help`'s descriptions mid-sentence."""
    import inspect

    for info in group.registered_commands:
        doc = info.help or inspect.getdoc(info.callback) or ""
        first, sep, rest = doc.partition("\n\n")
        info.help = " ".join(first.split()) + sep + rest
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            joined_summaries(sub.typer_instance)


def table_text() -> str:
    """``command_table.py`` as the command modules' docstrings make it now."""
    import json

    lines = [
        "# ruff: noqa: E501",
        '"""Every command of `srtui`: its module and one-line summary, for `srtui --help` (``srtui.cli.lazy``).',
        "",
        "Generated from the commands' docstrings by ``python -m srtui.cli.write_command_table``: edit those,",
        "then run it.",
        '"""',
        "",
        "COMMANDS: dict[str, tuple[str, str]] = {",
    ]
    for module in MODULES:
        for name, command in commands_of(module).items():
            summary = (command.help or "").split("\n\n")[0]
            lines += [
                f"    {json.dumps(name)}: (",
                f"        {json.dumps(module)},",
                f"        {json.dumps(summary)},",
                "    ),",
            ]
    lines += ["}"]
    return "\n".join([*lines, ""])


def write_table() -> None:
    TABLE.write_text(table_text())
    print(f"wrote {TABLE}", file=sys.stderr)
