"""Planning and driving a run: suite -> tasks and job specs -> backend -> store.

Used by `srtui run`, `srtui methods check` and the app's "start a run". No Textual and no
signal handlers here (the CLI installs those). Everything that can fail on user input (names,
limits, workspace) is checked in ``plan_run`` before the store is touched; the backend is set
up before the store is opened and closed in a ``finally`` whatever happens after.
"""

from __future__ import annotations

import itertools
import os
import socket
import sqlite3
import sys
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.backends import backend_kind, make_backend
from srtui.engine.backends.base import (
    Backend,
    BackendError,
    BackendOptions,
    Batch,
    PlannedJob,
    RunState,
    settle,
    usable_cores,
)
from srtui.engine.errors import SrtuiError
from srtui.engine.methods import registry
from srtui.engine.methods.base import Method
from srtui.engine.methods.srbench_eval import OPTIONS_KEY
from srtui.engine.names import quoted
from srtui.engine.protocols import Protocol, get_protocol
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store, needs_run, open_store
from srtui.runs.data import write_arrays, write_task_data
from srtui.runs.keys import workers_key
from srtui.runs.options import SRBENCH_SCALING, RunRequest
from srtui.runs.tuning import Search, TuningOptions, next_jobs, plan_searches, settled_tuning_jobs
from srtui.tasks.catalogue import TaskContext, entry, get_task
from srtui.tasks.model import Task
from srtui.tasks.suites import SUITES_DIR, Suite, load_suite

if TYPE_CHECKING:  # the metrics (sympy) and the job machinery load when a run starts, not when it is planned
    from srtui.results.metrics.tasks import MetricsFeed

MAX_SEEDS = 1000  # SRBench uses 10; beyond this a count is a typo, and planning it costs minutes
MAX_PLANNED = 100_000  # jobs one plan may hold however it was made (seeds x tasks x methods x grids)
MAX_GRID = 1000  # candidates of one method's tuning grid
MAX_JOBS = 1024  # slots of one driver (threads, pipes); a cluster scales by workers, not slots


class RunError(SrtuiError):
    """Bad run request, or a run that cannot go on; one line for the CLI."""


class RunInterrupted(RunError):
    """Ctrl-C before any job was claimed (while a cluster started): exit 130, nothing stored."""

    exit_code = 130


@dataclass(kw_only=True)
class RunPlan:
    """What a run will do, built once by ``plan_run`` (keywords only)."""

    suite: Suite
    workspace: Workspace
    specs: list[JobSpec]
    method_refs: dict[str, str]  # method name -> how the worker loads it
    data_paths: dict[str, str]  # task name -> npz
    n_slots: int  # local slots (and LocalCluster workers, metrics processes)
    backend: str = "local"
    slots_text: str = ""  # the slots the run will have, for --dry-run
    notes: list[str] = field(default_factory=list)  # said to the user before the run
    searches: list[Search] = field(default_factory=list)  # finals chosen after tuning
    fold_paths: dict[str, str] = field(default_factory=dict)  # tuning data fingerprint -> npz
    isolation: str = ""  # the capability report's line (srtui.engine.process.seal)
    allow_network: frozenset[str] = frozenset()  # methods whose jobs keep the host's network
    launchers: dict[str, str] = field(default_factory=dict)  # method name -> "fork" or "exec"
    #: method name -> its own environment's interpreter and worker path (JobPayload fields)
    pythons: dict[str, dict[str, str]] = field(default_factory=dict)
    protocol: str = "none"  # the run's one protocol (srtui.engine.protocols.PROTOCOLS)
    without_data: list[str] = field(default_factory=list)  # "task: missing files" a dry run left out
    unplanned: dict[str, int] = field(default_factory=dict)  # method -> its final jobs on those tasks

    def __post_init__(self) -> None:
        self.slots_text = self.slots_text or f"{self.n_slots} slots"

    @property
    def n_jobs(self) -> int:
        return len(self.specs)

    def protocol_lines(self) -> list[str]:
        """The protocol as the plan applies it: one line for the run, one per method (its jobs,
        scaling, cap, tuning), from the planned jobs' records."""
        per: dict[str, list[JobSpec]] = {}
        for spec in self.specs:
            per.setdefault(spec.method, []).append(spec)
        later = [
            f"  {m:<14} {n} more job(s) once the data are fetched (and tuning jobs if the protocol tunes it)"
            for m, n in self.unplanned.items()
            if n
        ]
        if not per:
            return [f"protocol {self.protocol}", *later]
        first = next(iter(per.values()))[0].protocol
        lines = [f"protocol {first.get('protocol')}: split {first.get('split')}"]
        finals = {s.method: s for s in self.searches_finals()}
        for method, specs in per.items():
            record = (finals.get(method) or specs[0]).protocol
            capped = sum(1 for s in specs if s.protocol.get("cap", "none") != "none")
            cap = f"cap {first_cap(specs)} on {capped} job(s)" if capped else "cap none"
            n = len(specs) + self.later_jobs(method)  # the final fits too: what the run runs
            lines.append(
                f"  {method:<14} {n} job(s); scaling {record.get('scaling')}, {cap}, tuning {record.get('tuning')}"
            )
        return lines + later

    def searches_finals(self) -> list[JobSpec]:
        return [s.final for s in self.searches]

    def later_jobs(self, method: str | None = None) -> int:
        """The jobs the searches plan as they go (halving iterations, the final fits): not in
        ``specs`` yet, but run (and counted) all the same; one method's with ``method``."""
        return sum(
            max(0, s.expected_jobs() - len(s.first_jobs()))
            for s in self.searches
            if method is None or s.final.method == method
        )

    def data_path(self, spec: JobSpec) -> str:
        return self.fold_paths.get(spec.data_fingerprint) or self.data_paths[spec.task]


def first_cap(specs: list[JobSpec]) -> str:
    return next(str(s.protocol["cap"]) for s in specs if s.protocol.get("cap", "none") != "none")


def _limits(suite: Suite, req: RunRequest) -> Limits:
    """The suite file's limits with the command line's over them (SpecError: one line)."""
    return Limits.from_dict(dict(suite.limits)).over(
        time_s=req.time_s, mem_mb=req.mem_mb, cpu_s=req.cpu_s, grace_s=req.grace_s
    )


def _select(wanted: list[str] | None, available: list[str], known: list[str] | None = None) -> list[str]:
    """The names asked for (default: ``available``); shell-style patterns (``pyoperon*``) as in
    suite files, matched over ``known`` (default: ``available``); order kept, repeats dropped;
    a plain name's existence is checked by the caller."""
    import fnmatch

    if not wanted:
        return available
    out: list[str] = []
    for name in wanted:
        if any(ch in name for ch in "*?["):
            hits = fnmatch.filter(known or available, name)
            if not hits:
                raise RunError(f"pattern {quoted(name)} matches no name")
            out += hits
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def _select_tasks(req: RunRequest, suite: Suite, root: Path) -> list[str]:
    """--tasks (names or patterns, matched as a suite file's are: the catalogue and the
    workspace's own tasks), else the suite's."""
    from srtui.tasks.suites import SuiteError, expand_tasks

    if not req.tasks:
        return list(suite.tasks)
    try:
        return expand_tasks(req.tasks, "--tasks", root)
    except SuiteError as exc:
        raise RunError(str(exc).replace("suite --tasks: ", "--tasks: ")) from None


def _check_rule(suite: Suite) -> None:
    """The suite's scoring rule exists (at plan time, --dry-run included, not at scoring)."""
    from srtui.results.rule_names import RULE_NAMES

    if suite.scoring is None or suite.scoring in RULE_NAMES:  # known without pandas (issue 56)
        return
    from srtui.results.scoring import ScoreError, get_rule

    try:
        get_rule(suite.scoring)
    except ScoreError as exc:
        raise RunError(f"suite {suite.name}: scoring: {exc}") from None


@dataclass
class _Setting:
    """The suite and what the request makes of it, every limit and count checked."""

    suite: Suite
    limits: Limits
    protocol: Protocol
    srbench_opts: dict[str, Any]  # the folders' options, as their jobs' params carry them
    tuning: TuningOptions
    n_seeds: int | None
    cores: int


@dataclass
class _Methods:
    """The run's methods, loaded and available, with how the workers load them."""

    names: list[str]
    refs: dict[str, str]
    loaded: dict[str, Method]
    versions: dict[str, str]


@dataclass
class _Tasks:
    """The run's tasks built (those with data), and those left out for want of it."""

    built: dict[str, Task]
    fingerprints: dict[str, str]
    names: list[str]
    missing: list[str]  # "task: missing files" (a dry run only)


def plan_run(workspace: Workspace, req: RunRequest, *, write_data: bool = True) -> RunPlan:
    """The jobs a request means, every name and limit checked; task data written (unless not).
    Each step checks what it can before the next one builds anything (names before data)."""
    if write_data:  # a run: its model checkers start while it is planned
        from srtui.engine.outcome_check import start_checkers
        from srtui.engine.private import private_dir

        private_dir()  # checked first: a folder of another owner is refused before anything starts
        start_checkers()
    setting = _setting(workspace, req)
    method_refs, notes = _folder_refs(req)
    methods = _methods(setting, req, method_refs, notes)
    tasks = _tasks(setting, req, workspace, notes, write_data)
    specs = _job_specs(setting, req, methods, tasks)
    data_paths = _data_paths(workspace, tasks, write_data)
    _check_grids(setting.tuning)
    _check_planned(len(specs))
    pythons = _environments(methods.loaded)
    if setting.protocol.search is not None:
        notes += _read_grids(methods.loaded, methods.refs, setting.limits, pythons, setting.tuning)
    specs, searches, fold_paths = plan_searches(
        setting.protocol,
        specs,
        methods.loaded,
        tasks.built,
        workspace.data_cache,
        write_arrays if write_data else None,
        setting.tuning,
        notes,
    )
    _check_planned(len(specs))
    n_slots = req.jobs or setting.cores
    kind, slots_text = _check_backend(req, specs, n_slots)
    launchers = _launchers(setting.suite, req, methods.loaded, notes)
    isolation_line, allow_network = _isolation(req, methods.loaded, notes)
    if write_data and kind == "local":
        from srtui.engine.process.launch import warm
        from srtui.engine.process.measure import prefetch_versions

        launchers = _measure_folders(setting.suite, req, methods.refs, launchers, pythons, notes)
        # the other servers import while the driver goes on planning
        lean = len(specs) == 1 and not searches  # one job: its server imports only what its family names
        warm([methods.refs[m] for m, how in launchers.items() if how == "fork" and m not in pythons], lean)
        for python in dict.fromkeys(pythons.get(m, {}).get("python") or sys.executable for m in methods.loaded):
            prefetch_versions(python)  # the first job's notes do not wait for it
    return RunPlan(
        suite=setting.suite,
        workspace=workspace,
        specs=specs,
        method_refs=methods.refs,
        data_paths=data_paths,
        n_slots=n_slots,
        backend=kind,
        slots_text=slots_text,
        notes=notes,
        searches=searches,
        fold_paths=fold_paths,
        isolation=isolation_line,
        allow_network=allow_network,
        launchers=launchers,
        pythons=pythons,
        protocol=setting.protocol.name,
        without_data=tasks.missing,
        unplanned=_unplanned(setting, methods, tasks),
    )


def _setting(workspace: Workspace, req: RunRequest) -> _Setting:
    """The suite loaded, its limits, protocol and tuning with the request's over them; the
    counts (--jobs, --seeds) and the scoring rule checked."""
    suite = load_suite(req.suite, workspace.root)
    limits = _limits(suite, req)
    protocol = get_protocol(req.protocol or suite.protocol)
    srbench_opts, srbench_scaling = _srbench_options(suite, req)
    tuning = TuningOptions.from_table(suite.tuning, f"suite {suite.name}")
    if srbench_scaling is not None and "default" not in tuning.scaling:  # a run-wide option now
        tuning.scaling["default"] = srbench_scaling
    n_seeds = _n_seeds(suite, req, protocol)
    cores = len(usable_cores())
    _check_counts(req, cores, n_seeds)
    _check_rule(suite)
    return _Setting(suite, limits, protocol, srbench_opts, tuning, n_seeds, cores)


def _methods(setting: _Setting, req: RunRequest, method_refs: dict[str, str], notes: list[str]) -> _Methods:
    """The methods asked for (the suite's and the folders'), loaded, their params checked and
    the folders put in their environments (a note each)."""
    suite = setting.suite
    available = list(suite.methods) + [m for m in method_refs if m not in suite.methods]
    methods = _select(req.methods, available, available + registry.names())
    loaded = _load_methods(methods, method_refs)
    for name, adapter in loaded.items():  # a misspelt parameter is refused here, dry run or not
        adapter.check_params({**suite.params.get(name, {}), **req.params.get(name, {})})
    notes += _in_environments(req.env, suite.environments, loaded, method_refs)
    versions = {name: method.version() for name, method in loaded.items()}
    return _Methods(methods, method_refs, loaded, versions)


def _tasks(setting: _Setting, req: RunRequest, workspace: Workspace, notes: list[str], write_data: bool) -> _Tasks:
    """The tasks asked for, every name known before any is built; a run without their data
    files is refused, a dry run plans those it has."""
    suite, protocol = setting.suite, setting.protocol
    names = _select_tasks(req, suite, workspace.root)
    context = TaskContext.for_workspace(workspace.root, data_dir=req.data_dir or _data_dir(), parse=protocol.data_parse)
    for name in names:
        entry(name, context)  # unknown names fail here, before any data is built
    names, missing = _check_data(suite, names, context, notes, dry_run=not write_data)
    built = {name: get_task(name, context) for name in names}
    fingerprints = {name: task.fingerprint() for name, task in built.items()}
    return _Tasks(built, fingerprints, names, missing)


def _job_specs(setting: _Setting, req: RunRequest, methods: _Methods, tasks: _Tasks) -> list[JobSpec]:
    """One job per (task, seed) and method, the suite's params with the request's over them."""
    suite = setting.suite
    pairs = _task_seeds(suite, setting.n_seeds, tasks.names, tasks.built, setting.protocol.seeds)
    _check_planned(len(pairs) * len(methods.names))  # before the jobs are made, not after
    specs = []
    for task_name, seed in pairs:
        for method in methods.names:
            params = {**suite.params.get(method, {}), **req.params.get(method, {})}
            if methods.refs[method].startswith(registry.SRBENCH_PREFIX) and setting.srbench_opts:
                params[OPTIONS_KEY] = setting.srbench_opts
            fingerprint, version = tasks.fingerprints[task_name], methods.versions[method]
            specs.append(
                JobSpec(suite.name, task_name, method, int(seed), setting.limits, fingerprint, version, params)
            )
    return specs


def _data_paths(workspace: Workspace, tasks: _Tasks, write_data: bool) -> dict[str, str]:
    """Each task's npz file; checked if there (a job of an earlier run may have changed it),
    else written (unless not)."""
    paths = {}
    for name, task in tasks.built.items():
        path = workspace.data_cache / f"{tasks.fingerprints[name]}.npz"
        paths[name] = str(path)
        if write_data:
            workspace.ensure()
            write_task_data(task, path)
    return paths


def _unplanned(setting: _Setting, methods: _Methods, tasks: _Tasks) -> dict[str, int]:
    """Each method's final jobs on the tasks a dry run left out for want of data."""
    left_out = [m.split(":", 1)[0] for m in tasks.missing]
    pairs = _task_seeds(setting.suite, setting.n_seeds, left_out, left_out, setting.protocol.seeds)
    return {m: len(pairs) for m in methods.names}


def _isolation(req: RunRequest, loaded: dict[str, Method], notes: list[str]) -> tuple[str, frozenset[str]]:
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


def _launchers(suite: Suite, req: RunRequest, loaded: dict[str, Method], notes: list[str]) -> dict[str, str]:
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


def _environments(loaded: dict[str, Method]) -> dict[str, dict[str, str]]:
    """The interpreters of the methods in their own environments (refused if not installed)."""
    from srtui.engine.methods.environments import MethodEnvironmentError, interpreters

    try:
        return interpreters(loaded)
    except (MethodEnvironmentError, OSError) as exc:
        raise RunError(str(exc)) from None


def _n_seeds(suite: Suite, req: RunRequest, protocol: Protocol) -> int | None:
    """How many seeds to take (None: the suite's own (task, seed) pairs): --seeds, else a suite's
    ``n_seeds`` under a protocol that fixes its seeds (SRBench 2021's ten: its first N, not the
    competition's), else the protocol's number of runs when the suite says nothing."""
    if req.seeds is not None:
        return req.seeds
    if suite.seeds_given:
        fixed = protocol.seeds and not suite.seeds_listed and not suite.seed_from_task
        return len(suite.seeds) if fixed else None
    return protocol.runs


def _check_counts(req: RunRequest, cores: int, n_seeds: int | None) -> None:
    """--jobs and --seeds within their bounds (--jobs above the cores only when asked for)."""
    if req.jobs is not None and req.jobs < 1:
        raise RunError(f"--jobs must be at least 1, got {req.jobs}")
    local = not (req.backend == "dask" or req.dask_scheduler or req.cluster or req.cluster_config)
    if req.jobs is not None and local and req.jobs > cores and not req.oversubscribe:
        raise RunError(
            f"--jobs {req.jobs} is more than the {cores} usable core(s): jobs would share cores and "
            "their times would not compare (--oversubscribe to do it anyway)"
        )
    if req.jobs is not None and req.jobs > MAX_JOBS:
        raise RunError(f"--jobs must be at most {MAX_JOBS}, got {req.jobs}")
    if n_seeds is not None and not 1 <= n_seeds <= MAX_SEEDS:
        raise RunError(f"--seeds must be between 1 and {MAX_SEEDS}, got {req.seeds}")


def _in_environments(
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


def _read_grids(
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


def _check_grids(tuning: TuningOptions) -> None:
    for method, grid in tuning.grids.items():
        if len(grid) > MAX_GRID:
            raise RunError(f"[tuning.grids] {quoted(method)}: at most {MAX_GRID} candidates, got {len(grid)}")


def _check_planned(n: int) -> None:
    if n > MAX_PLANNED:
        raise RunError(f"the plan holds {n} jobs, more than the ceiling of {MAX_PLANNED}: split it into several runs")


def _load_methods(methods: list[str], method_refs: dict[str, str]) -> dict[str, Method]:
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


def _task_seeds(
    suite: Suite,
    n_seeds: int | None,
    task_names: list[str],
    built: Collection[str],
    protocol_seeds: tuple[int, ...] = (),
) -> list[tuple[str, int]]:
    """(task, seed) pairs: the suite's own, or N seeds (--seeds, else the protocol's runs when the
    suite names none) taken from the suite's seeds (a suite that names none: the protocol's, as
    SRBench 2021's ten), then the competition's, then 1, 2, ..."""
    if n_seeds is None:
        pairs = [(t, seed) for t, seed in suite.jobs() if t in built]
        return pairs + [(t, seed) for t in task_names if t not in suite.tasks for seed in suite.seeds]
    from srtui.tasks.suites import COMPETITION_SEEDS

    first = suite.seeds if suite.seeds_listed or not protocol_seeds else list(protocol_seeds)
    pool = list(dict.fromkeys([*first, *COMPETITION_SEEDS]))
    taken, extra = set(pool), itertools.count(1)
    while len(pool) < n_seeds:  # then 1, 2, ... skipping seeds already in the pool: all distinct
        seed = next(extra)
        if seed not in taken:
            pool.append(seed)
    seeds = pool[:n_seeds]
    return [(t, seed) for t in task_names for seed in seeds]


def _check_backend(req: RunRequest, specs: list[JobSpec], n_slots: int) -> tuple[str, str]:
    """The backend the request implies, its cluster config checked against the jobs' limits
    (nothing started), and the slots the run will have, said in words."""
    kind = backend_kind(req.backend, req.dask_scheduler, req.cluster, req.cluster_config)
    if kind != "dask" or req.dask_scheduler:
        return kind, (
            f"slots: those of the workers of {req.dask_scheduler}" if req.dask_scheduler else f"{n_slots} slots"
        )
    from srtui.engine.backends.dask_config import check_limits, load_cluster_config

    config = load_cluster_config(req.cluster, req.cluster_config)
    check_limits(config, [s.limits for s in specs])
    slots = int(config.settings.get("n_workers") or n_slots) if config.kind == "local" else config.expected_slots()
    where = {"local": "a local Dask cluster", "ssh": "an SSH cluster", "slurm": "a SLURM cluster"}[config.kind]
    return kind, f"{slots} slots on {where}" + (f" ({config.source})" if config.source != "defaults" else "")


def _folder_refs(req: RunRequest) -> tuple[dict[str, str], list[str]]:
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


def _srbench_options(suite: Suite, req: RunRequest) -> tuple[dict[str, Any], str | None]:
    """The run's folder options (request over suite), as the job params carry them, and the
    scaling they ask for, which is the whole run's (None: the protocol's)."""
    from srtui.engine.methods.srbench_eval import RunOptions

    merged = {**suite.srbench, **{k: v for k, v in req.srbench.items() if v is not None}}
    opts = RunOptions.from_params({OPTIONS_KEY: merged})  # checks the scaling's name
    scaling = SRBENCH_SCALING[opts.scaling] if "scaling" in merged else None
    return {k: v for k, v in opts.as_params().items() if k != "scaling"}, scaling


def _check_data(
    suite: Suite, task_names: list[str], context: TaskContext, notes: list[str], dry_run: bool
) -> tuple[list[str], list[str]]:
    """(tasks to plan, tasks left out for want of data). A run whose data files are not here is
    refused before any job starts (a run never downloads); a dry run plans the others and says
    which files are missing and the command that fetches them."""
    from srtui.tasks.fetch import missing_before_run, needed
    from srtui.tasks.fetch import plan as fetch_plan

    where = suite.path if suite.path is not None and suite.path.parent != SUITES_DIR else suite.name
    problem = missing_before_run(task_names, context, f"srtui tasks fetch {where} -w {context.workspace}")
    if not problem:
        return task_names, []
    if not dry_run:
        raise RunError(problem)
    notes.append(problem)
    missing = [
        f"{n}: {', '.join(f.rel for f in files)}"
        for n in task_names
        if (files := fetch_plan(needed([n], context), context).missing)
    ]
    left_out = {m.split(":", 1)[0] for m in missing}
    return [n for n in task_names if n not in left_out], missing


def _data_dir() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    return Path(env) if env else None


@dataclass
class RunResult:
    run_id: str
    state: RunState
    skipped: int
    lost_recovered: int
    interrupted: bool


def execute(
    plan: RunPlan,
    req: RunRequest,
    *,
    cancel: threading.Event | None = None,
    force: threading.Event | None = None,
    on_state: Callable[[RunState], None] | None = None,
    on_metrics: Callable[[str], None] | None = None,
) -> RunResult:
    """Run the plan to completion (or until cancelled); every job ends with a record.

    The backend is set up first (a bad backend request must not touch the store) and closed
    in ``finally``, whatever fails after it: the store, the run, the metrics."""
    cancel = cancel or threading.Event()
    force = force or threading.Event()
    backend = _start_backend(plan, req, cancel)
    try:
        store = open_store(plan.workspace, create=True)
        try:
            return _drive(plan, req, store, backend, cancel, force, on_state, on_metrics)
        finally:
            store.close()
    finally:
        backend.close()


def _drive(
    plan: RunPlan,
    req: RunRequest,
    store: Store,
    backend: Backend,
    cancel: threading.Event,
    force: threading.Event,
    on_state: Callable[[RunState], None] | None,
    on_metrics: Callable[[str], None] | None,
) -> RunResult:
    """The run proper, in the open store: recovery, the jobs, the final fits, the metrics."""
    from srtui.engine.process import tree
    from srtui.engine.process.supervise import now_iso
    from srtui.runs.recovery import recover
    from srtui.runs.sink import StoreSink

    lost, _ = recover(store)
    settled = settled_tuning_jobs(plan.searches, store.scores) if req.retry_failed else set()
    todo = _todo(plan, store, plan.specs, req.retry_failed, settled)
    # a search's later jobs (halving iterations, the final fit) are counted from the start, so the
    # progress counter's total holds still as they are planned
    ahead = plan.later_jobs()
    state = RunState(total=len(todo) + ahead)
    planned, queued = len(plan.specs), len(todo)
    run_id = store.begin_run(
        plan.suite.name, tree.driver_identity(), socket.gethostname(), sys.argv, now_iso(), queued=len(todo)
    )
    on_change = (lambda: on_state(state)) if on_state else None
    feed = _metrics_feed(plan, req, store, state, run_id, on_change)
    sink = StoreSink(store, run_id, on_recorded=feed.job_recorded if feed else None)
    batch = Batch(sink, state, cancel, force, on_change, feed)
    failed = False
    try:
        try:
            seen = {spec.job_id for spec in plan.specs}
            while True:
                backend.run(todo, batch)
                if not plan.searches or cancel.is_set() or state.failure is not None:
                    break
                # a halving search's next iteration, and the final fits, once what they depend on ended
                new = [s for s in next_jobs(plan.searches, store.scores, store.set_meta) if s.job_id not in seen]
                if not new:
                    break
                seen.update(s.job_id for s in new)
                todo = _todo(plan, store, new, req.retry_failed, settled)
                planned, queued = planned + len(new), queued + len(todo)
                store.add_queued(run_id, len(todo))
                with state.lock:  # counted ahead: only those already done (a resumed run) come off
                    state.total += len(todo) - min(len(new), ahead)
                    ahead -= min(len(new), ahead)
            with state.lock:  # what was counted ahead and never came (a search that ended early)
                state.total -= ahead
            if feed is not None and feed.pending and not cancel.is_set() and state.failure is None:
                backend.run([], batch)  # the metrics still queued
        except BackendError:
            failed = True
            raise
        if feed is not None and not cancel.is_set() and state.failure is None:
            feed.finish()
            if on_metrics and feed.done:
                on_metrics(f"metrics of {feed.done} job(s) computed in the run's slots")
    finally:
        if not cancel.is_set():
            settle(sink, state)  # a job still marked running is recorded, never left `running`
        if feed is not None:
            feed.close()
        _end_run(plan, store, run_id, state, cancel, failed)
    if state.unrecorded and not state.failure:
        raise RunError(
            f"{len(state.unrecorded)} job(s) could not be recorded (first: {state.unrecorded[0]}); "
            "the others are recorded, and those are run again by the next `srtui run`"
        )
    if state.failure:
        done = state.done - state.counts.get("interrupted", 0)
        raise RunError(
            f"run stopped: {state.failure}; the {done} job(s) that finished are recorded, "
            "the others are retried by the next `srtui run`"
        )
    return RunResult(run_id, state, planned - queued, lost, cancel.is_set())


def _metrics_feed(
    plan: RunPlan,
    req: RunRequest,
    store: Store,
    state: RunState,
    run_id: str,
    on_change: Callable[[], None] | None,
) -> MetricsFeed | None:
    """The run's metrics queue (srtui.results.metrics.tasks), seeded with the suite's finished jobs
    whose metrics are missing (a resumed run goes on where the last one stopped)."""
    if not req.metrics:
        return None
    from srtui.results.metrics.tasks import MetricsFeed

    feed = MetricsFeed(
        store, plan.suite.name, data_dir=req.data_dir or _data_dir(), state=state, on_change=on_change, run_id=run_id
    )
    feed.seed()
    return feed


def _end_run(plan: RunPlan, store: Store, run_id: str, state: RunState, cancel: threading.Event, failed: bool) -> None:
    """The run's end in the store: a store/disk failure first; then Ctrl-C (a cluster cancelled
    by it raises too); a backend that went down; else done."""
    from srtui.engine.process.supervise import now_iso

    try:
        end = "failed" if state.failure else "interrupted" if cancel.is_set() else "failed" if failed else "done"
        store.end_run(run_id, end, now_iso())
        store.set_meta(workers_key(run_id), None)
    except (sqlite3.Error, OSError) as exc:
        state.fail(f"cannot record in {plan.workspace.db_path}: {exc}")


def _start_backend(plan: RunPlan, req: RunRequest, cancel: threading.Event) -> Backend:
    """The backend made and prepared (a cluster started); closed here if preparing fails."""
    options = BackendOptions(
        plan.backend,
        plan.n_slots,
        req.dask_scheduler,
        req.cluster,
        req.cluster_config,
        cancel=cancel,
        log_path=plan.workspace.logs / "dask.log",
    )
    backend = make_backend(options, plan.workspace.jobs_dir)
    try:
        backend.prepare(plan.specs)  # SLURM walltime/memory against the limits, the cluster started
    except BackendError as exc:
        backend.close()
        if cancel.is_set():
            raise RunInterrupted(str(exc)) from None
        raise
    except BaseException:
        backend.close()
        raise
    return backend


def _todo(
    plan: RunPlan,
    store: Store,
    specs: list[JobSpec],
    retry_failed: bool,
    settled: set[str] | frozenset[str] = frozenset(),
) -> list[PlannedJob]:
    """The jobs of ``specs`` that need a run, recorded as planned in the store; a ``settled``
    tuning job (its search's final job is planned) is not retried."""
    from srtui.engine.process.supervise import JobPayload

    states = store.plan(specs)
    todo: list[PlannedJob] = []
    for spec in specs:
        job_id = spec.job_id
        status, attempt = states[job_id]
        if not needs_run(status, attempt, retry_failed and job_id not in settled):
            continue
        payload = JobPayload(
            spec=spec,
            attempt=attempt + 1,
            workspace_token=store.workspace_id,
            data_path=plan.data_path(spec),
            method_ref=plan.method_refs.get(spec.method),
            launcher=plan.launchers.get(spec.method, "exec"),
            python=plan.pythons.get(spec.method, {}).get("python"),
            python_path=plan.pythons.get(spec.method, {}).get("python_path"),
            allow_network=spec.method in plan.allow_network,
        )
        todo.append(PlannedJob(payload))
    return todo


def jobs_to_run(plan: RunPlan, retry_failed: bool) -> list[JobSpec]:
    """The plan's jobs a run would start now (for --dry-run): read-only, nothing recorded."""
    states: dict[str, tuple[str, int]] = {}
    settled: set[str] = set()
    if plan.workspace.exists():
        store = Store(plan.workspace, readonly=True)
        try:
            states = store.states([s.job_id for s in plan.specs])
            settled = settled_tuning_jobs(plan.searches, store.scores) if retry_failed else set()
        finally:
            store.close()
    return [
        s
        for s in plan.specs
        if needs_run(*states.get(s.job_id, ("pending", 0)), retry_failed and s.job_id not in settled)
    ]
