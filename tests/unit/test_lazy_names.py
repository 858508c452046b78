"""Names srtui knows without importing what they name (issue 56: commands answer at interpreter
speed), kept equal to the registries they stand for."""

from __future__ import annotations

from results.rule_names import RULE_NAMES
from results.scoring import RULES


def test_the_rule_names_are_the_registered_rules() -> None:
    assert list(RULE_NAMES) == list(RULES)
