"""The time limit's path, followed from the run request to its enforcement and to the method's fit:
one type all the way (``Limits``, carried by ``JobSpec``), no dict or float forms on the way, and
the fit budget computed once (``Limits.fit_budget``) and read by the adapter as a ``FitBudget``.

The path (#35: at most 6 files): ``srtui/cli/run_cmd.py`` (--time-limit, a float, as the
request's ``time_s``) -> ``runs/planning.py`` (``Limits.over``: ``Limits``, in the ``JobSpec``) -> a
backend (``engine/backends/local.py``, or Dask's) -> ``engine/process/supervise.py`` (enforced;
``job.json`` and the environment, both from ``Limits.crossing``, are the one crossing into the
job) -> ``engine/process/job_worker.py`` (``FitBudget`` from ``Limits.fit_budget``) -> the
adapter (``engine/methods/``).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from conftest import results_json, srtui

from srtui.engine.spec import JobSpec, Limits

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 7.0
OWN = tuple(str(ROOT / p) + "/" for p in ("engine", "runs", "results", "tasks", "srtui"))


def _forms(value: Any, name: str) -> str | None:
    """How ``value`` holds the time limit, if it does: as the one type, or another form (a call's
    arguments: the profiler sees each function as it is called)."""
    if isinstance(value, Limits):
        return "Limits" if value.time_s == LIMIT else None
    if isinstance(getattr(value, "spec", None), JobSpec):  # a JobPayload, a PlannedJob
        value = value.spec
    if isinstance(value, JobSpec):
        return "Limits" if value.limits.time_s == LIMIT else None
    if isinstance(value, dict) and value.get("time_s") == LIMIT:
        return "dict"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == LIMIT:
        return "float" if any(word in name for word in ("time", "limit", "budget")) else None
    return None


def test_the_limit_travels_as_one_type_to_the_launcher(tmp_path: Path) -> None:
    from srtui.engine.workspace import Workspace
    from srtui.runs.execution import execute
    from srtui.runs.options import RunRequest
    from srtui.runs.planning import plan_run

    seen: dict[str, set[str]] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or not frame.f_code.co_filename.startswith(OWN):
            return
        for name, value in frame.f_locals.items():
            form = _forms(value, name)
            if form:
                rel = str(Path(frame.f_code.co_filename).resolve().relative_to(ROOT))  # a room through its link
                seen.setdefault(form, set()).add(f"{rel}:{frame.f_code.co_name}")

    ws = Workspace(tmp_path / "ws").ensure()
    req = RunRequest("smoke", methods=["probe-noop"], tasks=["smoke-linear"], seeds=1, time_s=LIMIT, jobs=1)
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        plan = plan_run(ws, req)
        result = execute(plan, req)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert result.state.counts == {"ok": 1}
    # the request's float becomes Limits in one function (runs/planning.py's, by ``Limits.over``);
    # nowhere else another form
    converted = seen.get("float", set()) | seen.get("dict", set())
    assert converted <= {"runs/planning.py:_limits", "engine/spec.py:over"}, seen
    enforced = "engine/process/supervise.py:run_job"
    assert enforced in seen["Limits"], seen["Limits"]  # enforced from Limits


@pytest.mark.parametrize("launcher", ["exec", "fork"])
def test_the_adapter_reads_the_budget_computed_once(workspace: Path, launcher: str) -> None:
    args = ("--methods", "probe-noop", "--tasks", "smoke-linear", "--seeds", "1", "--time-limit", str(LIMIT))
    srtui("run", "smoke", *args, "--launcher", launcher, "--workspace", str(workspace), check=True)
    [row] = results_json(workspace)
    notes = row["method_notes"] if isinstance(row["method_notes"], dict) else json.loads(row["method_notes"])
    assert notes["budget_type"] == "FitBudget"
    assert notes["budget_nominal"] == pytest.approx(Limits(time_s=LIMIT).fit_budget)
