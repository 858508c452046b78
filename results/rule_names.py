"""The names of the scoring rules, known without importing them.

A suite's ``scoring`` is checked when the run is planned (``srtui.runs.planning_checks.check_rule``), and
``srtui run --dry-run`` plans without pandas (issue 56): importing ``srtui.results.scoring`` to look the
name up cost pandas' start. A name not listed here is looked up in ``srtui.results.scoring.RULES``
itself (a rule added there is still found, only slower); ``tests/unit/test_lazy_names.py`` keeps
the two lists equal.
"""

from __future__ import annotations

#: every rule ``srtui.results.scoring`` registers, in its order
RULE_NAMES = (
    "srbench2021",
    "srbench-groundtruth",
    "srbench2022-qualification",
    "srbench2022-realworld",
    "srbench2022-synthetic",
    "srbench2025",
    "friedman",
    "wilcoxon",
    "sensitivity",
)
