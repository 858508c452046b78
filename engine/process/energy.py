"""Energy of one job, in joules, from two readings (job start and end): no polling.

Two methods, the one used is stored with the figure:

``rapl``
    The CPU packages' energy counters (``/sys/class/powercap/intel-rapl:N/energy_uj``, and a
    ``dram`` sub-domain when the machine has one) read at start and end, attributed to the job
    by its share of the machine's busy CPU time over the interval (job CPU seconds / busy CPU
    seconds of all processes in ``/proc/stat``), as eco2AI does with ``cpu_processes="current"``.
    Memory comes from the ``dram`` domain when present, else from the estimate below.
``estimate``
    No readable RAPL counter (most VMs and containers; reading needs root on recent kernels).
    eco2AI's model: CPU power = TDP x the job's share of all logical CPUs x sockets, i.e.
    ``cpu_s x TDP x sockets / logical CPUs``; memory power = 3/8 W per GiB in use.

Constants (source: eco2AI, github.com/sb-ai-lab/Eco2AI, ``eco2ai/tools/tools_cpu.py`` and
``tools_ram.py``; codecarbon uses the same 3 W per 8 GB for memory):

- ``DEFAULT_TDP_W = 100.1``: eco2AI's ``CONSTANT_CONSUMPTION``, the TDP it assumes for a CPU
  missing from its table. srtui ships no CPU table: set ``SRTUI_CPU_TDP_W`` to the real TDP.
- ``RAM_W_PER_GIB = 3 / 8``: eco2AI's ``(3 / 8)`` W per GB (GiB: it divides bytes by 1024**3).

srtui charges memory at the job's *peak* resident size for its whole wall time (eco2AI samples
the current size every 10 s); for the short fits of a benchmark that is the closer bound.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

POWERCAP = Path("/sys/class/powercap")
DEFAULT_TDP_W = 100.1
RAM_W_PER_GIB = 3 / 8
_PACKAGE = re.compile(r"intel-rapl:\d+")
_SUBDOMAIN = re.compile(r"intel-rapl:\d+:\d+")


@dataclass(frozen=True)
class Reading:
    """Counters at one instant: RAPL microjoules per domain (None: unreadable), busy CPU seconds."""

    cpu_uj: dict[str, int] | None
    dram_uj: dict[str, int] | None
    busy_s: float | None


@lru_cache(maxsize=4)
def _domains(root: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(package domains, dram sub-domains) under a powercap root; found once per process."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return (), ()
    packages = tuple(p for p in entries if _PACKAGE.fullmatch(p.name))
    drams = []
    for package in packages:
        for sub in sorted(package.glob("intel-rapl:*")):
            if _SUBDOMAIN.fullmatch(sub.name) and _read_text(sub / "name") == "dram":
                drams.append(sub)
    return packages, tuple(drams)


def _read_text(path: Path | str) -> str | None:
    """The start of a small kernel file (its first 4 KiB: all of a counter, /proc/stat's first
    line), stripped. os.read, not read_text(): these files are ASCII, and a text read's first
    call in a fresh worker (the encoding's look-up) costs more than the rest of the sampling."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_counters(domains: tuple[Path, ...]) -> dict[str, int] | None:
    if not domains:
        return None
    values = {}
    for domain in domains:
        text = _read_text(domain / "energy_uj")
        if text is None or not text.isdigit():
            return None  # unreadable (permission) or odd: fall back to the estimate
        values[str(domain)] = int(text)
    return values


def busy_cpu_seconds(stat: Path = Path("/proc/stat")) -> float | None:
    """CPU seconds all processes of the machine spent running (user, nice, system, irq, softirq)."""
    text = _read_text(stat)
    if not text or not text.startswith("cpu "):
        return None
    fields = [int(v) for v in text.split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = (fields + [0] * 7)[:7]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def start(root: Path = POWERCAP) -> Reading:
    """The counters now. Without RAPL nothing is read: the estimate needs only the job's CPU
    time, and /proc/stat's busy time only divides a RAPL reading between the processes."""
    packages, drams = _domains(root)
    cpu_uj = _read_counters(packages)
    if cpu_uj is None:
        return Reading(None, None, None)
    return Reading(cpu_uj, _read_counters(drams), busy_cpu_seconds())


def finish(
    begin: Reading,
    cpu_s: float | None,
    wall_s: float,
    peak_rss_mb: float | None,
    root: Path = POWERCAP,
    end: Reading | None = None,
) -> tuple[float | None, str | None]:
    """(joules, method) of the job between ``begin`` and ``end`` (default: now); (None, None)
    without a CPU time (the worker never started)."""
    if cpu_s is None:
        return None, None
    peak_gib = (peak_rss_mb or 0.0) / 1024
    memory_j = RAM_W_PER_GIB * peak_gib * max(wall_s, 0.0)
    if begin.cpu_uj is None:  # no RAPL at the start: the estimate, with nothing more to read
        return cpu_s * cpu_watts_per_core() + memory_j, "estimate"
    end = end or start(root)
    share = _cpu_share(cpu_s, begin.busy_s, end.busy_s)
    cpu_j = _delta_j(begin.cpu_uj, end.cpu_uj, root)
    if cpu_j is None:
        return cpu_s * cpu_watts_per_core() + memory_j, "estimate"
    dram_j = _delta_j(begin.dram_uj, end.dram_uj, root)
    if dram_j is not None:
        memory_j = dram_j * share
    return cpu_j * share + memory_j, "rapl"


def _cpu_share(cpu_s: float, busy_begin: float | None, busy_end: float | None) -> float:
    if busy_begin is None or busy_end is None or busy_end - busy_begin <= 0:
        return 1.0 if cpu_s > 0 else 0.0
    return min(1.0, max(0.0, cpu_s / (busy_end - busy_begin)))


def _delta_j(begin: dict[str, int] | None, end: dict[str, int] | None, root: Path) -> float | None:
    """Joules between two readings of the same domains, allowing one counter wrap-around."""
    if begin is None or end is None or begin.keys() != end.keys():
        return None
    total_uj = 0
    for domain, first in begin.items():
        last = end[domain]
        if last < first:  # the counter wrapped: it counts modulo max_energy_range_uj
            wrap = _read_text(Path(domain) / "max_energy_range_uj")
            if wrap is None or not wrap.isdigit():
                return None
            last += int(wrap)
        total_uj += last - first
    return total_uj / 1e6


@lru_cache(maxsize=1)
def cpu_watts_per_core() -> float:
    """TDP x sockets / logical CPUs (eco2AI's per-process CPU power at full use of one CPU)."""
    try:
        tdp = float(os.environ.get("SRTUI_CPU_TDP_W") or DEFAULT_TDP_W)
    except ValueError:
        tdp = DEFAULT_TDP_W
    if not tdp > 0:
        tdp = DEFAULT_TDP_W
    return tdp * _sockets() / (os.cpu_count() or 1)


def _sockets() -> int:
    """Distinct physical package ids of the CPUs (os.scandir: a pathlib glob costs a fresh
    worker about half a millisecond, most of its sampling cost)."""
    base = "/sys/devices/system/cpu"
    ids = set()
    try:
        names = [e.name for e in os.scandir(base) if e.name.startswith("cpu") and e.name[3:].isdigit()]
    except OSError:
        return 1
    for name in names:
        text = _read_text(Path(base, name, "topology", "physical_package_id"))
        if text is not None:
            ids.add(text)
    return max(1, len(ids))


def warm(root: Path = POWERCAP) -> None:
    """Fill this process's caches (the counters found, the CPU power per core): a fork server
    calls it once, so the workers it forks sample without looking them up again."""
    _domains(root)
    cpu_watts_per_core()
