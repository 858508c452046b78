"""The Dask backend: each job is one Dask task that runs srtui.engine.process.supervise.run_job on a worker.

Driver side (``DaskBackend.run``, the loop in srtui.engine.backends.dask_run): claim a job in the store, submit it
with an explicit key
(never Dask's ``pure`` de-duplication), keep at most ``max_in_flight`` tasks out, collect them
through ``as_completed(...).add(...)``, score and record each outcome here - the driver stays
the only writer of the workspace. A worker that dies mid-job raises KilledWorker (the scheduler
runs with allowed-failures = 0): the attempt is recorded ``lost`` and the job resubmitted as
attempt + 1, up to srtui.engine.spec.MAX_AUTO_ATTEMPTS; a job whose worker left before starting it
(retired at its lifetime) goes back to the queue as the same attempt.

Every cluster start has a deadline and can be interrupted (srtui.engine.backends.dask_start); SLURM
worker jobs are submitted and watched by srtui (srtui.engine.backends.slurm_jobs). The worker side
is srtui.engine.backends.dask_worker.
"""

from __future__ import annotations

import math
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srtui.engine import private
from srtui.engine.backends.base import (
    BackendError,
    BackendOptions,
    Batch,
    PlannedJob,
    interleave,
)
from srtui.engine.backends.dask_config import (
    SCHEDULER_CONFIG,
    START_TIMEOUT_S,
    ClusterConfig,
    check_limits,
    load_cluster_config,
    local_kwargs,
    slurm_kwargs,
    ssh_kwargs,
)
from srtui.engine.backends.dask_start import (
    SSH_TOKEN_ENV,
    RecentLines,
    StartInterrupted,
    check_port_free,
    route_dask_logs,
    start_within,
    sweep_ssh_hosts,
)
from srtui.engine.backends.dask_worker import allowed_failures, warm_on_worker, worker_ready
from srtui.engine.backends.slurm_jobs import SlurmJobs, default_log_dir
from srtui.engine.spec import JobSpec

__all__ = ["DaskBackend", "StartInterrupted"]


def _first_line(exc: BaseException) -> str:
    """The innermost cause, in one line (Dask wraps it: 'Cluster failed to start: ...')."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


class DaskBackend:
    """Runs planned jobs as Dask tasks on a scheduler we connect to or a cluster we start."""

    name = "dask"

    def __init__(self, options: BackendOptions, scratch_root: Path) -> None:
        if options.dask_scheduler and options.cluster:
            raise BackendError("give either --dask-scheduler (a running scheduler) or --cluster (start one), not both")
        if options.dask_scheduler and options.cluster_config:
            raise BackendError("--cluster-config goes with --cluster local|ssh|slurm, not with --dask-scheduler")
        self.options = options
        self.scratch_root = scratch_root
        self.config: ClusterConfig | None = (
            None if options.dask_scheduler else load_cluster_config(options.cluster, options.cluster_config)
        )
        self.cluster: Any = None  # a distributed / dask_jobqueue cluster object
        self.client: Any = None  # distributed.Client (imported only when the backend starts)
        self.slurm: SlurmJobs | None = None
        self.poll_s = 0.2
        self.recent: RecentLines | None = None  # Dask's last log lines, to quote a failure's cause
        self.seen_workers: set[str] = set()
        self.started = time.monotonic()

    @property
    def address(self) -> str:
        return self.options.dask_scheduler or (self.cluster.scheduler_address if self.cluster else "")

    @property
    def kind(self) -> str:
        return self.config.kind if self.config else "scheduler"

    @property
    def where(self) -> str:
        if self.options.dask_scheduler:
            return f"dask scheduler at {self.options.dask_scheduler}"
        return f"dask {self.kind} cluster"

    @property
    def worker_timeout(self) -> float:
        return self.config.worker_timeout if self.config else START_TIMEOUT_S

    def expected_slots(self) -> int:
        return self.config.expected_slots() if self.config else 0

    # set-up ------------------------------------------------------------------------------------

    def prepare(self, specs: list[JobSpec]) -> None:
        """Check the jobs fit the cluster (SLURM walltime and memory), then start it if not yet
        up; BackendError before any job is submitted (and before anything is stored: the
        runner calls this before opening the store)."""
        if self.config is not None:
            check_limits(self.config, [s.limits for s in specs])
        if self.client is None:
            self._connect()

    def _connect(self) -> None:
        self.recent = route_dask_logs(self.options.log_path)
        token = uuid.uuid4().hex
        timeout = self.config.start_timeout if self.config else START_TIMEOUT_S
        try:
            start_within(
                lambda: self._start(token),
                what=self.where,
                timeout=timeout,
                cancel=self.options.cancel,
                cause=self._start_cause,
                abandon=lambda: self._abandon(token),
            )
            if self.kind == "slurm":
                self._submit_slurm_jobs()
        except BackendError:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - any start-up failure is one line for the CLI
            self.close()
            cause = self.recent.cause() if self.recent else ""
            detail = _first_line(exc)
            if cause and (detail.endswith("Worker failed to start") or ":" not in detail):
                detail = cause  # Dask's 'Worker failed to start' hides the remote error
            raise BackendError(f"cannot use the {self.where}: {detail}") from None
        self.started = time.monotonic()

    def _start(self, token: str) -> None:
        """Runs in the start thread: the cluster, the client, the checks of the workers."""
        import dask
        from distributed import Client

        with dask.config.set(SCHEDULER_CONFIG):
            if self.config is None:
                self.client = Client(self.options.dask_scheduler, timeout="10s")
            else:
                self.cluster = self._start_cluster(self.config, token)
                self.client = Client(self.cluster, timeout="30s")
        if self.config is None:
            failures = self.client.run_on_scheduler(allowed_failures)
            if failures != 0:
                raise BackendError(
                    f"the {self.where} re-runs tasks of dead workers (allowed-failures = {failures}); start it with "
                    "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 so srtui records and retries lost jobs itself"
                )
        if self.client.nthreads():
            self.client.run(worker_ready)

    def _start_cluster(self, config: ClusterConfig, token: str) -> Any:
        if config.kind == "local":
            import logging

            from distributed import LocalCluster

            kwargs = local_kwargs(config, self.options.n_slots)
            # the workers' folders (and the jobs' scratch dirs in them) in srtui's private folder,
            # not in dask's default $TMPDIR/dask-scratch-space, which another account can make first
            kwargs.setdefault("local_directory", str(private.private_dir("dask")))
            return LocalCluster(**kwargs, preload=["srtui.engine.backends.dask_worker"], silence_logs=logging.CRITICAL)
        if config.kind == "ssh":
            try:
                import asyncssh  # noqa: F401
            except ImportError:
                raise BackendError("--cluster ssh needs asyncssh (pip install asyncssh)") from None
            from distributed import SSHCluster

            kwargs = ssh_kwargs(config)
            options = kwargs["scheduler_options"]
            check_port_free(options["host"], int(options["port"]), "scheduler")
            # every remote process carries the token: a start abandoned mid-way can be swept
            # and -P: no folder of anyone's (the remote cwd) first on its sys.path (engine/private.py)
            python = kwargs.get("remote_python") or sys.executable
            kwargs["remote_python"] = f"{SSH_TOKEN_ENV}={token} {python} -P"
            return SSHCluster(**kwargs)
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise BackendError("--cluster slurm needs dask-jobqueue (pip install dask-jobqueue)") from None
        kwargs, _ = slurm_kwargs(config)
        options = kwargs["scheduler_options"]
        check_port_free(options.get("host", "127.0.0.1"), int(options["port"]), "scheduler")
        kwargs.setdefault("log_directory", str(default_log_dir(self.scratch_root)))
        kwargs["python"] = f"{kwargs.get('python') or sys.executable} -P"  # as every interpreter srtui starts
        return SLURMCluster(**kwargs)

    def _submit_slurm_jobs(self) -> None:
        assert self.config is not None  # only a started SLURM cluster submits jobs
        kwargs, scale = slurm_kwargs(self.config)
        log_dir = Path(self.config.settings.get("log_directory") or default_log_dir(self.scratch_root))
        self.slurm = SlurmJobs(
            self.cluster.job_script(),
            log_dir,
            scale.get("jobs", scale.get("minimum_jobs", 1)),
            self.config.worker_timeout,
            f"srtui-{uuid.uuid4().hex[:6]}",
            int(kwargs["processes"]),
        )
        self.slurm.fill()

    def _start_cause(self) -> str:
        cause = self.recent.cause() if self.recent else ""
        if cause or self.config is None or self.config.kind != "ssh":
            return cause
        s = self.config.settings
        hosts = ", ".join(dict.fromkeys(s["hosts"]))
        return f"no answer from {hosts} (is remote_python {s.get('remote_python', sys.executable)} right?)"

    def _abandon(self, token: str) -> None:
        """A start that never returned: sweep what it spawned on the SSH hosts."""
        if self.config is not None and self.config.kind == "ssh":
            kwargs = ssh_kwargs(self.config)
            sweep_ssh_hosts(kwargs["hosts"], kwargs["connect_options"], token)

    def warm_up(self, fn: Callable[[int | None], object]) -> None:
        """``fn(core)`` on every worker now (in the worker process), before any task."""
        if self.client is not None and self.client.nthreads():
            self.client.run(warm_on_worker, fn)

    def close(self) -> None:
        if self.slurm is not None:
            self.slurm.cancel_all()
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # noqa: BLE001 - closing a broken cluster must not hide the real error
                    pass
        self.client = self.cluster = self.slurm = None

    # during the run ----------------------------------------------------------------------------

    def workers(self) -> list[str]:
        names = [
            str(w.get("name", addr)) for addr, w in self.client.scheduler_info(n_workers=-1).get("workers", {}).items()
        ]
        self.seen_workers.update(names)
        return names

    def slots(self) -> int:
        live: int = sum(self.client.nthreads().values())
        return max(live, self.expected_slots(), 1)

    def tend(self, remaining: int) -> tuple[int, int]:
        """Keep the cluster serving the run: SLURM jobs replaced while ``remaining`` jobs are
        left, a deadline on the wait for a first worker. Returns (live workers, expected)."""
        live = self.workers()
        expected = self.expected_slots() or len(live)
        if self.slurm is not None and self.config is not None:
            kwargs, scale = slurm_kwargs(self.config)
            cores = int(kwargs["cores"])
            low, high = (
                (scale["jobs"], scale["jobs"]) if "jobs" in scale else (scale["minimum_jobs"], scale["maximum_jobs"])
            )
            self.slurm.target = min(high, max(low, math.ceil(remaining / cores))) if remaining else 0
            self.slurm.tend(sorted(self.seen_workers), live, remaining > 0)
        elif not self.seen_workers and time.monotonic() - self.started > self.worker_timeout:
            raise BackendError(f"no worker joined the {self.where} within {self.worker_timeout:g} s")
        return len(live), expected

    # the run -----------------------------------------------------------------------------------

    def run(self, jobs: list[PlannedJob], batch: Batch) -> None:
        """One batch of jobs (and the follow-ups they leave, on the workers); the cluster stays
        up for the next batch until ``close``."""
        self.prepare([job.spec for job in jobs])
        from srtui.engine.backends.dask_run import DaskRun

        DaskRun(self, batch).run(interleave(jobs))
