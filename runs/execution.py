"""Driving a planned run: the backend, the store, the jobs, the searches' later jobs, the metrics.

``execute`` takes a ``RunPlan`` (srtui.runs.planning) to its end: the backend is set up before
the store is opened and closed in a ``finally`` whatever happens after; every job ends with a
record. ``jobs_to_run`` says, read-only, which of a plan's jobs a run would start (--dry-run).
"""

from __future__ import annotations

import socket
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from srtui.engine.backends import make_backend
from srtui.engine.backends.base import (
    Backend,
    BackendError,
    BackendOptions,
    Batch,
    PlannedJob,
    RunState,
    settle,
)
from srtui.engine.spec import JobSpec
from srtui.results.store.store import Store, needs_run, open_store
from srtui.runs.errors import RunError, RunInterrupted
from srtui.runs.keys import workers_key
from srtui.runs.options import RunRequest
from srtui.runs.planning import RunPlan, env_data_dir
from srtui.runs.tuning_search import next_jobs, settled_tuning_jobs

if TYPE_CHECKING:  # the metrics (sympy) and the job machinery load when a run starts, not when it is planned
    from srtui.results.metrics.tasks import MetricsFeed


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
    from srtui.engine.process.job_io import now_iso
    from srtui.runs.recovery import recover
    from srtui.runs.sink import StoreSink

    lost, _ = recover(store)
    settled = settled_tuning_jobs(plan.searches, store.scores) if req.retry_failed else set()
    todo = _todo(plan, store, plan.specs, req.retry_failed, settled)
    # a search's later jobs (halving iterations, the final fit) are counted from the start, so the
    # progress counter's total holds still as they are planned
    ahead = plan.later_jobs()
    state = RunState(total=len(todo) + ahead)
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
            planned, queued = _run_jobs(plan, req, store, backend, batch, run_id, todo, settled, ahead)
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


def _run_jobs(
    plan: RunPlan,
    req: RunRequest,
    store: Store,
    backend: Backend,
    batch: Batch,
    run_id: str,
    todo: list[PlannedJob],
    settled: set[str],
    ahead: int,
) -> tuple[int, int]:
    """The jobs, then the searches' next ones as they become known, until none is left or the
    run stops; (jobs planned, jobs queued), the planned jobs' and those the searches added."""
    state, cancel = batch.state, batch.cancel
    planned, queued = len(plan.specs), len(todo)
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
    return planned, queued


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
        store, plan.suite.name, data_dir=req.data_dir or env_data_dir(), state=state, on_change=on_change, run_id=run_id
    )
    feed.seed()
    return feed


def _end_run(plan: RunPlan, store: Store, run_id: str, state: RunState, cancel: threading.Event, failed: bool) -> None:
    """The run's end in the store: a store/disk failure first; then Ctrl-C (a cluster cancelled
    by it raises too); a backend that went down; else done."""
    from srtui.engine.process.job_io import now_iso

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
    from srtui.engine.process.job_io import JobPayload

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
