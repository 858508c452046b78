"""SLURM worker jobs submitted and watched by srtui itself (dask-jobqueue only writes the script).

dask-jobqueue's own scaling hides the failures that matter: an ``sbatch`` error becomes a
traceback in its event loop, a worker job that exits at once is never noticed, a job that can
never be scheduled stays pending, and jobs with several worker processes are not replaced after
their workers' ``--lifetime``. Here every SLURM job is ours: ``sbatch`` with its stderr quoted,
``squeue`` polled, an ended job replaced while work remains if its workers had joined, and a
clear one-line error (with the job log's last line or the pending reason) if none ever will.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from srtui.engine.backends.base import BackendError

#: pending reasons SLURM never resolves by waiting
HOPELESS_REASONS = (
    "PartitionConfig",
    "PartitionNodeLimit",
    "PartitionTimeLimit",
    "BadConstraints",
    "InvalidAccount",
    "InvalidQOS",
    "ReqNodeNotAvail",
    "AssocMaxCpuPerJobLimit",
    "AssocMaxNodePerJobLimit",
    "QOSMaxCpuPerJobLimit",
    "QOSMaxNodePerJobLimit",
    "QOSMaxMemoryPerJob",
)
SQUEUE_EVERY_S = 2.0


@dataclass
class SlurmJob:
    index: int
    slurm_id: str
    submitted: float
    state: str = "PENDING"
    reason: str = ""
    joined: bool = False  # one of its workers reached the scheduler
    winding_down: bool = False  # joined, and some of its workers have left (lifetime): replace it now


@dataclass
class SlurmJobs:
    script: str  # dask-jobqueue's job script with the name placeholder
    log_dir: Path
    target: int  # SLURM jobs to keep alive while work remains
    worker_timeout: float  # seconds to wait for a first worker
    prefix: str  # worker names are PREFIX-<index>-<process>
    processes: int = 1  # worker processes per SLURM job
    jobs: dict[str, SlurmJob] = field(default_factory=dict)
    next_index: int = 0
    started: float = field(default_factory=time.monotonic)
    last_poll: float = 0.0
    ever_joined: bool = False

    def submit(self) -> SlurmJob:
        index = self.next_index
        self.next_index += 1
        name = f"{self.prefix}-{index}"
        script = self.script.replace("dummy-name", name)
        path = self.log_dir / f"{name}.sh"
        path.write_text(script)
        try:
            proc = subprocess.run(
                ["sbatch", "--parsable", "-o", str(self.log_path(index)), "-e", str(self.log_path(index)), str(path)],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendError(f"sbatch failed: {exc}") from None
        if proc.returncode != 0:
            raise BackendError(f"sbatch failed: {_last_line(proc.stderr) or f'exit {proc.returncode}'}")
        slurm_id = proc.stdout.strip().split(";")[0]
        job = SlurmJob(index, slurm_id, time.monotonic())
        self.jobs[slurm_id] = job
        return job

    def log_path(self, index: int) -> Path:
        return self.log_dir / f"{self.prefix}-{index}.log"

    def fill(self) -> None:
        while sum(not job.winding_down for job in self.jobs.values()) < self.target:
            self.submit()

    def _job_index(self, worker_name: str) -> int | None:
        match = re.match(re.escape(self.prefix) + r"-(\d+)(?:-\d+)?$", worker_name)
        return int(match.group(1)) if match else None

    def tend(self, seen: list[str], live: list[str], work_remains: bool, force: bool = False) -> None:
        """Poll squeue (every few seconds): mark joined jobs (a worker ``seen``), count a job
        whose ``live`` workers are fewer than it started as winding down and replace it while
        work remains, and raise BackendError when no worker will ever come."""
        if not force and time.monotonic() - self.last_poll < SQUEUE_EVERY_S:
            return
        self.last_poll = time.monotonic()
        joined = {self._job_index(str(name)) for name in seen}
        alive = [self._job_index(str(name)) for name in live]
        for job in self.jobs.values():
            if job.index in joined:
                job.joined = self.ever_joined = True
                job.winding_down = alive.count(job.index) < self.processes and _seen_all(job.index, seen, self)
        queue = self._squeue()
        for slurm_id, job in list(self.jobs.items()):
            if slurm_id in queue:
                job.state, job.reason = queue[slurm_id]
                if job.state == "PENDING" and job.reason in HOPELESS_REASONS:
                    raise BackendError(
                        f"SLURM job {slurm_id} can never start ({job.reason}): ask for fewer cores, less memory "
                        "or shorter walltime, or another queue"
                    )
                continue
            del self.jobs[slurm_id]  # ended: its workers retired (lifetime) or it failed
            if not job.joined:
                raise BackendError(f"SLURM job {slurm_id} ended before its workers joined: {self._log_cause(job)}")
        if work_remains:
            self.fill()
        if not self.ever_joined and time.monotonic() - self.started > self.worker_timeout:
            states = ", ".join(
                f"{i} {j.state}" + (f" ({j.reason})" if j.reason and j.reason != "None" else "")
                for i, j in self.jobs.items()
            )
            raise BackendError(f"no SLURM worker joined within {self.worker_timeout:g} s: {states or 'no job queued'}")

    def _squeue(self) -> dict[str, tuple[str, str]]:
        if not self.jobs:
            return {}
        try:
            proc = subprocess.run(
                ["squeue", "-h", "-j", ",".join(self.jobs), "-o", "%i|%T|%r"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendError(f"squeue failed: {exc}") from None
        if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
            raise BackendError(f"squeue failed: {_last_line(proc.stderr) or f'exit {proc.returncode}'}")
        out = {}
        for line in proc.stdout.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[1] not in (
                "COMPLETED",
                "FAILED",
                "CANCELLED",
                "TIMEOUT",
                "NODE_FAIL",
                "OUT_OF_MEMORY",
            ):
                out[parts[0]] = (parts[1], parts[2])
        return out

    def _log_cause(self, job: SlurmJob) -> str:
        path = self.log_path(job.index)
        try:
            text = path.read_text(errors="replace")
        except OSError:
            return f"no log at {path} (is it on a shared filesystem?)"
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for line in reversed(lines):
            if re.search(r"(Error|error|not found|No such file|denied|Killed|CANCELLED)", line):
                return f"{line[:300]} (log {path})"
        return f"{lines[-1][:300]} (log {path})" if lines else f"its log {path} is empty"

    def waiting(self) -> str:
        """Why no worker is there yet, for status: 'job 12 PENDING (Resources)'."""
        return ", ".join(
            f"job {i} {j.state}" + (f" ({j.reason})" if j.reason and j.reason != "None" else "")
            for i, j in self.jobs.items()
        )

    def cancel_all(self) -> None:
        if self.jobs:
            try:
                subprocess.run(["scancel", *self.jobs], capture_output=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.jobs.clear()


def _seen_all(index: int, seen: list[str], jobs: SlurmJobs) -> bool:
    """Did all of the job's worker processes join once (so a missing one has left)?"""
    return sum(jobs._job_index(str(name)) == index for name in seen) >= jobs.processes


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def default_log_dir(scratch_root: Path) -> Path:
    path = scratch_root / "slurm"
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o755)
    return path
