"""srtui's own figures of a job, measured by the driver from outside it: the fit's time and
energy, and the job's provenance notes. Nothing here is read from the job's ``result.json``,
which the method's code can rewrite at its exit (a 1 ns fit, any provenance it likes).

**The fit's clock.** The worker writes ``FIT_MARK`` to its stdout before any code of a method
folder runs (loading the folder runs it), or, for srtui's own adapters, once their libraries are
imported: the first time the driver reads it is when the fit began (a method that prints the mark
itself can only make its time longer). ``fit_s`` runs from there to the job's exit as the driver
sees it: the fit, the predictions and the result files (and a method folder's import). For
srtui's own adapters (trusted code, as their imports are) it stops at the worker's second mark,
``FIT_END``, once the result files are written, not at the interpreter's exit: a method folder's
second mark is ignored, since its code could print one early. The
fit's CPU seconds are the job's (``wait4``'s rusage) less what the tree had used at the mark,
and the energy is read around the same interval (srtui.engine.process.energy). The method's own timer
(the worker's bracket of ``fit`` alone) is kept as the note ``reported_fit_s``, labelled as the
method's; no rule reads it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

import psutil

from srtui.engine.process import energy
from srtui.engine.process.job_worker import FIT_END, FIT_MARK

MARKS = (FIT_MARK, FIT_END)

#: provenance notes the driver writes: a job's own notes of these names are replaced
PROVENANCE = ("python", "isolation", "network", "versions")
#: the packages whose versions each job's notes record, as its interpreter's environment holds them
#: (a run in `--env sklearn-0.24.1` records 0.24.1, not the driver's scikit-learn)
VERSIONED = ("scikit-learn", "numpy", "scipy", "pandas", "sympy")
_VERSIONS_SCRIPT = (
    "import json, importlib.metadata as m\n"
    "def v(d):\n"
    "    try:\n        return m.version(d)\n"
    "    except m.PackageNotFoundError:\n        return None\n"
    "print(json.dumps({d: v(d) for d in %r}))"
)


class FitClock:
    """The driver's clock of one job's fit (``FIT_MARK`` to the job's exit)."""

    def __init__(self, pids: Callable[[], Iterable[int]], folder: bool) -> None:
        self._pids = pids
        self.folder = folder  # a method folder's job: its clock stops at the job's exit
        self._lock = threading.Lock()
        self.marked_at: float | None = None
        self.ended_at: float | None = None
        self.cpu_at_mark = 0.0
        self.meter: energy.Reading | None = None
        self.end_meter: energy.Reading | None = None
        self.cpu_at_end: float | None = None

    def mark(self, which: bytes) -> None:
        """A mark was read (a reader thread): the time, the tree's CPU so far, the counters."""
        with self._lock:
            if which == FIT_MARK and self.marked_at is None:
                self.marked_at = time.monotonic()
            elif which == FIT_END and not self.folder and self.marked_at is not None and self.ended_at is None:
                self.ended_at = time.monotonic()
            else:
                return
        cpu, meter = tree_cpu_seconds(self._pids()), energy.start()
        if which == FIT_MARK:
            self.cpu_at_mark, self.meter = cpu, meter
        else:
            self.cpu_at_end, self.end_meter = cpu, meter

    def figures(
        self, ended: float, started: float, cpu_s: float | None, peak_mb: float | None
    ) -> tuple[float, float | None, str | None]:
        """(fit seconds, joules, energy method). Without the mark (the worker died before it),
        the whole job."""
        since = self.marked_at if self.marked_at is not None else started
        if self.ended_at is not None:  # srtui's adapter wrote its result: the interpreter's exit is not the fit
            ended, cpu_s = self.ended_at, self.cpu_at_end
        fit_s = max(0.0, ended - since)
        meter = self.meter if self.meter is not None else energy.Reading(None, None, None)
        fit_cpu = None if cpu_s is None else max(0.0, cpu_s - self.cpu_at_mark)
        joules, how = energy.finish(meter, fit_cpu, fit_s, peak_mb, end=self.end_meter)
        return fit_s, joules, how


def tree_cpu_seconds(pids: Iterable[int]) -> float:
    """CPU seconds the processes ``pids`` and their waited-for children have used."""
    total = 0.0
    for pid in list(pids):
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            continue
    return total


def find_mark(buffer: bytes, chunk: bytes, mark: bytes) -> tuple[bool, bytes]:
    """(whether ``mark`` ends in ``chunk``, given the bytes read before it; ``chunk`` without
    the mark when the mark lies wholly in it)."""
    at = chunk.find(mark)
    if at >= 0:
        return True, chunk[:at] + chunk[at + len(mark) :]
    return (buffer[-len(mark) :] + chunk).find(mark) >= 0, chunk


def provenance(notes: dict[str, Any], python: str | None, isolation: str, network: bool) -> dict[str, Any]:
    """The job's notes with srtui's provenance over whatever the job wrote under those names."""
    out = {k: v for k, v in notes.items() if k not in PROVENANCE}
    out["python"] = python or sys.executable
    out["isolation"] = isolation
    if network:
        out["network"] = "allowed (--allow-network)"
    versions = interpreter_versions(out["python"])
    if versions:
        out["versions"] = versions
    return out


#: each interpreter's versions, asked once per driver: python -> the answer, or its future
_VERSIONS: dict[str, Future[dict[str, str]]] = {}
_VERSIONS_LOCK = threading.Lock()


def prefetch_versions(python: str) -> None:
    """Ask ``python`` for its versions now, on a thread of its own, so the first job's notes
    find the answer ready instead of waiting for a child interpreter (issue 56)."""
    threading.Thread(target=interpreter_versions, args=(python,), name="srtui-versions", daemon=True).start()


def interpreter_versions(python: str) -> dict[str, str]:
    """``VERSIONED``'s versions installed for ``python``, asked of that interpreter once per driver
    (a caller that comes while it is asked waits for that answer)."""
    with _VERSIONS_LOCK:
        future = _VERSIONS.get(python)
        ask = future is None
        if future is None:
            future = _VERSIONS[python] = Future()
    if ask:
        try:
            future.set_result(_ask_versions(python))
        except BaseException as exc:  # asked again by the next caller; those waiting get it
            with _VERSIONS_LOCK:
                _VERSIONS.pop(python, None)
            future.set_exception(exc)
            raise
    return future.result()


def _ask_versions(python: str) -> dict[str, str]:
    """The versions as ``python`` reports them (an isolated path, ``-P``, from ``/``: nothing of
    the cwd is imported); {} if it cannot say."""
    import json
    import subprocess

    try:
        done = subprocess.run(
            [python, "-P", "-c", _VERSIONS_SCRIPT % (VERSIONED,)],
            capture_output=True,
            timeout=60,
            cwd="/",
            check=False,
        )
        found = json.loads(done.stdout[:4096] or b"{}")
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k)[:40]: str(v)[:40] for k, v in found.items() if k in VERSIONED and isinstance(v, str)}
