"""Names srtui knows without importing what they name (issue 56: commands answer at interpreter
speed), kept equal to the registries they stand for."""

from __future__ import annotations

from srtui.results.rule_names import RULE_NAMES
from srtui.results.scoring import RULES


def test_the_rule_names_are_the_registered_rules() -> None:
    assert list(RULE_NAMES) == list(RULES)


def test_the_command_table_is_what_the_commands_docstrings_say() -> None:
    from srtui.cli.lazy import TABLE, table_text

    stale = "stale: run `python -m srtui.cli.write_command_table` and commit the table"
    assert TABLE.read_text() == table_text(), stale


def test_every_registered_command_is_listed_in_its_order() -> None:
    from srtui.cli.command_table import COMMANDS
    from srtui.cli.lazy import MODULES, commands_of

    assert list(commands_of(*MODULES)) == list(COMMANDS)
