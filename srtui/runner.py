"""Planning and driving a run: suite -> tasks and job specs -> backend -> store.

Used by `srtui run` and by the app's "start a run". No Textual here. Everything that can fail
on user input (names, limits, workspace) is checked in ``plan_run`` before the store is touched.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import signal
import socket
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import proctree
from engine.backends import BackendError, BackendOptions, backend_kind, make_backend
from engine.launcher import JobOutcome, JobPayload, now_iso
from engine.methods import registry
from engine.methods.srbench_eval import OPTIONS_KEY
from engine.scheduler import PlannedJob, RunState, SinkError, usable_cores
from engine.spec import JobSpec, Limits, SpecError
from engine.tuning import ProtocolError, get_protocol
from engine.workspace import Workspace, WorkspaceError
from results.store import Store, StoreError, needs_run, open_store, pack_predictions
from srtui.protocols import final_specs, plan_searches
from tasks.catalogue import TaskContext, TaskError, entry, get_task
from tasks.suites import Suite, SuiteError, load_suite

MAX_SEEDS = 1000  # SRBench uses 10; beyond this a count is a typo, and planning it costs minutes
MAX_JOBS = 1024  # slots of one driver (threads, pipes); a cluster scales by workers, not slots


class RunError(Exception):
    """Bad run request; one line for the CLI."""


class RunInterrupted(RunError):
    """Ctrl-C before any job was claimed (while a cluster started): exit 130, nothing stored."""


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
    #: how method folders run (SRBench's --tuned, -test, scaling); None: the suite's [srbench]
    srbench: dict[str, Any] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    backend: str | None = None  # None: dask if a cluster option is given, else local
    scheduler: str | None = None
    cluster: str | None = None
    cluster_config: Path | None = None
    metrics: bool = True  # compute the results metrics at the end of the run
    oversubscribe: bool = False  # allow --jobs above the usable cores (local backend)
    protocol: str | None = None  # overrides the suite's (engine.tuning.PROTOCOLS)


@dataclass
class RunPlan:
    suite: Suite
    workspace: Workspace
    specs: list[JobSpec]
    method_refs: dict[str, str]  # method name -> how the worker loads it
    data_paths: dict[str, str]  # task name -> npz
    n_slots: int  # local slots (and LocalCluster workers, metrics processes)
    backend: str = "local"
    slots_text: str = ""  # the slots the run will have, for --dry-run
    notes: list[str] = field(default_factory=list)  # said to the user before the run
    searches: list = field(default_factory=list)  # srtui.protocols.Search: finals chosen after tuning
    fold_paths: dict[str, str] = field(default_factory=dict)  # tuning data fingerprint -> npz

    def __post_init__(self) -> None:
        self.slots_text = self.slots_text or f"{self.n_slots} slots"

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
    cores = len(usable_cores())
    local = not (req.backend == "dask" or req.scheduler or req.cluster or req.cluster_config)
    if req.jobs is not None and local and req.jobs > cores and not req.oversubscribe:
        raise RunError(f"--jobs {req.jobs} is more than the {cores} usable core(s): jobs would share cores and "
                       "their times would not compare (--oversubscribe to do it anyway)")
    if req.jobs is not None and req.jobs > MAX_JOBS:
        raise RunError(f"--jobs must be at most {MAX_JOBS}, got {req.jobs}")
    if req.seeds is not None and not 1 <= req.seeds <= MAX_SEEDS:
        raise RunError(f"--seeds must be between 1 and {MAX_SEEDS}, got {req.seeds}")

    method_refs, notes = _folder_refs(req)
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
    srbench_opts = _srbench_options(suite, req)
    specs = []
    fingerprints = {name: task.fingerprint() for name, task in built.items()}
    for task_name, seed in pairs:
        for method in methods:
            params = {**suite.params.get(method, {}), **req.params.get(method, {})}
            if method_refs[method].startswith(registry.SRBENCH_PREFIX) and srbench_opts:
                params[OPTIONS_KEY] = srbench_opts
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
    n_slots = req.jobs or cores
    kind, slots_text = _check_backend(req, specs, n_slots)
    return RunPlan(suite, workspace, specs, method_refs, data_paths, n_slots, kind, slots_text, notes,
                   searches, fold_paths)


def _check_backend(req: RunRequest, specs: list[JobSpec], n_slots: int) -> tuple[str, str]:
    """The backend the request implies, its cluster config checked against the jobs' limits
    (nothing started), and the slots the run will have, said in words."""
    try:
        kind = backend_kind(req.backend, req.scheduler, req.cluster, req.cluster_config)
        if kind != "dask" or req.scheduler:
            return kind, (f"slots: those of the workers of {req.scheduler}" if req.scheduler else f"{n_slots} slots")
        from engine.backends.dask_config import check_limits, load_cluster_config

        config = load_cluster_config(req.cluster, req.cluster_config)
        check_limits(config, [s.limits for s in specs])
    except BackendError as exc:
        raise RunError(str(exc)) from None
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
    for folder in req.method_dirs:
        folder = folder.resolve()
        if not (folder / "regressor.py").is_file():
            raise RunError(f"--method-dir {folder}: no regressor.py there (an SRBench method folder has one)")
        if folder.name in refs:
            raise RunError(f"--method-dir {folder}: two method folders are named {folder.name!r}")
        if folder.name in registry.BUILTIN and folder.name not in (req.methods or []):
            notes.append(f"--method-dir {folder}: not run, {folder.name!r} is a built-in method; "
                         f"name it with --methods {folder.name} to run the folder instead")
            continue
        refs[folder.name] = registry.SRBENCH_PREFIX + str(folder)
    return refs, notes


def _srbench_options(suite: Suite, req: RunRequest) -> dict[str, Any]:
    """The run's folder options (request over suite), as the job params carry them."""
    from engine.methods.srbench_eval import RunOptions, SRBenchError

    merged = {**suite.srbench, **{k: v for k, v in req.srbench.items() if v is not None}}
    try:
        return RunOptions.from_params({OPTIONS_KEY: merged}).as_params()
    except SRBenchError as exc:
        raise RunError(str(exc)) from None


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
    """Writes job lifecycle events into the store and job logs into the workspace.

    A finished job's outcome is committed first, in its own transaction; its log files come
    after and may fail alone. Anything the store or the disk refuses becomes a SinkError (one
    line), which stops the run instead of a slot thread."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.logs = store.workspace.logs

    def claim(self, job: PlannedJob, started_at: str, host: str) -> bool:
        try:
            return self.store.claim(job.job_id, job.attempt, self.run_id, started_at, host)
        except (sqlite3.Error, OSError) as exc:
            raise SinkError(f"cannot record in {self.store.workspace.db_path}: {exc}") from None

    def started(self, job: PlannedJob, pid: int) -> None:
        try:
            self.store.set_worker_pid(job.job_id, pid)
        except (sqlite3.Error, OSError):
            pass  # informational; the outcome is what must be recorded

    def workers(self, live: int, expected: int) -> None:
        """A cluster run's workers, 'live/expected', for `srtui status` (cleared at the end)."""
        self.store.set_meta(workers_key(self.run_id), f"{live}/{expected or '?'}")

    def finished(self, job: PlannedJob, outcome: JobOutcome, fields: dict) -> None:
        try:
            self._record(job, outcome, fields)
        except (sqlite3.Error, OSError) as exc:
            why = f"cannot record in {self.store.workspace.db_path}: {exc}"
            try:
                self.store.mark_interrupted(job.job_id, job.attempt, now_iso(), why)
            except (sqlite3.Error, OSError):
                pass  # left running: the next run's recovery retries it as lost
            raise SinkError(why) from None
        for stream, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
            path = self.logs / f"{job.job_id}.a{job.attempt}.{stream}"
            try:
                if data:
                    path.write_bytes(data)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)  # a cut log frees its space; the stored tail remains
                raise SinkError(f"cannot write job logs in {self.logs}: {exc.strerror or exc}", recorded=True) from None

    def _record(self, job: PlannedJob, outcome: JobOutcome, fields: dict) -> None:
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


def workers_key(run_id: str) -> str:
    return f"workers:{run_id}"


def recover(store: Store) -> tuple[int, int]:
    """After a driver crash: running jobs of dead drivers become lost; their orphans are killed."""
    lost = 0
    for job in store.running_jobs():
        driver = job.get("driver") or ""
        if driver and proctree.identity_alive(driver):
            continue
        if store.mark_lost(job["job_id"], job["attempt"], now_iso(), "the driver running this job died"):
            lost += 1
    store.end_dead_runs(lambda driver: bool(driver) and proctree.identity_alive(driver), now_iso())
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
    cancel = cancel or threading.Event()
    force = force or threading.Event()
    if backend is None:  # set up first: a bad backend request must not touch the store
        backend = _start_backend(plan, req, cancel)
    try:
        store = open_store(plan.workspace, create=True)
    except (StoreError, WorkspaceError) as exc:
        raise RunError(str(exc)) from None
    try:
        lost, _ = recover(store)
        todo = _todo(plan, store, plan.specs, req.retry_failed)
        state = RunState(total=len(todo))
        planned, queued = len(plan.specs), len(todo)
        run_id = store.begin_run(plan.suite.name, proctree.driver_identity(), socket.gethostname(), sys.argv, now_iso())
        sink = StoreSink(store, run_id)
        failed = False
        if plan.searches and hasattr(backend, "keep_open"):
            backend.keep_open = True  # one cluster for the tuning and the final fits; closed below
        try:
            try:
                backend.run(todo, sink, state, cancel, force, (lambda: on_state(state)) if on_state else None)
                if plan.searches and not cancel.is_set() and state.failure is None:  # the final fits start when the tuning is done
                    finals = final_specs(plan.searches, store.scores)
                    todo = _todo(plan, store, finals, req.retry_failed)
                    planned, queued = planned + len(finals), queued + len(todo)
                    with state.lock:
                        state.total += len(todo)
                    backend.run(todo, sink, state, cancel, force, (lambda: on_state(state)) if on_state else None)
            except BackendError as exc:
                failed = True
                raise RunError(str(exc)) from None
            if not cancel.is_set() and state.failure is None and req.metrics:
                # the published metrics (sizes, symbolic solution, ...) for the finished jobs, in a
                # process pool with per-operation timeouts; cached, so a resumed run only adds
                from results.metrics import compute_for_store

                if on_metrics:
                    on_metrics("computing metrics")
                compute_for_store(store, workers=plan.n_slots, suite=plan.suite.name, progress=on_metrics)
        finally:
            try:
                # a store/disk failure first; then Ctrl-C (a cluster cancelled by it raises too)
                end = ("failed" if state.failure else "interrupted" if cancel.is_set()
                       else "failed" if failed else "done")
                store.end_run(run_id, end, now_iso())
                store.set_meta(workers_key(run_id), None)
            except (sqlite3.Error, OSError) as exc:
                state.fail(f"cannot record in {plan.workspace.db_path}: {exc}")
            close = getattr(backend, "close", None)
            if close is not None:
                close()
        if state.failure:
            done = state.done - state.counts.get("interrupted", 0)
            raise RunError(f"run stopped: {state.failure}; the {done} job(s) that finished are recorded, "
                           "the others are retried by the next `srtui run`")
        return RunResult(run_id, state, planned - queued, lost, cancel.is_set())
    finally:
        store.close()


def _start_backend(plan: RunPlan, req: RunRequest, cancel: threading.Event):
    options = BackendOptions(plan.backend, plan.n_slots, req.scheduler, req.cluster, req.cluster_config,
                             cancel=cancel, log_path=plan.workspace.logs / "dask.log")
    backend = None
    try:
        backend = make_backend(options, plan.workspace.jobs_dir)
        prepare = getattr(backend, "prepare", None)
        if prepare is not None:
            prepare(plan.specs)  # SLURM walltime/memory against the limits, the cluster started
    except BackendError as exc:
        if cancel.is_set():
            raise RunInterrupted(str(exc)) from None
        raise RunError(str(exc)) from None
    return backend


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

    def handler(signum, frame):
        if not cancel.is_set():
            cancel.set()
            notify("stopping: no new jobs; running jobs are being terminated (Ctrl-C again to force)")
        else:
            force.set()
            notify("forcing: killing running jobs now")

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    _keep_handlers(handler)


_original_signal = signal.signal


def _keep_handlers(ours) -> None:
    """Libraries imported later must not take Ctrl-C away from the run (dask_jobqueue sets
    SIGINT to sys.exit() on import): while our handler is installed, other code's changes to
    SIGINT/SIGTERM are ignored; everything else passes through."""

    def guarded(signum, handler):
        if signum in (signal.SIGINT, signal.SIGTERM) and handler is not ours and signal.getsignal(signum) is ours:
            return ours
        return _original_signal(signum, handler)

    signal.signal = guarded
