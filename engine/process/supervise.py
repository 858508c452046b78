"""The job function: run one job as a hard-limited subprocess and return its outcome as data.

``run_job`` is backend-independent: the local scheduler calls it from a slot thread, the Dask
backend calls it inside a Dask worker on another machine. It reads nothing from and writes
nothing to the workspace store; the driver records the returned ``JobOutcome``. What it is
handed and returns is srtui.engine.process.job_io's; the files of the job's scratch folder
(its data, job.json, the worker's result) srtui.engine.process.job_files'.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from srtui.engine import untrusted
from srtui.engine.process import cgroups, held, launch, measure, phases, seal, tree, watch
from srtui.engine.process.job_files import job_config, job_view, read_result, task_bytes, visible_one_line
from srtui.engine.process.job_io import JobOutcome, JobPayload, now_iso
from srtui.engine.process.worker_env import worker_environment
from srtui.engine.spec import WATCHDOG_MARGIN_S, Limits

LOG_CAP = 1 << 20  # bytes kept of each of stdout/stderr
TAIL_KEEP = 64 << 10  # of which the last bytes are always kept


class CappedReader(threading.Thread):
    """Drains a pipe, keeping the first LOG_CAP - TAIL_KEEP bytes and the last TAIL_KEEP bytes."""

    def __init__(self, pipe: IO[bytes], on_mark: Callable[[bytes], None] | None = None) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.on_mark = on_mark  # told each of the worker's marks it reads (srtui.engine.process.measure)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.dropped = 0

    def run(self) -> None:
        head_cap = LOG_CAP - TAIL_KEEP
        seen = b""
        while chunk := self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536):
            if self.on_mark is not None:
                for mark in measure.MARKS:
                    found, chunk = measure.find_mark(seen, chunk, mark)
                    if found:
                        self.on_mark(mark)
                seen = (seen + chunk)[-64:]
            room = head_cap - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail.append(chunk)
                self.tail_len += len(chunk)
                while self.tail_len - len(self.tail[0]) >= TAIL_KEEP:
                    self.dropped += len(self.tail[0])
                    self.tail_len -= len(self.tail.popleft())
        self.pipe.close()

    def value(self) -> bytes:
        tail = b"".join(self.tail)
        if len(tail) > TAIL_KEEP:
            self.dropped += len(tail) - TAIL_KEEP
            tail = tail[-TAIL_KEEP:]
        marker = f"\n[srtui: {self.dropped} bytes dropped]\n".encode() if self.dropped else b""
        return bytes(self.head) + marker + tail


_CGROUP_BASE: tuple[Path, set[str]] | bool | None = False


def _cgroup_base() -> tuple[Path, set[str]] | None:
    """Where job cgroups go (srtui.engine.process.cgroups), looked up once per driver."""
    global _CGROUP_BASE
    if _CGROUP_BASE is False:
        _CGROUP_BASE = cgroups.base()
    return _CGROUP_BASE  # type: ignore[return-value]


def _job_cgroup(token: str, mem_bytes: int) -> cgroups.JobCgroup | None:
    base = _cgroup_base()
    if base is None:
        return None
    try:
        return cgroups.JobCgroup(base[0], "job-" + token.replace(":", "-")[-60:], base[1], mem_bytes)
    except OSError:
        return None


@dataclass
class Started:
    """A job whose worker runs: what the steps after its start share."""

    proc: Any  # a Popen (exec) or a launch.ForkedProcess (fork)
    cgroup: cgroups.JobCgroup | None
    tracker: tree.TreeTracker
    readers: list[CappedReader]
    clock: measure.FitClock
    host: str
    started_at: str
    t0: float  # monotonic, at the start
    record: Path | None


def run_job(
    payload: JobPayload,
    scratch: Path,
    *,
    core: int | None = None,
    cancel: threading.Event | None = None,
    force: threading.Event | None = None,
    on_start: Callable[[int], None] | None = None,
    poll_s: float = 0.25,
    record: Path | None = None,
) -> JobOutcome:
    """Run one job under its limits; always returns an outcome, never raises for job failures.
    ``record``: where the job's processes are written down while it runs (removed at its end), so
    a run after this driver died kills what the job left (srtui.engine.process.tree.sweep_records).
    The steps: its scratch and data, its configuration, its start, the wait for its exit
    (srtui.engine.process.watch), the sweep of what it left, its outcome."""
    limits = payload.spec.limits
    scratch = scratch.absolute()
    unwritten = _write_data(payload, scratch)
    if unwritten is not None:
        return unwritten
    sealing = seal.isolation()
    if sealing.mode != "namespaces":
        seal.protect_driver()
    job = job_config(payload, sealing.mode)
    phases.mark("scratch and data")
    started = _start(payload, scratch, job, core, record)
    if isinstance(started, JobOutcome):
        return started
    end = watch.wait_for_exit(
        started.proc,
        started.tracker,
        started.cgroup,
        limits,
        scratch,
        started.t0,
        cancel=cancel,
        force=force,
        on_start=on_start,
        poll_s=poll_s,
    )
    phases.mark("exit seen")
    leftover = _sweep(started, end)
    outcome = _outcome(payload, scratch, started, end, leftover)
    outcome.notes = measure.provenance(outcome.notes, payload.python, sealing.mode, payload.allow_network)
    phases.mark("logs and result read")
    return outcome


def _error(payload: JobPayload, why: str, host: str | None = None, started_at: str | None = None) -> JobOutcome:
    """The outcome of a job that could not start (``why`` its one line)."""
    now = now_iso()
    return JobOutcome(
        payload.job_id, payload.attempt, "error", host or socket.gethostname(), started_at or now, now, 0.0, error=why
    )


def _write_data(payload: JobPayload, scratch: Path) -> JobOutcome | None:
    """A fresh scratch dir with the job's own copy of what its method may see (never y_test,
    the row numbers or the truth); the job's error outcome if the data cannot be written."""
    untrusted.real_dir(scratch.parent)  # a link planted in place of cache/ or cache/jobs is not followed
    untrusted.remove_tree(scratch)  # what an earlier attempt left (a link, a FIFO) goes
    untrusted.real_dir(scratch)
    try:
        untrusted.write_file(scratch / "data.npz", job_view(task_bytes(payload)), readable=True)
    except (OSError, ValueError, KeyError, untrusted.UntrustedFileError) as exc:
        return _error(payload, f"cannot write the job's data: {visible_one_line(exc)}")
    return None


def _environment(payload: JobPayload, core: int | None) -> tuple[str, dict[str, str], cgroups.JobCgroup | None]:
    """The job's token, its worker's environment and its cgroup (None where there is none)."""
    tree.become_subreaper()
    token = f"{payload.workspace_token}:{payload.job_id}:{payload.attempt}:{uuid.uuid4().hex[:8]}"
    limit_env, _seal_limits = payload.spec.limits.crossing()
    env = worker_environment(payload.extra_env)
    env.update({tree.TOKEN_ENV: token, **limit_env})
    if core is not None:
        env["SRTUI_CORE"] = str(core)
    cgroup = _job_cgroup(token, int(payload.spec.limits.mem_mb * 2**20))
    phases.mark("environment and cgroup")
    if cgroup is not None:
        env[cgroups.ENV] = cgroup.procs_file  # the worker joins it before any method code runs
    if payload.python is not None:  # the method's own environment: srtui's engine, nothing else of ours
        env["PYTHONPATH"] = payload.python_path or ""
    return token, env, cgroup


def _start(
    payload: JobPayload, scratch: Path, job: dict[str, Any], core: int | None, record: Path | None
) -> Started | JobOutcome:
    """Start the worker (exec'd, or forked by its server: srtui.engine.process.launch), its readers
    and its pid record; the job's error outcome if it cannot start."""
    token, env, cgroup = _environment(payload, core)
    host = socket.gethostname()
    start = launch.starter(payload.launcher, payload.method_ref or payload.spec.method, env, payload.python)
    phases.mark("launcher ready")
    job["spawned_at"] = time.time()  # the worker takes its own start-up time out of the budget
    # readable whatever the driver's umask: under root the job is a uid of its own
    untrusted.write_file(scratch / "job.json", json.dumps(job).encode(), readable=True)
    started_at = now_iso()
    t0 = time.monotonic()
    try:
        proc = start(scratch)
        phases.mark("job.json, worker started")
    except OSError as exc:
        if cgroup is not None:
            cgroup.remove()
        return _error(payload, f"cannot start worker: {exc}", host, started_at)
    tree.claim_root(proc.pid)
    if cgroup is not None:
        # moved here too, at once: the move costs the kernel an RCU grace period, paid here on
        # the slot while the worker sets up; its own join (job_worker._harden) then mostly finds it in
        cgroup.add(proc.pid)
    trackers: list[tree.TreeTracker] = []  # (made below; the clock reads its pids from a reader thread)
    folder = (payload.method_ref or "").startswith("srbench:")  # untrusted code: its end mark is not
    clock = measure.FitClock(lambda: [p for t in trackers for p in list(t.seen) if p not in t.gone], folder)
    readers = [CappedReader(proc.stdout, clock.mark), CappedReader(proc.stderr)]
    for r in readers:
        r.start()
    phases.mark("readers started")
    if record is not None:
        try:
            tree.start_record(record)
        except (OSError, untrusted.UntrustedFileError):
            record = None  # the token sweep still finds what keeps its environment
    phases.mark("pid record")
    trackers.append(tree.TreeTracker(proc.pid, token, record))
    return Started(proc, cgroup, trackers[0], readers, clock, host, started_at, t0, record)


def _sweep(started: Started, end: watch.Exit) -> list[int]:
    """The root is gone; whatever of its tree is left (children, escapees) goes now: the whole
    cgroup at once where there is one (a fork loop outruns any kill by pid), then what is
    known. Returns the pids that outlived it all."""
    proc, cgroup = started.proc, started.cgroup
    proc.returncode = os.waitstatus_to_exitcode(end.status_word)  # keep Popen consistent
    tree.release_root(proc.pid)
    leftover = cgroup.end() if cgroup is not None else []
    leftover += started.tracker.kill_all()
    if started.record is not None and not leftover:
        untrusted.remove_tree(started.record)  # nothing of the job is left to find
    phases.mark("tree swept")
    for r in started.readers:
        r.join(timeout=2.0)
    return leftover


def _outcome(payload: JobPayload, scratch: Path, started: Started, end: watch.Exit, leftover: list[int]) -> JobOutcome:
    """The job's outcome: its figures, its status (a limit, a crash, the watchdog, a lost
    server) and, when ok, what its worker wrote."""
    limits, cgroup, rusage = payload.spec.limits, started.cgroup, end.rusage
    peak = max(started.tracker.peak_rss, end.peak_files, rusage.ru_maxrss * 1024, cgroup.peak_bytes() if cgroup else 0)
    reason, detail = _end_reason(end, limits, scratch, cgroup)
    rc = started.proc.returncode
    outcome = JobOutcome(
        job_id=payload.job_id,
        attempt=payload.attempt,
        status="ok",
        host=started.host,
        started_at=started.started_at,
        ended_at=now_iso(),
        wall_s=end.wall_s,
        cpu_s=rusage.ru_utime + rusage.ru_stime,
        returncode=rc,
        signal=-rc if rc < 0 else None,
        peak_rss_mb=peak / 2**20,
        limit_detail=detail,
        stdout=started.readers[0].value(),
        stderr=started.readers[1].value(),
        leftover_pids=leftover,
    )
    if reason is None and rc == -signal.SIGKILL and end.wall_s >= limits.time_s + limits.grace_s:
        # killed past the wall limit and the grace without the driver's word: the seal's watchdog
        # (srtui.engine.process.seal), which ends a job the driver could not (it was stopped, say)
        reason, detail = (
            "timeout",
            (
                f"killed by its watchdog at {end.wall_s:.2f} s (wall limit {limits.time_s:g} s + grace "
                f"{limits.grace_s:g} s + {WATCHDOG_MARGIN_S:g} s): the driver did not end it in time"
            ),
        )
        outcome.limit_detail = detail
    outcome.status = _classify(outcome, reason, limits.effective_cpu_s)
    if reason is None and getattr(
        started.proc, "lost", None
    ):  # fork: its server died under it (srtui.engine.process.launch)
        outcome.status, outcome.error = "lost", started.proc.lost
    if outcome.status == "ok":
        read_result(scratch, outcome)
        # srtui's figures, measured here (srtui.engine.process.measure), never the job's own
        outcome.fit_s, outcome.energy_j, outcome.energy_method = started.clock.figures(
            started.t0 + end.wall_s, started.t0, outcome.cpu_s, outcome.peak_rss_mb
        )
    return outcome


def _end_reason(
    end: watch.Exit, limits: Limits, scratch: Path, cgroup: cgroups.JobCgroup | None
) -> tuple[str | None, str | None]:
    """Why srtui ended the job (None: it ended by itself), with what the end shows: a disk limit
    passed after the last check, the kernel's OOM killer; the job's cgroup goes."""
    reason, detail = end.reason, end.detail
    if reason is None:  # a job that wrote past its disk limit and ended before a poll saw it
        over = held.over_limits(0, 0, limits, scratch, end.wall_s)
        reason, detail = over if over is not None else (None, detail)
    if cgroup is not None:
        if reason is None and cgroup.oom_killed():
            reason, detail = (
                "oom",
                f"the kernel's cgroup OOM killer stopped the job (memory.max {limits.mem_mb:.0f} MB)",
            )
        cgroup.remove()
    return reason, detail


def _classify(outcome: JobOutcome, reason: str | None, cpu_limit: int) -> str:
    if reason is not None:
        return reason
    if outcome.leftover_pids:  # never ok while a process the job created is alive
        outcome.error = (
            f"{len(outcome.leftover_pids)} process(es) of the job survived SIGKILL: {outcome.leftover_pids[:5]}"
        )
        return "error"
    rc = outcome.returncode or 0
    if rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and (outcome.cpu_s or 0) >= cpu_limit):
        outcome.limit_detail = f"CPU time {outcome.cpu_s:.1f} s reached limit {cpu_limit} s"
        return "cpu_timeout"
    if rc < 0:
        return "crashed"
    if rc > 0:
        outcome.error = _last_line(outcome.stderr) or f"worker exited with code {rc}"
        return "error"
    return "ok"


def _last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""
