"""The methods' side of planning a run: which methods, how their jobs start and what they may do.

The ``--method-dir`` folders and the methods loaded (available or refused), their named
environments and interpreters, the folders' run options, the launcher of each (fork or exec,
measured for the folders ``auto`` forks), the isolation and network of their jobs, the grids only a
job can read, and the fork servers warmed while the driver goes on planning. Called by
srtui.runs.planning's ``plan_run``; each raises ``RunError`` with one line for the CLI.
"""

from __future__ import annotations

import sys
from typing import Any

from srtui.engine.methods import registry
from srtui.engine.methods.base import Method
from srtui.engine.methods.srbench_eval import OPTIONS_KEY
from srtui.engine.names import quoted
from srtui.engine.spec import Limits
from srtui.runs.errors import RunError
from srtui.runs.options import SRBENCH_SCALING, RunRequest
from srtui.runs.tuning import TuningOptions
from srtui.tasks.suites import Suite


def folder_refs(req: RunRequest) -> tuple[dict[str, str], list[str]]:
    """Method name -> ref of each --method-dir folder, and notes on folders not run.

    A folder named like a built-in method replaces it only when the run names it with
    --methods; otherwise the built-in keeps the name and the folder is left out (with a note).
    """
    refs: dict[str, str] = {}
    notes: list[str] = []
    from srtui.engine.methods.srbench_dir import NOT_A_METHOD, method_name, method_source

    for given in req.method_dirs:
        folder, name = given.resolve(), method_name(given)
        if method_source(folder) is None:
            raise RunError(f"--method-dir {folder}: {NOT_A_METHOD}")
        if name in refs:
            raise RunError(f"--method-dir {folder}: two method folders are named {name!r}")
        if name in registry.BUILTIN and name not in (req.methods or []):
            notes.append(
                f"--method-dir {folder}: not run, {name!r} is a built-in method; "
                f"name it with --methods {name} to run the folder instead"
            )
            continue
        refs[name] = registry.SRBENCH_PREFIX + str(folder)
    return refs, notes


def srbench_options(suite: Suite, req: RunRequest) -> tuple[dict[str, Any], str | None]:
    """The run's folder options (request over suite), as the job params carry them, and the
    scaling they ask for, which is the whole run's (None: the protocol's)."""
    from srtui.engine.methods.srbench_eval import RunOptions

    merged = {**suite.srbench, **{k: v for k, v in req.srbench.items() if v is not None}}
    opts = RunOptions.from_params({OPTIONS_KEY: merged})  # checks the scaling's name
    scaling = SRBENCH_SCALING[opts.scaling] if "scaling" in merged else None
    return {k: v for k, v in opts.as_params().items() if k != "scaling"}, scaling


def load_methods(methods: list[str], method_refs: dict[str, str]) -> dict[str, Method]:
    """Each method loaded and available; ``method_refs`` completed with the built-ins' names."""
    from srtui.engine.methods import dist_cache

    loaded: dict[str, Method] = {}
    for name in methods:
        ref = method_refs.get(name, name)
        method = registry.load(ref)
        dist_cache.remember(method.requires)  # its versions kept, not searched for (#56)
        ok, why = method.availability()
        if not ok:
            raise RunError(f"method {name!r} is not available: {why}")
        method_refs[name] = ref
        loaded[name] = method
    return loaded


def in_environments(
    env: str | None, by_method: dict[str, str], loaded: dict[str, Method], refs: dict[str, str]
) -> list[str]:
    """Put method folders and files into named environments: every one of the run's into ``env``
    (``--env``), else those the suite's ``[environments]`` names; a note per environment."""
    from srtui.engine.methods.env_specs import get
    from srtui.engine.methods.environments import MethodEnvironmentError

    folders = [n for n in loaded if refs[n].startswith(registry.SRBENCH_PREFIX)]
    if env is not None and not folders:
        raise RunError(f"--env {env}: no --method-dir method in this run to run in it")
    wanted = dict.fromkeys(folders, env) if env is not None else {m: e for m, e in by_method.items() if m in loaded}
    groups: dict[str, list[str]] = {}
    for name, where in wanted.items():
        if name not in folders:
            raise RunError(f"[environments] {quoted(name)}: only a method folder or file (--method-dir) runs in one")
        try:
            spec = get(str(where))
        except MethodEnvironmentError as exc:
            raise RunError(f"--env: {exc}" if env is not None else f"[environments] {name}: {exc}") from None
        held = spec.environment
        if not getattr(loaded[name], "single", True) and held.ready() and not held.contract_ready():
            raise RunError(
                f"environment {where}: method folder {name} gets a DataFrame, and {' '.join(held.contract)} is not "
                f"yet in the environment: srtui env create {where} adds it (seconds; nothing is rebuilt)"
            )
        loaded[name].environment = held  # type: ignore[misc]  # this instance's, not the class's
        groups.setdefault(str(where), []).append(name)
    return [f"environment {e} for {', '.join(names)} ({get(e).source})" for e, names in groups.items()]


def environment_pythons(loaded: dict[str, Method]) -> dict[str, dict[str, str]]:
    """The interpreters of the methods in their own environments (refused if not installed)."""
    from srtui.engine.methods.environments import MethodEnvironmentError, interpreters

    try:
        return interpreters(loaded)
    except (MethodEnvironmentError, OSError) as exc:
        raise RunError(str(exc)) from None


def read_method_grids(
    loaded: dict[str, Method],
    refs: dict[str, str],
    limits: Limits,
    pythons: dict[str, dict[str, str]],
    tuning: TuningOptions,
) -> list[str]:
    """The grids only running a method file can read, read in a job (srtui.runs.grids); a note per
    method saying where its grid comes from."""
    from srtui.runs.grids import GridError, origin, read_grids

    try:
        read_grids(loaded, refs, limits, pythons, set(tuning.grids))
    except GridError as exc:
        raise RunError(str(exc)) from None
    notes = []
    for name, method in loaded.items():
        n = len(tuning.grids.get(name, method.hyper_params))
        notes.append(f"grid of {name}: {n} configuration(s), {origin(name, method, name in tuning.grids)}")
    return notes


def choose_launchers(suite: Suite, req: RunRequest, loaded: dict[str, Method], notes: list[str]) -> dict[str, str]:
    from srtui.engine.process.launch_choice import LauncherError, choose_for_method

    try:
        return choose_for_method(req.launcher or suite.launcher, loaded, suite.srbench.get("fork_safe"), notes)
    except LauncherError as exc:
        raise RunError(str(exc)) from None


def _measure_folders(
    suite: Suite,
    req: RunRequest,
    refs: dict[str, str],
    launchers: dict[str, str],
    pythons: dict[str, dict[str, str]],
    notes: list[str],
) -> dict[str, str]:
    """The launchers once the folders ``auto`` forks have their servers started: a folder whose
    server turns out unusable (a thread after its imports) is exec'd, a note saying why."""
    if (req.launcher or suite.launcher) != "auto" or suite.srbench.get("fork_safe") is not None:
        return launchers
    from srtui.engine.process.launch import measure

    folders = {
        m: ref for m, ref in refs.items() if ref.startswith(registry.SRBENCH_PREFIX) and launchers.get(m) == "fork"
    }
    unusable = sorted(measure(folders, pythons).items())
    notes += [f"{name} runs exec'd: {why}" for name, why in unusable]
    return {**launchers, **{name: "exec" for name, _ in unusable}}


def warm_servers(
    suite: Suite,
    req: RunRequest,
    loaded: dict[str, Method],
    refs: dict[str, str],
    launchers: dict[str, str],
    pythons: dict[str, dict[str, str]],
    notes: list[str],
    lean: bool,
) -> dict[str, str]:
    """A local run's fork servers started and its interpreters' versions fetched while the
    driver goes on planning; the launchers once the folders ``auto`` forks were measured."""
    from srtui.engine.process.launch import warm
    from srtui.engine.process.measure import prefetch_versions

    launchers = _measure_folders(suite, req, refs, launchers, pythons, notes)
    # the other servers import while the driver goes on planning
    warm([refs[m] for m, how in launchers.items() if how == "fork" and m not in pythons], lean)
    for python in dict.fromkeys(pythons.get(m, {}).get("python") or sys.executable for m in loaded):
        prefetch_versions(python)  # the first job's notes do not wait for it
    return launchers


def plan_isolation(req: RunRequest, loaded: dict[str, Method], notes: list[str]) -> tuple[str, frozenset[str]]:
    """The capability report's line (a note when jobs are not sealed) and the methods allowed
    the network (each named by --allow-network must be in the run)."""
    from srtui.engine.process.seal import isolation

    unknown = sorted(set(req.allow_network) - set(loaded))
    if unknown:
        raise RunError(f"--allow-network {unknown[0]}: no such method in this run")
    found = isolation()
    if found.mode != "namespaces":
        notes.append(found.line)
    for name in sorted(set(req.allow_network)):
        notes.append(f"--allow-network: {name}'s jobs keep this machine's network")
    return found.line, frozenset(req.allow_network)
