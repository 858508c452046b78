"""Watching a started job until its worker exits: the wait, the limits, the stop.

One step of ``srtui.engine.process.supervise.run_job``. The wait sleeps on the worker's exit: its
pidfd (exec) or the status pipe its fork server writes when it reaps the job (fork), so the exit
is seen the moment it is told; every ``poll_s`` between (the pid is told at a first wake after
``PID_AFTER_S``) the job's tree, memory, disk and time are checked against its limits, and a job
over one is stopped (SIGTERM, then after the grace the cgroup's kill and SIGKILL to every process seen).
"""

from __future__ import annotations

import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srtui.engine.process import cgroups, held, launch, tree
from srtui.engine.spec import Limits

#: a job's pid is told (``on_start``: the store's ``worker_pid``, shown by `srtui status`) once it
#: has run this long: a job of a few milliseconds costs no write. What a dead driver's jobs left
#: is found by their pid record and token (srtui.engine.process.tree), written before this
PID_AFTER_S = 0.05


@dataclass
class Exit:
    """How the wait ended: the worker's wait status and rusage, why srtui stopped it (None: it
    ended by itself), and the most memory its processes and files held at a check."""

    status_word: int
    rusage: Any
    reason: str | None
    detail: str | None
    peak_files: int
    wall_s: float


@dataclass
class Stop:
    """Why and when the driver stops the job (``kill_at``: the SIGKILL, after the grace)."""

    reason: str | None = None
    detail: str | None = None
    kill_at: float | None = None


def wait_for_exit(
    proc: Any,
    tracker: tree.TreeTracker,
    cgroup: cgroups.JobCgroup | None,
    limits: Limits,
    scratch: Path,
    t0: float,
    *,
    cancel: threading.Event | None,
    force: threading.Event | None,
    on_start: Callable[[int], None] | None,
    poll_s: float,
) -> Exit:
    """Wait for the worker's exit, checking its limits between wakes; its exit status then."""
    waiter = launch.ExitWaiter(proc)  # pidfd + wait4 (exec), the server's report (fork)
    poller = select.poll()
    if waiter.fd is not None:
        poller.register(waiter.fd, select.POLLIN)
    stop, peak_files = Stop(), 0
    # the limits are checked every poll_s; the sooner first wake only tells the pid (reading a
    # forked job's memory walks its whole image: milliseconds of the driver's CPU a look)
    check_at = poll_s
    try:
        while True:
            # wake at once when the worker exits (its pipe), else every poll_s to check limits
            # (the first wake comes sooner: the pid is told once the job has run PID_AFTER_S)
            wait_s = poll_s if on_start is None else min(poll_s, PID_AFTER_S)
            if waiter.fd is not None:
                poller.poll(int(wait_s * 1000))
            else:
                time.sleep(min(wait_s, 0.05))
            pid, status_word, rusage = waiter.poll()
            if pid == proc.pid:
                return Exit(status_word, rusage, stop.reason, stop.detail, peak_files, time.monotonic() - t0)
            elapsed = time.monotonic() - t0
            if on_start is not None and elapsed >= PID_AFTER_S:
                on_start(proc.pid)  # informational (the store's worker_pid): the record is the safety
                on_start = None
            if elapsed >= check_at or stop.kill_at is not None:
                peak_files = max(peak_files, _check(tracker, limits, scratch, elapsed, stop, cancel))
                check_at = elapsed + poll_s
            if force is not None and force.is_set() and stop.kill_at is not None:
                stop.kill_at = time.monotonic()
            if stop.kill_at is not None and time.monotonic() >= stop.kill_at:
                if cgroup is not None:
                    cgroup.kill()
                tracker.freeze()
                tracker.signal_all(signal.SIGKILL)
    finally:
        waiter.close()


def _check(
    tracker: tree.TreeTracker,
    limits: Limits,
    scratch: Path,
    elapsed: float,
    stop: Stop,
    cancel: threading.Event | None,
) -> int:
    """One look at the running job: its memory (processes and files), disk and time against its
    limits, and Ctrl-C; sets ``stop`` the first time one is over. Returns the memory held."""
    rss = tracker.poll()
    files = held.memory_files(p for p in tracker.seen if p not in tracker.gone)  # tmpfs, memfds: in no PSS
    if stop.reason is not None:
        return rss + files
    over = held.over_limits(rss, files, limits, scratch, elapsed)
    if over is not None:
        stop.reason, stop.detail = over
        stop.kill_at = time.monotonic()  # memory and disk blow-ups are stopped at once
    elif elapsed > limits.time_s:
        stop.reason, stop.detail = "timeout", f"wall time {elapsed:.2f} s > limit {limits.time_s:g} s"
        stop.kill_at = time.monotonic() + limits.grace_s
        tracker.signal_all(signal.SIGTERM)
    elif cancel is not None and cancel.is_set():
        stop.reason, stop.detail = "interrupted", "stopped by the driver (Ctrl-C)"
        stop.kill_at = time.monotonic() + limits.grace_s
        tracker.signal_all(signal.SIGTERM)
    return rss + files
