"""`srtui methods check`: one tiny fit of a method through the real engine, as a run does it.

The check is one job, so its fork server is a kept one (srtui.engine.process.kept_servers): the
next check of the same method forks its job from it at once. What that job waits for is started
first (``start_early``): its method's fork server, the model checkers' server and the
interpreter's versions, each importing in a process of its own while the driver imports the run
machinery and plans (issue 56). They
are the very servers and answers the run then uses (srtui.engine.process.launch's pool, keyed by
family and environment): the job is planned, sealed, limited and recorded as any run's job.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.methods import registry

if TYPE_CHECKING:  # the run machinery is imported once the early starts are under way
    from collections.abc import Callable

    from srtui.engine.workspace import Workspace

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


def start_early(name: str, env: str | None = None) -> bool:
    """Start, in the background, what the check's job of built-in method ``name`` waits for: its
    fork server (when the check's suite forks it: ``auto`` and a fork-safe method), the model
    checkers and this interpreter's versions for the job's notes. Nothing for a folder, a file or
    ``--env`` (their servers are started by the plan, in their own interpreters). True if a fork
    server was started; an unknown name starts nothing (the plan says why).

    A method installed with srtui is fork-safe (``test_check_early`` holds each to it), so its
    server starts from the declarations alone, before this driver imports numpy and the adapter;
    an optional method's adapter is loaded first to ask it."""
    found = next((d for d in registry.declared() if d.name == name), None)
    if env is not None or found is None:
        return False
    from srtui.engine.private import private_dir
    from srtui.engine.process.launch import keep_servers, warm

    keep_servers()  # its server is a kept one: the next check forks from it warm
    from srtui.engine.process.launch_choice import DEFAULT_LAUNCHER, choose

    private_dir()  # checked first, as the plan does: a folder of ours left open starts nothing
    try:
        fork_safe = not found.optional or bool(registry.load(name).fork_safe)
    except registry.MethodError:
        fork_safe = False
    forked = choose(DEFAULT_LAUNCHER, fork_safe) == "fork"
    if forked:  # first: the job waits for it the longest
        warm([name], lean=True)  # the check is one job (plan_run starts the same lean server)
    from srtui.engine.outcome_check import start_checkers
    from srtui.engine.process.measure import prefetch_versions

    start_checkers()
    prefetch_versions(sys.executable)
    return forked


def check_method(
    name: str,
    workspace: Workspace,
    time_s: float,
    env: str | None = None,
    step: Callable[[str, int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run NAME (a method, ``srbench:FOLDER``, a folder or a 2021 method file) on the check task in ``workspace``,
    a folder or file in the named environment ``env`` if given (as ``srtui run --env``); the
    stored rows of its jobs there, the newest last. ``step(what, i, n)`` is told each step as it
    begins (the command's progress on stderr)."""
    from srtui.engine.methods.srbench_dir import method_name, method_source
    from srtui.engine.process.launch import keep_servers
    from srtui.results.store.store import Store
    from srtui.runs.execution import execute
    from srtui.runs.options import RunRequest
    from srtui.runs.planning import plan_run

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
    keep_servers()  # a folder's or an environment's server too (srtui.engine.process.kept_servers)
    if step is not None:
        step("planning", 1, 2)
    plan = plan_run(workspace, req)
    if step is not None:
        step(f"fitting {name} on {CHECK_TASK}, sealed", 2, 2)
    execute(plan, req)
    store = Store(workspace, readonly=True)
    try:
        return [r for r in store.jobs(CHECK_SUITE) if r["method"] == name]
    finally:
        store.close()
