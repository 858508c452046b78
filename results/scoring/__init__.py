"""The scoring room: rules (``srtui.results.scoring.rules``), statistics (``stats``), the runs table
(``tables``), SRBench's published results (``published``).

Scoring rules: named, documented functions of a runs DataFrame (see ``srtui.results.scoring.tables``).

Each module of ``srtui.results.scoring.rules`` declares its rules with ``@rule`` (``srtui.results.scoring.base``)
and is imported here, so adding a rule is adding one module there. ``score(name, runs, **options)`` applies
one; ``RULES`` lists them with their options. Rules of a published release take
``profile=reference`` (the publication's code, the default) or ``profile=corrected``.
"""

from __future__ import annotations

import importlib
from typing import Any

import pandas as pd

from srtui.engine.errors import did_you_mean
from srtui.engine.extensions import import_every_module
from srtui.results.scoring import rules as _rules
from srtui.results.scoring.base import PROFILES, RULES, Rule, Score, ScoreError
from srtui.results.scoring.coverage import add_coverage
from srtui.results.scoring.mixed import check_one_protocol, footnote_protocols, protocols_per_method
from srtui.results.scoring.rules.srbench2022 import load_expert_scores

import_every_module(_rules)
importlib.import_module("srtui.results.scoring.stats")  # friedman, wilcoxon, sensitivity


def get_rule(name: str) -> Rule:
    if name not in RULES:
        raise ScoreError(f"unknown scoring rule {name!r} (rules: {', '.join(RULES)}){did_you_mean(name, RULES)}")
    return RULES[name]


def _coerce(rule: Rule, options: dict[str, Any]) -> dict[str, Any]:
    """CLI options arrive as strings: give them the type of the default."""
    out = {}
    for key, value in options.items():
        default = rule.options.get(key, (None, None))[0]
        if isinstance(value, str) and isinstance(default, (int, float)) and not isinstance(default, bool):
            try:
                value = type(default)(value)
            except ValueError:
                raise ScoreError(f"option {key}={value!r} of rule {rule.name!r} must be a number") from None
        out[key] = value
    return out


def score(
    name: str, runs: pd.DataFrame, trust: pd.DataFrame | None = None, allow_mixed: bool = False, **options: Any
) -> Score:
    """Apply the rule ``name`` to ``runs``; ``trust`` (task, method, trust) feeds the rules that take
    expert ratings. Jobs run under different protocols (``srtui.results.scoring.mixed``) are refused in
    one leaderboard unless ``allow_mixed``; then every row names its protocol in a footnote."""
    rule = get_rule(name)
    opts = rule.resolve(_coerce(rule, options))
    keys = protocols_per_method(runs)
    check_one_protocol(keys, allow_mixed)
    result = rule.fn(runs, trust=trust, **opts) if rule.needs_trust else rule.fn(runs, **opts)
    return footnote_protocols(add_coverage(result, runs, result.missing_as_failures), keys)


__all__ = ["PROFILES", "RULES", "Rule", "Score", "ScoreError", "get_rule", "load_expert_scores", "score"]
