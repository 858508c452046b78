"""The monitor's snapshot: counts, running jobs, throughput and ETA, recent failures, the tuning
and metrics progress of the live runs; cheap to take again when nothing changed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from srtui.results.store.queries import (
    DriverCheck,
    FailureRow,
    MetricsProgress,
    Reader,
    metrics_progress,
    open_runs,
    recent_failures,
    run_progress,
    running_jobs,
)
from srtui.results.store.store import StoreError
from srtui.results.store.tuning import active_progress, progress_text


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class RunningJob:
    job_id: str
    label: str
    started: float | None  # epoch seconds
    time_s: float | None
    host: str
    #: the driver of its run is dead: the job is not running any more and becomes ``lost`` (and
    #: is retried) when the next ``srtui run`` starts
    driver_gone: bool = False


Failure = FailureRow


@dataclass(frozen=True)
class MonitorSnapshot:
    exists: bool
    counts: dict[str, int] = field(default_factory=dict)
    running: tuple[RunningJob, ...] = ()
    failures: tuple[Failure, ...] = ()
    active_runs: int = 0
    throughput: float | None = None  # finished jobs per minute in the active runs
    eta_s: float | None = None
    version: int | None = None
    #: runs still marked running whose driver process is dead (killed, machine rebooted)
    gone_runs: int = 0
    #: driver identities of the live runs, re-checked at every poll even when no data changed
    live_drivers: tuple[str, ...] = ()
    #: why an existing workspace cannot be read (newer schema, broken database), one line
    error: str | None = None
    #: the tuning of the suites being run, one line each (srtui.results.store.tuning.progress_text)
    tuning: tuple[str, ...] = ()
    #: the metrics of the live runs, computed in their slots (srtui.results.store.queries.metrics_progress)
    metrics: tuple[MetricsProgress, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def remaining(self) -> int:
        return self.counts.get("pending", 0) + self.counts.get("running", 0)


def monitor_snapshot(
    reader: Reader, previous: MonitorSnapshot | None = None, now: Callable[[], float] = time.time
) -> MonitorSnapshot:
    """Counts, running jobs, throughput/ETA and recent failures; cheap when nothing changed."""
    with reader.lock:
        try:
            store = reader.store()
        except StoreError as exc:
            return MonitorSnapshot(exists=False, error=str(exc))
        if store is None:
            return MonitorSnapshot(exists=False)
        version = reader.data_version()
        check = DriverCheck()
        if (
            previous is not None
            and previous.exists
            and previous.version == version
            and all(check(d) for d in previous.live_drivers)
        ):
            return previous  # nothing written and no driver died since the last poll
        counts = store.status_counts()
        runs = open_runs(store, check)
        live = [r for r in runs if r.driver_alive]
        # the same rule as the next `srtui run` applies (recovery): the job's driver is dead
        running = tuple(
            RunningJob(r.job_id, r.label, parse_time(r.started_at), r.time_s, r.host, driver_gone=not r.driver_alive)
            for r in running_jobs(store, check)
        )
        failures = tuple(recent_failures(store))
        done, remaining = run_progress(store, live)
        tuning = tuple(progress_text(p) for p in active_progress(store))
        metrics = tuple(metrics_progress(store, live))
    throughput = eta = None
    first = min((t for t in (parse_time(r.started_at) for r in live) if t is not None), default=None)
    if first is not None:
        elapsed = max(now() - first, 1e-6)
        throughput = done / elapsed * 60
        eta = remaining / (done / elapsed) if done else None
    return MonitorSnapshot(
        True,
        counts,
        running,
        failures,
        len(live),
        throughput,
        eta,
        version,
        gone_runs=len(runs) - len(live),
        live_drivers=check.live,
        tuning=tuning,
        metrics=metrics,
    )
