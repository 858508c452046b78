"""A cgroup v2 per job: every process the job makes stays in it, and ``cgroup.kill`` ends them all.

Why a cgroup: a process that forks a child and exits in a loop (a new pid every few microseconds,
``setsid`` now and then) outruns any kill by pid list, process group or session, and RLIMIT_NPROC
does not bind root. A cgroup holds every descendant whatever it does, and the kernel's
``cgroup.kill`` reaches them all at once, forks in flight included. Only the core files are needed
(``cgroup.procs``, ``cgroup.freeze``, ``cgroup.kill``: Linux >= 5.14), no controller, so a hybrid
host (cgroup v1 controllers, v2 at ``/sys/fs/cgroup/unified``) has them too. Where the memory
controller is delegated too, the job's cgroup also gets ``memory.max``; where ``pids`` is,
``pids.max`` (on a hybrid host, in the v1 pids hierarchy: it bounds the processes, zombies
included, a fork loop holds while its job runs). Without a writable cgroup v2 the engine falls
back to its subreaper and polling (srtui.engine.process.tree), which a fast enough fork loop can outrun.

The worker joins its cgroup itself before any method code runs (``join``: SRTUI_JOB_CGROUP), so
nothing forks before it is inside; the killed processes' zombies are collected by the driver
(the subreaper they are re-parented to), matched by the cgroup they died in.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

ENV = "SRTUI_JOB_CGROUP"  # the job's cgroup.procs, which the worker writes its pid to
#: tasks one job may hold at once where the pids controller is delegated (a fork loop's ceiling)
PIDS_MAX = 8192


def _mount() -> Path | None:
    with open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) > 2 and parts[2] == "cgroup2":
                return Path(parts[1].replace("\\040", " "))
    return None


def own() -> str:
    """This process's cgroup (v2), relative to the mount; "" where there is none."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:].lstrip("/")
    return ""


def _controllers(path: Path) -> set[str]:
    try:
        return set((path / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def _v1_pids() -> Path | None:
    """On a hybrid host, the cgroup v1 pids hierarchy's folder for job cgroups (``pids.max`` there
    bounds what a fork loop holds, zombies included, while its job runs), or None."""
    try:
        mount = None
        with open("/proc/self/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) > 3 and parts[2] == "cgroup" and "pids" in parts[3].split(","):
                    mount = Path(parts[1])
        if mount is None:
            return None
        own = ""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "pids" in controllers.split(","):
                own = path.lstrip("/")
        parent = mount / own / "srtui-jobs"
        parent.mkdir(exist_ok=True)
        return parent if (parent / "pids.max").exists() else None
    except (OSError, ValueError):
        return None


def base() -> tuple[Path, set[str]] | None:
    """(the folder to make job cgroups in, the controllers they get), or None where cgroup v2 is
    not mounted or not writable. Job cgroups go in a sub-tree we make (``srtui-jobs``) because a
    cgroup with controllers for its children may hold no process ("no internal processes")."""
    if os.environ.get("SRTUI_NO_CGROUP"):
        return None
    try:
        mount = _mount()
        if mount is None:
            return None
        mine = mount / own()
        parent = mine / "srtui-jobs"
        parent.mkdir(exist_ok=True)
        wanted = {"memory", "pids"} & _controllers(mine)
        enabled = set((mine / "cgroup.subtree_control").read_text().split())
        for name in sorted(wanted - enabled):
            with contextlib.suppress(OSError):  # the memory controller may be ours, pids not
                (mine / "cgroup.subtree_control").write_text(f"+{name}")
        have = {"memory", "pids"} & _controllers(parent)
        for name in sorted(have - set((parent / "cgroup.subtree_control").read_text().split())):
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text(f"+{name}")
        _remove_stale(parent)
        probe = parent / f"probe-{os.getpid()}"
        probe.mkdir(exist_ok=True)
        try:
            if not (probe / "cgroup.kill").exists():
                return None  # Linux < 5.14: no cgroup.kill
            controllers = _controllers(probe)
            v1 = _v1_pids()
            if "pids" not in controllers and v1 is not None:
                _remove_stale(v1)
                controllers.add("pids-v1")
            return parent, controllers
        finally:
            probe.rmdir()
    except OSError:
        return None


def _remove_stale(parent: Path, age_s: float = 600.0) -> None:
    """Empty job cgroups a killed driver left (rmdir refuses a cgroup with a process in it);
    only old ones, so another driver's cgroup made a moment ago is not taken from its job."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if entry.name.startswith("job-") and now - entry.stat(follow_symlinks=False).st_mtime > age_s:
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def join() -> None:
    """In the worker, before any method code: move this process into its job's cgroups."""
    for procs in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        with contextlib.suppress(OSError), open(procs, "w") as fh:
            fh.write(str(os.getpid()))


class JobCgroup:
    """One job's cgroup: membership, limits where delegated, and the kill of the whole tree."""

    def __init__(self, parent: Path, name: str, controllers: set[str], mem_bytes: int) -> None:
        self.path = parent / name
        self.path.mkdir(exist_ok=True)
        self.relative = "/" + str(self.path.relative_to(_mount() or "/"))  # as /proc/PID/cgroup names it
        self.has_memory = "memory" in controllers
        if self.has_memory:
            (self.path / "memory.max").write_text(str(mem_bytes))
            with contextlib.suppress(OSError):
                (self.path / "memory.swap.max").write_text("0")
        if "pids" in controllers:
            with contextlib.suppress(OSError):
                (self.path / "pids.max").write_text(str(PIDS_MAX))
        self.pids: Path | None = None  # the v1 pids cgroup of a hybrid host
        v1 = _v1_pids() if "pids-v1" in controllers else None
        if v1 is not None:
            with contextlib.suppress(OSError):
                (v1 / name).mkdir(exist_ok=True)
                (v1 / name / "pids.max").write_text(str(PIDS_MAX))
                self.pids = v1 / name

    @property
    def procs_file(self) -> str:
        """Every cgroup.procs the worker joins (SRTUI_JOB_CGROUP, joined by os.pathsep)."""
        files = [self.path / "cgroup.procs"] + ([self.pids / "cgroup.procs"] if self.pids else [])
        return os.pathsep.join(map(str, files))

    def add(self, pid: int) -> None:
        for procs in self.procs_file.split(os.pathsep):
            with contextlib.suppress(OSError):  # it exited already: nothing to hold
                Path(procs).write_text(str(pid))

    def members(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def oom_killed(self) -> bool:
        try:
            for line in (self.path / "memory.events").read_text().splitlines():
                key, value = line.split()
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def peak_bytes(self) -> int:
        try:
            return int((self.path / "memory.peak").read_text())
        except (OSError, ValueError):
            return 0

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")

    def end(self, wait_s: float = 5.0) -> list[int]:
        """Kill every process in the cgroup and collect the zombies re-parented to us; returns
        the pids still in it after ``wait_s`` (none, but for a process stuck in the kernel)."""
        deadline = time.monotonic() + wait_s
        while True:
            self.kill()
            reap_dead_in(self.relative)
            left = self.members()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        reap_dead_in(self.relative)
        return left

    def remove(self) -> None:
        for path in [self.path] + ([self.pids] if self.pids else []):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    reap_dead_in(self.relative)  # a zombie of ours still holds it
                    time.sleep(0.02)


def reap_dead_in(relative: str) -> int:
    """Collect our zombie children that died in the cgroup ``relative`` (a job's: nobody else
    waits for them; a zombie's /proc/PID/cgroup still names the cgroup it died in)."""
    from srtui.engine.process.tree import child_pids, claimed_roots

    own = claimed_roots()
    reaped = 0
    for pid in child_pids(os.getpid()):
        if pid in own:
            continue  # a job's root: its launcher waits for it with wait4
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
            if state != b"Z":
                continue
            with open(f"/proc/{pid}/cgroup") as fh:
                if f"0::{relative}\n" not in fh.read():
                    continue
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped += 1
        except (OSError, IndexError):
            continue
    return reaped
