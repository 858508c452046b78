"""Process-tree control for job limits: subreaper, tree accounting, escapee sweep, cgroup v2.

Why not just kill the process group: a method may ``setsid`` or double-fork out of it. We catch
those three ways: (1) the driver is a *child subreaper*, so orphaned descendants re-parent to it
instead of init; (2) every poll records the job's descendants (pid + create time, so a recycled
pid is never hit); (3) every job process inherits ``SRTUI_JOB_TOKEN`` in its environment, which a
final sweep (and a later driver, after a crash) matches. Where cgroup v2 is writable, the job
also gets its own cgroup (srtui.engine.process.cgroups), which no escape evades.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TOKEN_ENV = "SRTUI_JOB_TOKEN"
DRIVER_ENV = "SRTUI_DRIVER"  # "<pid>:<create_time>" of the driver that owns the job

_libc = None
_subreaper_lock = threading.Lock()
_subreaper_set = False


def _prctl(option: int, arg: int) -> bool:
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        return bool(_libc.prctl(option, arg, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux >= 3.4). Idempotent."""
    global _subreaper_set
    with _subreaper_lock:
        if not _subreaper_set:
            _subreaper_set = _prctl(PR_SET_CHILD_SUBREAPER, 1)
        return _subreaper_set


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to signal this process when the thread that spawned it dies."""
    return _prctl(PR_SET_PDEATHSIG, int(sig))


def child_pids(pid: int) -> list[int]:
    """Direct children of ``pid`` from /proc/PID/task/*/children (walks only this process, not
    every process on the machine as psutil's children() does); psutil where that file is absent."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tasks = []
    out: list[int] = []
    try:
        for tid in tasks:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(p) for p in fh.read().split())
        return out
    except FileNotFoundError:
        try:
            return [c.pid for c in psutil.Process(pid).children()]
        except psutil.Error:
            return []
    except (OSError, ValueError):
        return out


def tree_pids(pid: int) -> list[int]:
    """``pid``'s descendants, depth first."""
    out, stack = [], child_pids(pid)
    while stack:
        child = stack.pop()
        out.append(child)
        stack.extend(child_pids(child))
    return out


def driver_identity(pid: int | None = None) -> str:
    """``pid:start-time`` of this process (or ``pid``): names it even after the pid is reused.
    This process's own is looked up once (every job's environment carries it)."""
    global _OWN_IDENTITY
    if pid is None and _OWN_IDENTITY is not None and _OWN_IDENTITY[0] == os.getpid():
        return _OWN_IDENTITY[1]
    proc = psutil.Process(pid)
    identity = f"{proc.pid}:{proc.create_time():.3f}"
    if pid is None:
        _OWN_IDENTITY = (proc.pid, identity)
    return identity


_OWN_IDENTITY: tuple[int, str] | None = None  # (pid, identity): a forked child looks its own up


def identity_alive(identity: str) -> bool:
    """Is the process named by ``driver_identity()`` still running (not a recycled pid)?"""
    try:
        pid_s, ctime_s = identity.split(":")
        proc = psutil.Process(int(pid_s))
        return abs(proc.create_time() - float(ctime_s)) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE
    except (ValueError, psutil.Error):
        return False


@dataclass
class TreeTracker:
    """Everything ever seen in one job's process tree."""

    root_pid: int
    token: str
    #: where every process seen is written down (pid, start time, session), so a run after this
    #: driver died can kill what the job left even without the token (srtui.engine.process.tree.sweep_records)
    record: Path | None = None
    seen: dict[int, float] = field(default_factory=dict)  # pid -> create_time
    gone: set[int] = field(default_factory=set)  # seen pids that have exited: not looked up again
    peak_rss: int = 0  # bytes: the largest sum of the tree's proportional set sizes

    def poll(self) -> int:
        """Record the live tree and return its current memory in bytes: the sum of proportional
        set sizes (PSS), so pages shared by forked children count once, not once per process."""
        total = 0
        in_tree = [self.root_pid, *tree_pids(self.root_pid)]
        # orphans adopted by us (the subreaper) that carry this job's token: at every poll, so
        # an escapee's memory counts for as long as it lives, not only when first seen
        in_tree.extend(p.pid for p in adopted_with_token(self.token, skip=self.root_pid))
        new: list[tuple[int, float]] = []
        for pid in dict.fromkeys(in_tree):
            try:
                proc = psutil.Process(pid)
                if pid not in self.seen:
                    new.append((pid, proc.create_time()))
                self.seen[pid] = proc.create_time()
                self.gone.discard(pid)
                total += memory_bytes(proc)
            except psutil.Error:
                continue
        # processes seen before that left the tree (the worker died, its orphans came to us)
        for pid in [p for p in self.seen if p not in self.gone and p not in in_tree]:
            try:
                proc = psutil.Process(pid)
                if abs(proc.create_time() - self.seen[pid]) < 0.01:
                    total += memory_bytes(proc)
                    continue
            except psutil.Error:
                pass
            self.gone.add(pid)  # exited, or the pid was recycled: not looked up again
        self.peak_rss = max(self.peak_rss, total)
        if new and self.record is not None:
            write_record(self.record, new)
        return total

    def live(self) -> list[psutil.Process]:
        """Processes still alive that belong to the job (recorded, or found by token)."""
        found: dict[int, psutil.Process] = {}
        for pid, ctime in self.seen.items():
            try:
                proc = psutil.Process(pid)
                if abs(proc.create_time() - ctime) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE:
                    found[pid] = proc
            except psutil.Error:
                continue
        # escapees: with the subreaper set, every orphan of the job is re-parented to us, so our
        # own children (and their trees) are where to look; without it, scan every process
        candidates = adopted_with_token(self.token) if _subreaper_set else processes_with_token(self.token)
        for proc in candidates:
            found.setdefault(proc.pid, proc)
        return list(found.values())

    def freeze(self) -> None:
        """Before a kill: record the tree and stop every process in it, so nothing forks (or
        leaves the tree when the worker dies) between the last look and SIGKILL."""
        self.poll()
        self.signal_all(signal.SIGSTOP)
        self.poll()

    def signal_all(self, sig: int) -> None:
        try:
            os.killpg(self.root_pid, sig)  # the job's own session/process group
        except OSError:
            pass
        for proc in self.live():
            try:
                proc.send_signal(sig)
            except psutil.Error:
                pass

    def kill_all(self, wait_s: float = 2.0) -> list[int]:
        """SIGKILL every remaining job process; reap adopted zombies. Returns pids still alive."""
        deadline = time.monotonic() + wait_s
        while True:
            procs = [p for p in self.live() if p.pid != os.getpid()]
            for proc in procs:
                try:
                    self.seen.setdefault(proc.pid, proc.create_time())
                    proc.kill()
                except psutil.Error:
                    pass
            reap_adopted(set(self.seen) - {self.root_pid})
            if not procs or time.monotonic() > deadline:
                return [p.pid for p in procs if _alive(p)]
            time.sleep(0.05)


def memory_bytes(proc: psutil.Process) -> int:
    """Proportional set size from /proc/PID/smaps_rollup (Linux >= 4.14); RSS where unreadable."""
    try:
        with open(f"/proc/{proc.pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return proc.memory_info().rss


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _has_token(proc: psutil.Process, token: str) -> bool:
    try:
        return proc.environ().get(TOKEN_ENV) == token
    except psutil.Error:
        return False


def adopted_with_token(token: str, skip: int | None = None) -> list[psutil.Process]:
    """Our children carrying the job token, with their whole trees (escapees we adopted);
    ``skip`` leaves out one child (the job's root, whose tree the caller walks itself)."""
    out = []
    for pid in child_pids(os.getpid()):
        if pid == skip:
            continue
        try:
            child = psutil.Process(pid)
            if _has_token(child, token):
                out.append(child)
                out.extend(psutil.Process(p) for p in tree_pids(pid))
        except psutil.Error:
            continue
    return out


def processes_with_token(token: str | None = None, prefix: str | None = None) -> list[psutil.Process]:
    """Live processes whose environment has the job token (exact, or starting with prefix)."""
    out = []
    me = os.getpid()
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            value = proc.environ().get(TOKEN_ENV)
            if value is None or proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        if (token is not None and value == token) or (prefix is not None and value.startswith(prefix)):
            out.append(proc)
    return out


#: pids of job roots this process spawned and will wait4 itself; never reaped by reap_adopted
_own_roots: set[int] = set()
_own_roots_lock = threading.Lock()


def claim_root(pid: int) -> None:
    with _own_roots_lock:
        _own_roots.add(pid)


def claimed_roots() -> set[int]:
    with _own_roots_lock:
        return set(_own_roots)


def release_root(pid: int) -> None:
    with _own_roots_lock:
        _own_roots.discard(pid)


def reap_adopted(candidates: set[int]) -> None:
    """Collect exit statuses of a job's orphans the kernel re-parented to us (the subreaper).

    Only pids seen in that job's tree are candidates, and job roots are skipped: their launcher
    waits for them with wait4 to read their rusage, and a reap here would steal that status.
    """
    with _own_roots_lock:
        own = set(_own_roots)
    for pid in candidates - own:
        try:
            os.waitpid(pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            pass  # not our child (still parented elsewhere) or already reaped


# --- the record of a job's processes (for a run after its driver died) --------------------------


def start_record(path: Path) -> None:
    """A job's record begins with the driver that runs it (srtui.engine.untrusted: never through a link)
    and this user's tag of both (srtui.engine.private): a sweep acts on no record it cannot verify."""
    from srtui.engine import private
    from srtui.engine.untrusted import write_file

    identity = driver_identity()
    try:
        mark = private.tag(_record_text(path.name, identity))
    except private.PrivateDirError as exc:
        raise OSError(str(exc)) from None  # no record: the token sweep remains
    write_file(path, f"driver {identity} {mark}\n".encode())


def _record_text(name: str, identity: str) -> str:
    return f"srtui record {name}\n{identity}"


def _record_driver(name: str, head: str) -> str | None:
    """The driver identity of a record's first line, if the line is this user's own (its tag)."""
    from srtui.engine import private

    identity, _, mark = head.removeprefix("driver ").strip().rpartition(" ")
    if not head.startswith("driver ") or not identity or not private.tagged(_record_text(name, identity), mark):
        return None
    return identity


def write_record(path: Path, procs: list[tuple[int, float]]) -> None:
    lines = []
    for pid, ctime in procs:
        try:
            sid = os.getsid(pid)
        except OSError:
            sid = 0
        lines.append(f"{pid} {ctime!r} {sid}\n")
    from srtui.engine.untrusted import UntrustedFileError, open_dir

    try:
        dir_fd = open_dir(path.parent)  # reached through no link (a job may replace cache/pids)
        try:
            flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            fd = os.open(path.name, flags, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except (OSError, UntrustedFileError):
        return  # the job ended (its record removed) or the disk is full: the token sweep remains
    try:
        os.write(fd, "".join(lines).encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def sweep_records(folder: Path) -> list[int]:
    """Kill what jobs of dead drivers left: every recorded process still alive with its recorded
    start time, and every process in a session one of them led (an escapee's ``setsid``) started
    after the job did, environment or not. Records of live drivers are left alone."""
    from srtui.engine.untrusted import UntrustedFileError, open_dir, read_capped

    try:
        dir_fd = open_dir(folder)
    except (OSError, UntrustedFileError):
        return []
    killed: list[int] = []
    try:
        for name in os.listdir(dir_fd):
            try:  # another account's file (planted in a shared folder) is never acted on
                if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_uid != os.geteuid():
                    continue
                text = read_capped(dir_fd, name, 1 << 20).decode("ascii", "replace")
            except (OSError, UntrustedFileError):
                continue
            head, _, body = text.partition("\n")
            driver = _record_driver(name, head)
            if driver is None or identity_alive(driver):
                continue
            killed += _kill_recorded(body)
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    return killed


def _kill_recorded(body: str) -> list[int]:
    recorded: dict[int, float] = {}
    for line in body.splitlines():
        parts = line.split()
        with contextlib.suppress(ValueError, IndexError):
            recorded[int(parts[0])] = float(parts[1])
    if not recorded:
        return []
    since = min(recorded.values()) - 0.01
    # a recorded pid now taken by another process is not the job's session (a live session keeps
    # its number from being reused, so a dead leader's session is still the job's)
    sessions = set()
    for pid, ctime in recorded.items():
        try:
            if abs(psutil.Process(pid).create_time() - ctime) < 0.01:
                sessions.add(pid)
        except psutil.Error:
            sessions.add(pid)
    victims = []
    for proc in psutil.process_iter():
        try:
            ctime = proc.create_time()
            same = proc.pid in recorded and abs(ctime - recorded[proc.pid]) < 0.01
            # a session led by a job process: its members are the job's, if younger than the job
            in_session = ctime >= since and os.getsid(proc.pid) in sessions and proc.pid != os.getpid()
            if (same or in_session) and proc.status() != psutil.STATUS_ZOMBIE:
                victims.append(proc)
        except (psutil.Error, OSError):
            continue
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return [p.pid for p in victims]


def sweep_orphans(workspace_prefix: str) -> list[int]:
    """Kill job processes of this workspace whose driver is gone (after a driver crash)."""
    killed = []
    for proc in processes_with_token(prefix=workspace_prefix):
        try:
            driver = proc.environ().get(DRIVER_ENV, "")
        except psutil.Error:
            continue
        if driver and identity_alive(driver):
            continue
        try:
            proc.kill()
            killed.append(proc.pid)
        except psutil.Error:
            pass
    return killed
