"""Scoring rules: named, documented functions of a runs DataFrame (see ``results.tables``).

``score(name, runs, **options)`` applies one; ``RULES`` lists them with their options. Every rule
shares the conventions of ``results.scoring.base`` (dense ranks, higher is better; failures rank
worst; ties share a rank; median over runs unless ``agg=mean``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from results import stats
from results.scoring import others, srbench2022
from results.scoring.base import Rule, Score, ScoreError
from results.scoring.srbench2022 import load_expert_scores

AGG = ("median", "mean")

RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("srbench2022-qualification", srbench2022.qualification.__doc__, srbench2022.qualification,
         {"agg": ("median", AGG), "baseline": ("linear", None)}),
    Rule("srbench2022-synthetic", srbench2022.synthetic.__doc__, srbench2022.synthetic, {"agg": ("median", AGG)}),
    Rule("srbench2022-realworld", srbench2022.realworld.__doc__, srbench2022.realworld,
         {"representative": ("median", ("median", "best"))}),
    Rule("srbench2021", others.srbench2021.__doc__, others.srbench2021,
         {"agg": ("median", AGG), "size": ("size_simplified", ("size", "size_simplified"))}),
    Rule("srbench2025", others.srbench2025.__doc__, others.srbench2025,
         {"size": ("size", ("size", "size_simplified")), "grid": (11, None)}),
    Rule("friedman", stats.friedman.__doc__, stats.friedman, {"metric": ("r2_test", None), "agg": ("median", AGG), "alpha": (0.05, None)}),
    Rule("wilcoxon", stats.wilcoxon.__doc__, stats.wilcoxon, {"metric": ("r2_test", None), "agg": ("median", AGG), "alpha": (0.05, None)}),
    Rule("sensitivity", stats.sensitivity.__doc__, stats.sensitivity,
         {"metrics": (",".join(stats.DEFAULT_METRICS), None), "agg": ("median", AGG)}),
)}


def get_rule(name: str) -> Rule:
    if name not in RULES:
        raise ScoreError(f"unknown scoring rule {name!r} (rules: {', '.join(RULES)})")
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


def score(name: str, runs: pd.DataFrame, trust: pd.DataFrame | None = None, **options: Any) -> Score:
    """Apply the rule ``name`` to ``runs``; ``trust`` (task, method, trust) feeds the real-world rule."""
    rule = get_rule(name)
    opts = rule.resolve(_coerce(rule, options))
    if name == "srbench2022-realworld":
        return rule.fn(runs, trust=trust, **opts)
    return rule.fn(runs, **opts)


__all__ = ["RULES", "Rule", "Score", "ScoreError", "get_rule", "score", "load_expert_scores"]
