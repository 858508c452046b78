"""Planning a run: a request -> its suite, methods, tasks and job specs, checked, in a ``RunPlan``.

Used by `srtui run` (--dry-run included), `srtui methods check` and the app's "start a run";
the plan is driven by srtui.runs.execution. No Textual and no signal handlers here (the CLI
installs those). Everything that can fail on user input (names, limits, workspace) is checked in
``plan_run`` before the store is touched: the checks are srtui.runs.planning_checks', the
methods' steps srtui.runs.planning_methods', the protocol's tuning srtui.runs.tuning's.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srtui.engine.backends.base import usable_cores
from srtui.engine.methods import registry
from srtui.engine.methods.base import Method
from srtui.engine.methods.srbench_eval import OPTIONS_KEY
from srtui.engine.protocols import Protocol, get_protocol
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.runs.data import write_arrays, write_task_data
from srtui.runs.options import RunRequest
from srtui.runs.planning_checks import (
    check_backend,
    check_counts,
    check_data,
    check_grids,
    check_planned,
    check_rule,
    select_names,
    select_tasks,
)
from srtui.runs.planning_methods import (
    choose_launchers,
    environment_pythons,
    folder_refs,
    in_environments,
    load_methods,
    plan_isolation,
    read_method_grids,
    srbench_options,
    warm_servers,
)
from srtui.runs.tuning import TuningOptions, plan_searches
from srtui.runs.tuning_search import Search
from srtui.tasks.catalogue import TaskContext, entry, get_task
from srtui.tasks.model import Task
from srtui.tasks.suites import Suite, load_suite


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

        private_dir()  # checked first: a folder of ours left open is refused before anything starts
        start_checkers()
    setting = _setting(workspace, req)
    method_refs, notes = folder_refs(req)
    methods = _methods(setting, req, method_refs, notes)
    tasks = _tasks(setting, req, workspace, notes, write_data)
    specs = _job_specs(setting, req, methods, tasks)
    data_paths = _data_paths(workspace, tasks, write_data)
    check_grids(setting.tuning)
    check_planned(len(specs))
    pythons = environment_pythons(methods.loaded)
    if setting.protocol.search is not None:
        notes += read_method_grids(methods.loaded, methods.refs, setting.limits, pythons, setting.tuning)
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
    check_planned(len(specs))
    n_slots = req.jobs or setting.cores
    kind, slots_text = check_backend(req, specs, n_slots)
    launchers = choose_launchers(setting.suite, req, methods.loaded, notes)
    isolation_line, allow_network = plan_isolation(req, methods.loaded, notes)
    if write_data and kind == "local":
        lean = len(specs) == 1 and not searches  # one job: its server imports only what its family names
        launchers = warm_servers(setting.suite, req, methods.loaded, methods.refs, launchers, pythons, notes, lean)
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
    srbench_opts, srbench_scaling = srbench_options(suite, req)
    tuning = TuningOptions.from_table(suite.tuning, f"suite {suite.name}")
    if srbench_scaling is not None and "default" not in tuning.scaling:  # a run-wide option now
        tuning.scaling["default"] = srbench_scaling
    n_seeds = _n_seeds(suite, req, protocol)
    cores = len(usable_cores())
    check_counts(req, cores, n_seeds)
    check_rule(suite)
    return _Setting(suite, limits, protocol, srbench_opts, tuning, n_seeds, cores)


def _methods(setting: _Setting, req: RunRequest, method_refs: dict[str, str], notes: list[str]) -> _Methods:
    """The methods asked for (the suite's and the folders'), loaded, their params checked and
    the folders put in their environments (a note each)."""
    suite = setting.suite
    available = list(suite.methods) + [m for m in method_refs if m not in suite.methods]
    methods = select_names(req.methods, available, available + registry.names())
    loaded = load_methods(methods, method_refs)
    for name, adapter in loaded.items():  # a misspelt parameter is refused here, dry run or not
        adapter.check_params({**suite.params.get(name, {}), **req.params.get(name, {})})
    notes += in_environments(req.env, suite.environments, loaded, method_refs)
    versions = {name: method.version() for name, method in loaded.items()}
    return _Methods(methods, method_refs, loaded, versions)


def _tasks(setting: _Setting, req: RunRequest, workspace: Workspace, notes: list[str], write_data: bool) -> _Tasks:
    """The tasks asked for, every name known before any is built; a run without their data
    files is refused, a dry run plans those it has."""
    suite, protocol = setting.suite, setting.protocol
    names = select_tasks(req, suite, workspace.root)
    context = TaskContext.for_workspace(
        workspace.root, data_dir=req.data_dir or env_data_dir(), parse=protocol.data_parse
    )
    for name in names:
        entry(name, context)  # unknown names fail here, before any data is built
    names, missing = check_data(suite, names, context, notes, dry_run=not write_data)
    built = {name: get_task(name, context) for name in names}
    fingerprints = {name: task.fingerprint() for name, task in built.items()}
    return _Tasks(built, fingerprints, names, missing)


def _job_specs(setting: _Setting, req: RunRequest, methods: _Methods, tasks: _Tasks) -> list[JobSpec]:
    """One job per (task, seed) and method, the suite's params with the request's over them."""
    suite = setting.suite
    pairs = _task_seeds(suite, setting.n_seeds, tasks.names, tasks.built, setting.protocol.seeds)
    check_planned(len(pairs) * len(methods.names))  # before the jobs are made, not after
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


def env_data_dir() -> Path | None:
    """$SRTUI_DATA_DIR, the data folder when the request names none (the tasks', the metrics')."""
    env = os.environ.get("SRTUI_DATA_DIR")
    return Path(env) if env else None
