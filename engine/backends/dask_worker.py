"""The worker side of the Dask backend: what runs inside a Dask worker process.

``run_on_worker`` is the Dask task: the job's npz travels inside its payload (``data_bytes``: no
shared filesystem, no scattered data to lose with a worker), the job runs in a scratch dir under
the worker's local directory with every limit of the local backend, and the outcome returns as
plain data. Ctrl-C reaches running jobs through ``client.run`` (a per-run flag the job polls),
never by killing worker threads.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine import private
from srtui.engine.backends.base import FollowUp, usable_cores
from srtui.engine.backends.dask_config import job_span_s
from srtui.engine.process import tree
from srtui.engine.process.job_io import JobOutcome, JobPayload, now_iso
from srtui.engine.process.supervise import run_job
from srtui.engine.spec import Limits
from srtui.engine.untrusted import remove_tree

if TYPE_CHECKING:
    from distributed import Scheduler, Worker

TOPIC_PREFIX = "srtui-started-"

_flags_lock = threading.Lock()
_run_flags: dict[str, tuple[threading.Event, threading.Event]] = {}


def _flags(run_token: str) -> tuple[threading.Event, threading.Event]:
    """(cancel, force) events of one run in this worker process."""
    with _flags_lock:
        return _run_flags.setdefault(run_token, (threading.Event(), threading.Event()))


def signal_run(run_token: str, which: str) -> None:
    """Called on every worker by the driver (client.run): 'cancel' or 'force' this run's jobs."""
    cancel, force = _flags(run_token)
    (force if which == "force" else cancel).set()


def forget_run(run_token: str) -> None:
    with _flags_lock:
        _run_flags.pop(run_token, None)


def dask_setup(worker: Worker) -> None:  # a Dask preload hook for LocalCluster workers
    """Local workers share the terminal's process group: Ctrl-C is the driver's to handle."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


_core_claim: tuple[int, int] | None = None  # (core, fd of its held lock) of this worker process
_core_lock = threading.Lock()


def worker_core(scope: str) -> int | None:
    """A distinct core for each worker process of one cluster on one host, whatever the
    workers are named: the first usable core whose lock file (per cluster ``scope``) no other
    worker holds. The lock lives as long as this process; more workers than cores share."""
    global _core_claim
    with _core_lock:
        if _core_claim is None:
            cores = usable_cores()
            if not cores:
                return None
            folder = private.folder_for("cores", scope)  # checked: ours, 0700 (engine/private.py)
            for core in cores:
                fd = private.open_file(folder / f"core-{core}", os.O_CREAT | os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                _core_claim = (core, fd)
                break
            else:
                _core_claim = (cores[os.getpid() % len(cores)], -1)
        return _core_claim[0]


def synthetic_outcome(
    job_id: str, attempt: int, status: str, error: str, started_at: str, host: str = ""
) -> JobOutcome:
    """An outcome for an attempt that produced none (worker died, cancelled before starting)."""
    return JobOutcome(job_id, attempt, status, host, started_at, now_iso(), 0.0, error=error)


def _retire_if_short(worker: Worker, limits: Limits) -> None:
    """A worker with a lifetime (SLURM walltime) starts no job it could not finish: it retires
    and the task goes back to the scheduler for a younger worker."""
    lifetime = getattr(worker, "lifetime", None)
    if not lifetime:
        return
    import psutil
    from distributed import Reschedule

    age = time.time() - psutil.Process().create_time()
    if age + job_span_s(limits) > lifetime:
        worker.loop.add_callback(worker.close_gracefully, reason="srtui: too little lifetime left for a job")
        raise Reschedule()


def run_on_worker(payload: JobPayload, run_token: str) -> JobOutcome:
    """The Dask task: run one job here under its limits and return the outcome as data."""
    from distributed import get_worker

    worker = get_worker()
    cancel, force = _flags(run_token)
    if cancel.is_set():
        return synthetic_outcome(
            payload.job_id,
            payload.attempt,
            "interrupted",
            "stopped by the driver (Ctrl-C) before it started",
            now_iso(),
            socket.gethostname(),
        )
    _retire_if_short(worker, payload.spec.limits)
    scratch = Path(worker.local_directory) / "srtui-jobs" / f"{payload.job_id}-a{payload.attempt}"
    topic = TOPIC_PREFIX + run_token

    def started(pid: int) -> None:
        worker.log_event(topic, {"job_id": payload.job_id, "attempt": payload.attempt, "pid": pid})

    core = worker_core(str(worker.scheduler.address))
    record = records_dir(payload.workspace_token) / f"{payload.job_id}-a{payload.attempt}"
    try:
        return run_job(payload, scratch, core=core, cancel=cancel, force=force, on_start=started, record=record)
    finally:
        with contextlib.suppress(OSError):
            remove_tree(scratch)  # logs and results came back in the outcome


def records_dir(workspace_token: str, make: bool = True) -> Path:
    """This host's folder of the records of a workspace's jobs' processes (srtui.engine.process.tree): one
    per user and workspace in srtui's private folder (engine/private.py: ours, 0700, checked), shared
    by the host's workers, so any of them (and the driver, for a local cluster) kills what the jobs
    of a dead worker left, even with a cleared environment."""
    return private.folder_for("pids", workspace_token, make)


def sweep_host(workspace_token: str) -> list[int]:
    """Run on every worker (client.run) and by the driver of a local cluster: the workspace's
    escapees on this host, by token and by the records of dead workers' jobs."""
    prefix = workspace_token + ":"
    killed = tree.sweep_orphans(prefix)
    return killed + tree.sweep_records(records_dir(workspace_token, make=False))


def run_follow_up(unit: FollowUp) -> Any:
    """The Dask task of a follow-up (a job's metrics): computed on this worker's core, under the
    follow-up's own deadlines (its processes are this worker's children); the result says where."""
    from distributed import get_worker

    worker = get_worker()
    core = worker_core(str(worker.scheduler.address))
    return unit.compute(core, f"dask worker {worker.name} ({socket.gethostname()})", keep=True)


def warm_on_worker(fn: Callable[[int | None], object], dask_worker: Worker) -> None:
    """``fn`` with this worker's core (``Client.run`` passes ``dask_worker``): what its
    follow-ups will start, started before them."""
    fn(worker_core(str(dask_worker.scheduler.address)))


def allowed_failures(dask_scheduler: Scheduler) -> int:
    return dask_scheduler.allowed_failures


def worker_ready() -> str:
    """Proves the worker imports this engine (it unpickles this function) and can run jobs."""
    import srtui.engine.process.job_worker  # noqa: F401

    return socket.gethostname()
