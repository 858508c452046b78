"""Planning and driving a run: suite -> tasks and job specs -> backend -> store.

Used by `srtui run` and by the app's "start a run". No Textual here. Everything that can fail
on user input (names, limits, workspace) is checked in ``plan_run`` before the store is touched.
"""

from __future__ import annotations

import functools
import io
import os
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from engine import proctree
from engine.backends import BackendError, BackendOptions, make_backend
from engine.launcher import JobOutcome, JobPayload, now_iso
from engine.methods import registry
from engine.scheduler import PlannedJob, RunState, usable_cores
from engine.spec import JobSpec, Limits, SpecError
from engine.tuning import ProtocolError, get_protocol
from engine.workspace import Workspace, WorkspaceError
from results.store import Store, StoreError, needs_run, open_store, pack_predictions
from tasks.catalogue import TaskContext, TaskError, entry, get_task
from srtui.protocols import final_specs, plan_searches
from tasks.suites import Suite, SuiteError, load_suite


class RunError(Exception):
    """Bad run request; one line for the CLI."""


@dataclass
class RunRequest:
    suite: str
    methods: list[str] | None = None
    tasks: list[str] | None = None
    seeds: int | None = None
    time_limit: float | None = None
    mem_limit: float | None = None
    cpu_limit: float | None = None
    grace: float | None = None
    jobs: int | None = None
    retry_failed: bool = False
    method_dirs: list[Path] = field(default_factory=list)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    backend: str = "local"
    scheduler: str | None = None
    cluster: str | None = None
    cluster_config: Path | None = None
    metrics: bool = True  # compute the results metrics at the end of the run
    protocol: str | None = None  # overrides the suite's (engine.tuning.PROTOCOLS)


@dataclass
class RunPlan:
    suite: Suite
    workspace: Workspace
    specs: list[JobSpec]
    method_refs: dict[str, str]  # method name -> how the worker loads it
    data_paths: dict[str, str]  # task name -> npz
    n_slots: int
    searches: list = field(default_factory=list)  # srtui.protocols.Search: finals chosen after tuning
    fold_paths: dict[str, str] = field(default_factory=dict)  # tuning data fingerprint -> npz

    @property
    def n_jobs(self) -> int:
        return len(self.specs)

    def data_path(self, spec: JobSpec) -> str:
        return self.fold_paths.get(spec.data_fingerprint) or self.data_paths[spec.task]


def _limits(suite: Suite, req: RunRequest) -> Limits:
    base = dict(suite.limits)
    for key, value in (("time_s", req.time_limit), ("mem_mb", req.mem_limit), ("cpu_s", req.cpu_limit), ("grace_s", req.grace)):
        if value is not None:
            base[key] = value
    try:
        return Limits.from_dict(base)
    except (SpecError, TypeError) as exc:
        raise RunError(str(exc)) from None


def _select(wanted: list[str] | None, available: list[str]) -> list[str]:
    if not wanted:
        return available
    return list(dict.fromkeys(wanted))  # keep order, drop repeats; existence checked by caller


def plan_run(workspace: Workspace, req: RunRequest, *, write_data: bool = True) -> RunPlan:
    try:
        suite = load_suite(req.suite, workspace.root)
    except SuiteError as exc:
        raise RunError(str(exc)) from None
    limits = _limits(suite, req)
    if req.jobs is not None and req.jobs < 1:
        raise RunError(f"--jobs must be at least 1, got {req.jobs}")
    if req.seeds is not None and req.seeds < 1:
        raise RunError(f"--seeds must be at least 1, got {req.seeds}")

    method_refs: dict[str, str] = {}
    for folder in req.method_dirs:
        folder = folder.resolve()
        if not (folder / "regressor.py").is_file():
            raise RunError(f"--method-dir {folder}: no regressor.py there (an SRBench method folder has one)")
        method_refs[folder.name] = registry.SRBENCH_PREFIX + str(folder)
    methods = _select(req.methods, list(suite.methods) + [m for m in method_refs if m not in suite.methods])
    versions: dict[str, str] = {}
    loaded = {}
    for name in methods:
        ref = method_refs.get(name, name)
        try:
            method = registry.load(ref)
        except registry.MethodError as exc:
            raise RunError(str(exc)) from None
        ok, why = method.availability()
        if not ok:
            raise RunError(f"method {name!r} is not available: {why}")
        method_refs[name] = ref
        versions[name] = method.version()
        loaded[name] = method

    task_names = _select(req.tasks, suite.tasks)
    context = TaskContext.for_workspace(workspace.root, data_dir=_data_dir())
    try:
        for name in task_names:
            entry(name, context)  # unknown names fail here, before any data is built
        built = {name: get_task(name, context) for name in task_names}
    except TaskError as exc:
        raise RunError(str(exc)) from None

    if req.seeds is None:
        try:
            pairs = [(t, seed) for t, seed in suite.jobs() if t in built]
        except SuiteError as exc:
            raise RunError(str(exc)) from None
        pairs += [(t, seed) for t in task_names if t not in suite.tasks for seed in suite.seeds]
    else:
        from tasks.suites import COMPETITION_SEEDS

        pool = list(dict.fromkeys([*suite.seeds, *COMPETITION_SEEDS]))
        seeds = pool[: req.seeds] if req.seeds <= len(pool) else pool + list(range(1, req.seeds - len(pool) + 1))
        pairs = [(t, seed) for t in task_names for seed in seeds]
    specs = []
    fingerprints = {name: task.fingerprint() for name, task in built.items()}
    for task_name, seed in pairs:
        for method in methods:
            params = {**suite.params.get(method, {}), **req.params.get(method, {})}
            specs.append(JobSpec(suite.name, task_name, method, int(seed), limits, fingerprints[task_name], versions[method], params))

    data_paths = {}
    for name, task in built.items():
        path = workspace.data_cache / f"{fingerprints[name]}.npz"
        data_paths[name] = str(path)
        if write_data and not path.exists():
            workspace.ensure()
            _write_task_data(task, path)
    try:
        protocol = get_protocol(req.protocol or suite.protocol)
        specs, searches, fold_paths = plan_searches(protocol, specs, loaded, built, workspace.data_cache,
                                                    _write_arrays if write_data else None)
    except ProtocolError as exc:
        raise RunError(str(exc)) from None
    n_slots = req.jobs or len(usable_cores())
    return RunPlan(suite, workspace, specs, method_refs, data_paths, n_slots, searches, fold_paths)


def _data_dir() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    return Path(env) if env else None


def _write_task_data(task, path: Path) -> None:
    _write_arrays(path, {
        "X_train": task.X_train, "y_train": task.y_train, "X_test": task.X_test, "y_test": task.y_test,
        "train_index": task.train_index, "test_index": task.test_index, "feature_names": task.feature_names,
    })


def _write_arrays(path: Path, arrays: dict) -> None:
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "feature_names": np.array(arrays["feature_names"], dtype=str)})
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)


@functools.lru_cache(maxsize=64)
def _row_indices(data_path: str):
    """A task's train/test row numbers, read once per data file rather than once per job."""
    import numpy as np

    with np.load(data_path, allow_pickle=False) as z:
        return z["train_index"], z["test_index"]


class StoreSink:
    """Writes job lifecycle events into the store and job logs into the workspace."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.logs = store.workspace.logs

    def claim(self, job: PlannedJob, started_at: str, host: str) -> bool:
        return self.store.claim(job.job_id, job.attempt, self.run_id, started_at, host)

    def started(self, job: PlannedJob, pid: int) -> None:
        self.store.set_worker_pid(job.job_id, pid)

    def finished(self, job: PlannedJob, outcome: JobOutcome, fields: dict) -> None:
        for stream, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
            if data:
                (self.logs / f"{job.job_id}.a{job.attempt}.{stream}").write_bytes(data)
        record = {
            "status": outcome.status, "attempt": job.attempt, "run_id": self.run_id,
            "returncode": outcome.returncode, "signal": outcome.signal, "wall_s": outcome.wall_s,
            "cpu_s": outcome.cpu_s, "peak_rss_mb": outcome.peak_rss_mb, "host": outcome.host,
            "started_at": outcome.started_at, "ended_at": outcome.ended_at,
            "stderr_tail": outcome.stderr_tail or None, "error": outcome.error,
            "limit_detail": outcome.limit_detail, "model": outcome.model, "dialect": outcome.dialect,
            "pareto": outcome.pareto or None, "method_notes": outcome.notes or None, "fit_s": outcome.fit_s,
            "energy_j": outcome.energy_j, "energy_method": outcome.energy_method,
            **fields,
        }
        predictions = None
        if outcome.train_pred is not None and outcome.test_pred is not None:
            train_index, test_index = _row_indices(job.data_path)
            predictions = pack_predictions(train_index, outcome.train_pred, test_index, outcome.test_pred)
        self.store.record(job.job_id, record, predictions)


def recover(store: Store) -> tuple[int, int]:
    """After a driver crash: running jobs of dead drivers become lost; their orphans are killed."""
    lost = 0
    for job in store.running_jobs():
        driver = job.get("driver") or ""
        if driver and proctree.identity_alive(driver):
            continue
        if store.mark_lost(job["job_id"], job["attempt"], now_iso(), "the driver running this job died"):
            lost += 1
    killed = proctree.sweep_orphans(store.workspace_id + ":")
    return lost, len(killed)


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
    backend=None,
) -> RunResult:
    """Run the plan to completion (or until cancelled); every job ends with a record."""
    if backend is None:  # set up first: a bad backend request must not touch the store
        options = BackendOptions(req.backend, plan.n_slots, req.scheduler, req.cluster, req.cluster_config)
        try:
            backend = make_backend(options, plan.workspace.jobs_dir)
            prepare = getattr(backend, "prepare", None)
            if prepare is not None:
                prepare(plan.specs)  # e.g. SLURM walltime/memory against the limits, before the store
        except BackendError as exc:
            raise RunError(str(exc)) from None
    try:
        store = open_store(plan.workspace, create=True)
    except (StoreError, WorkspaceError) as exc:
        raise RunError(str(exc)) from None
    cancel = cancel or threading.Event()
    force = force or threading.Event()
    try:
        lost, _ = recover(store)
        todo = _todo(plan, store, plan.specs, req.retry_failed)
        state = RunState(total=len(todo))
        planned, queued = len(plan.specs), len(todo)
        run_id = store.begin_run(plan.suite.name, proctree.driver_identity(), socket.gethostname(), sys.argv, now_iso())
        sink = StoreSink(store, run_id)
        if plan.searches and hasattr(backend, "keep_open"):
            backend.keep_open = True  # one cluster for the tuning and the final fits; closed below
        try:
            try:
                backend.run(todo, sink, state, cancel, force, (lambda: on_state(state)) if on_state else None)
                if plan.searches and not cancel.is_set():  # the final fits start when the tuning is done
                    finals = final_specs(plan.searches, store.scores)
                    todo = _todo(plan, store, finals, req.retry_failed)
                    planned, queued = planned + len(finals), queued + len(todo)
                    with state.lock:
                        state.total += len(todo)
                    backend.run(todo, sink, state, cancel, force, (lambda: on_state(state)) if on_state else None)
            except BackendError as exc:
                raise RunError(str(exc)) from None
            if not cancel.is_set() and req.metrics:
                # the published metrics (sizes, symbolic solution, ...) for the finished jobs, in a
                # process pool with per-operation timeouts; cached, so a resumed run only adds
                from results.metrics import compute_for_store

                if on_metrics:
                    on_metrics("computing metrics")
                compute_for_store(store, workers=plan.n_slots, suite=plan.suite.name, progress=on_metrics)
        finally:
            store.end_run(run_id, "interrupted" if cancel.is_set() else "done", now_iso())
            close = getattr(backend, "close", None)
            if close is not None:
                close()
        return RunResult(run_id, state, planned - queued, lost, cancel.is_set())
    finally:
        store.close()


def _todo(plan: RunPlan, store: Store, specs: list[JobSpec], retry_failed: bool) -> list[PlannedJob]:
    """The jobs of ``specs`` that need a run, recorded as planned in the store."""
    states = store.plan(specs)
    todo: list[PlannedJob] = []
    for spec in specs:
        job_id = spec.job_id
        status, attempt = states[job_id]
        if not needs_run(status, attempt, retry_failed):
            continue
        payload = JobPayload(
            spec=spec.to_dict(), job_id=job_id, attempt=attempt + 1, workspace_token=store.workspace_id,
            data_path=plan.data_path(spec), method_ref=plan.method_refs.get(spec.method),
        )
        todo.append(PlannedJob(spec, job_id, attempt + 1, payload, plan.data_path(spec)))
    return todo


def install_interrupt_handlers(cancel: threading.Event, force: threading.Event, notify: Callable[[str], None]) -> None:
    """First Ctrl-C: stop scheduling and terminate running jobs; second: kill them at once."""

    def handler(signum, frame):  # noqa: ARG001
        if not cancel.is_set():
            cancel.set()
            notify("stopping: no new jobs; running jobs are being terminated (Ctrl-C again to force)")
        else:
            force.set()
            notify("forcing: killing running jobs now")

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
