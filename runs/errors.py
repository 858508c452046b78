"""The run's one error: a bad run request, or a run that cannot go on.

Raised by the planning (srtui.runs.planning and its checks) and the driving
(srtui.runs.execution) alike; a module of its own so both read the one declaration.
"""

from __future__ import annotations

from srtui.engine.errors import SrtuiError


class RunError(SrtuiError):
    """Bad run request, or a run that cannot go on; one line for the CLI."""


class RunInterrupted(RunError):
    """Ctrl-C before any job was claimed (while a cluster started): exit 130, nothing stored."""

    exit_code = 130
