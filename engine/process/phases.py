"""Where a job's wall time goes, phase by phase, for the launcher benchmark.

Off unless ``SRTUI_PHASE_LOG`` names a file in the driver's environment: then each job run by a
local slot appends one JSON line there, ``{"job": ID, "marks": [[NAME, UNIX_TIME, CPU_S, SIDE], ...]}``, the
driver's marks (``mark``, per slot thread) merged with the worker's own (``timing`` in its
result.json, written always: a few floats). CPU_S is the slot thread's CPU clock
(``time.thread_time``) for the driver's marks (SIDE "driver"), the worker's process clock for
its own (SIDE "worker PID": a sealed job's marks come from the process that seals it and the one
that runs the method, whose clocks start apart): a
phase between two marks of one side has its CPU time too, which a loaded machine does not
inflate as it does the wall time. Nothing of it is stored or changes a stored value;
``tests/bench/bench_engine.py`` prints the phases' medians from these lines.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

ENV = "SRTUI_PHASE_LOG"
_local = threading.local()
_write_lock = threading.Lock()


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def begin() -> None:
    """A slot starts a job: its marks start afresh (nothing is kept when profiling is off)."""
    _local.marks = [("claim", time.time(), time.thread_time(), "driver")] if enabled() else None


def mark(name: str) -> None:
    marks = getattr(_local, "marks", None)
    if marks is not None:
        marks.append((name, time.time(), time.thread_time(), "driver"))


def add_worker(timing: Any) -> None:
    """The worker's marks from its result.json, as far as they are (name, time, CPU, pid) lists."""
    marks = getattr(_local, "marks", None)
    if marks is None or not isinstance(timing, list):
        return
    for item in timing[:32]:
        if isinstance(item, list) and len(item) == 4 and isinstance(item[0], str):
            side = f"worker {int(item[3])}"  # a sealed job's marks come from two processes
            marks.append(("worker " + item[0][:40], float(item[1]), float(item[2]), side))


def end(job_id: str) -> None:
    write(job_id, detach())


def detach() -> list[tuple[str, float, float, str]] | None:
    """This thread's marks of its job, handed on (the job is recorded by another thread:
    srtui.engine.backends.recorder, which adds its own mark and ``write``s them); None when off."""
    marks = getattr(_local, "marks", None)
    _local.marks = None
    return marks


def write(job_id: str, marks: list[tuple[str, float, float, str]] | None) -> None:
    """Append one job's line to the log, its marks in time order."""
    path = os.environ.get(ENV)
    if marks is None or not path:
        return
    mark_line = json.dumps({"job": job_id, "marks": sorted(marks, key=lambda m: m[1])}) + "\n"
    with _write_lock, open(path, "a") as fh:
        fh.write(mark_line)
