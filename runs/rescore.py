"""`srtui rescore`: the metrics of finished jobs, computed again (or where missing).

On this machine it is the post-run pass (srtui.results.metrics.compute.compute_for_store: a process pool,
models de-duplicated across jobs). With a cluster it is the run's own machinery: each job's
metrics a task of the Dask backend (srtui.results.metrics.tasks), computed on the workers and written
here, so the cluster does the work, not the driver's machine.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srtui.engine.backends import backend_kind, make_backend
from srtui.engine.backends.base import BackendOptions, Batch, PlannedJob, RunState, usable_cores
from srtui.engine.process.job_io import JobOutcome
from srtui.engine.workspace import Workspace
from srtui.results.metrics.compute import compute_for_store
from srtui.results.metrics.tasks import MetricsFeed, warm_worker
from srtui.results.store.store import Store


@dataclass
class RescoreRequest:
    suite: str | None = None
    force: bool = False  # every job's metrics, not only the missing ones
    workers: int | None = None  # processes (local) or slots (a local cluster)
    timeout: float = 10.0
    backend: str | None = None
    dask_scheduler: str | None = None
    cluster: str | None = None
    cluster_config: Path | None = None
    data_dir: Path | None = None


class _NoJobs:
    """The sink of a backend run that has only follow-ups: no job is claimed or recorded."""

    def claim(self, job: PlannedJob, started_at: str, host: str) -> bool:
        return False

    def started(self, job: PlannedJob, pid: int) -> None:
        """No job runs."""

    def finished(self, job: PlannedJob, outcome: JobOutcome, fields: dict[str, object]) -> None:
        """No job runs."""

    def workers(self, live: int, expected: int) -> None:
        """Only a run shows its workers in `srtui status`."""


def rescore(
    ws: Workspace, req: RescoreRequest, say: Callable[[str], None], cancel: threading.Event | None = None
) -> dict[str, Any]:
    """Compute the metrics; returns a summary (what was computed, and where)."""
    kind = backend_kind(req.backend, req.dask_scheduler, req.cluster, req.cluster_config)
    store = Store(ws)
    try:
        if kind == "local":
            summary = compute_for_store(
                store,
                workers=req.workers,
                timeout=req.timeout,
                only_missing=not req.force,
                suite=req.suite,
                data_dir=req.data_dir,
                progress=say,
            )
            return summary | {"where": ["this machine (metrics pool)"]}
        return _on_cluster(ws, store, req, kind, say, cancel or threading.Event())
    finally:
        store.close()


def _on_cluster(
    ws: Workspace, store: Store, req: RescoreRequest, kind: str, say: Callable[[str], None], cancel: threading.Event
) -> dict[str, Any]:
    options = BackendOptions(
        kind,
        req.workers or len(usable_cores()) or 1,
        req.dask_scheduler,
        req.cluster,
        req.cluster_config,
        cancel=cancel,
        log_path=ws.logs / "dask.log",
    )
    backend = make_backend(options, ws.jobs_dir)
    try:
        backend.prepare([])
        backend.warm_up(functools.partial(warm_worker, timeout=req.timeout))  # part of bringing the workers up
        feed = MetricsFeed(store, req.suite, req.timeout, req.data_dir)
        queued = feed.seed(only_missing=not req.force)
        say(f"metrics of {queued} job(s) on the cluster, {req.timeout:g} s per operation")
        if queued:
            began = time.monotonic()
            backend.run([], Batch(_NoJobs(), RunState(total=0), cancel, threading.Event(), None, feed))
            feed.finish()
            say(f"metrics of {feed.done} job(s) stored in {time.monotonic() - began:.1f} s; stopping the cluster")
    finally:
        backend.close()
    return {"jobs": queued, "done": feed.done, "where": sorted(set(feed.where.values()))}
