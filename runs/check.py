"""`srtui methods check`: one tiny fit of a method through the real engine, as a run does it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from srtui.engine.methods import registry
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store
from srtui.runs.options import RunRequest
from srtui.runs.run import execute, plan_run

CHECK_SUITE = "smoke"
CHECK_TASK = "smoke-interaction"


def check_folder_name(name: str) -> str:
    """The folder a kept check's workspace gets under ``WS/checks/``: the method's name (a folder's
    own name for a method folder), made a safe file name."""
    if name.startswith(registry.SRBENCH_PREFIX):
        name = Path(name[len(registry.SRBENCH_PREFIX) :]).resolve().name
    elif Path(name).is_dir():
        name = Path(name).resolve().name
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "method"


def check_method(name: str, workspace: Workspace, time_s: float, env: str | None = None) -> list[dict[str, Any]]:
    """Run NAME (a method, ``srbench:FOLDER``, a folder or a 2021 method file) on the check task in ``workspace``,
    a folder or file in the named environment ``env`` if given (as ``srtui run --env``); the
    stored rows of its jobs there, the newest last."""
    from srtui.engine.methods.srbench_dir import method_name, method_source

    method_dirs: list[Path] = []
    if name.startswith(registry.SRBENCH_PREFIX):
        folder = Path(name[len(registry.SRBENCH_PREFIX) :])
        method_dirs, name = [folder], method_name(folder)
    elif Path(name).is_dir() or method_source(Path(name)) is not None:  # a folder, or a 2021 NAME.py
        method_dirs, name = [Path(name)], method_name(Path(name))
    # the check shows the job's own figures (status, R2, fidelity, model): no expression-metrics
    # pass after it, whose sympy and pool cost more than a built-in method's fit (issue 56)
    req = RunRequest(
        suite=CHECK_SUITE,
        methods=[name],
        tasks=[CHECK_TASK],
        time_s=time_s,
        jobs=1,
        method_dirs=method_dirs,
        metrics=False,
        env=env,
    )
    workspace.ensure()
    execute(plan_run(workspace, req), req)
    store = Store(workspace, readonly=True)
    try:
        return [r for r in store.jobs(CHECK_SUITE) if r["method"] == name]
    finally:
        store.close()
