"""A run's two entry points at their first address: ``plan_run`` and ``execute``.

Planning a request into a ``RunPlan`` is srtui.runs.planning's (its checks
srtui.runs.planning_checks', its methods' steps srtui.runs.planning_methods'); driving the plan
is srtui.runs.execution's. Kept for ``srtui methods check`` (runs/check.py), which imports both
from here; other code imports them from their modules.
"""

from __future__ import annotations

from srtui.runs.execution import execute
from srtui.runs.planning import plan_run

__all__ = ["execute", "plan_run"]
