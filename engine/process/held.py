"""What a job holds outside its processes' resident memory, as the driver measures it from outside.

- **Files in memory.** A sealed job's ``/tmp`` and ``/dev/shm`` are one tmpfs of its own
  (srtui.engine.process.seal, ``size=`` its memory limit), and a memfd is a file of the kernel's
  internal tmpfs: their pages are in no process's PSS while unmapped. ``memory_files`` reads the
  tmpfs's usage through ``/proc/PID/root`` and the size of every memfd the job's processes hold
  open; the driver adds both to the tree's PSS for the memory limit. (A mapped page of either
  counts twice: the error is on the job's side of the limit, never in its favour.)
- **Disk.** ``folder_bytes`` sums the blocks of the job's folder in a bounded walk (no link
  followed, at most ``MAX_ENTRIES`` entries: more is over the limit by itself).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from srtui.engine.spec import Limits

MAX_ENTRIES = 100_000  # files and folders of a job's folder the driver walks at most
MAX_FDS = 4096  # descriptors of one process looked at for memfds


def _host_devices() -> set[int]:
    out = set()
    for path in ("/tmp", "/dev/shm", "/"):
        with contextlib.suppress(OSError):
            out.add(os.stat(path).st_dev)
    return out


_HOST: set[int] | None = None


def memory_files(pids: Iterable[int]) -> int:
    """Bytes held by the jobs' own tmpfs (its /tmp and /dev/shm) and by the memfds the processes
    ``pids`` hold open; 0 for what cannot be read (a process gone meanwhile)."""
    global _HOST
    if _HOST is None:
        _HOST = _host_devices()
    seen_fs: set[int] = set(_HOST)
    seen_files: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        try:
            dev = os.stat(f"/proc/{pid}/root/tmp").st_dev
            if dev not in seen_fs:
                seen_fs.add(dev)
                vfs = os.statvfs(f"/proc/{pid}/root/tmp")
                total += (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize
        except OSError:
            pass
        total += _memfds(pid, seen_files)
    return total


def _memfds(pid: int, seen: set[tuple[int, int]]) -> int:
    total = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")[:MAX_FDS]
    except OSError:
        return 0
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not os.readlink(path).startswith("/memfd:"):
                continue
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def _open_for_us(folder: str) -> None:
    """A folder of the job's that it made unreadable to hide what it holds (it runs as the
    driver's user under user namespaces): the driver, its owner, opens it again."""
    st = os.lstat(folder)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o700 != 0o700:
        os.chmod(folder, st.st_mode | 0o700)


def folder_bytes(folder: str, max_entries: int = MAX_ENTRIES) -> tuple[int, int]:
    """(bytes of disk the files under ``folder`` take, entries walked); stops after
    ``max_entries`` entries (and says ``max_entries`` for a folder nested past PATH_MAX, which it
    cannot walk). Links are not followed; a file linked twice counts once."""
    total, entries = 0, 0
    seen: set[tuple[int, int]] = set()
    stack = [folder]
    while stack and entries < max_entries:
        top = stack.pop()
        try:
            _open_for_us(top)
            with os.scandir(top) as it:
                for entry in it:
                    entries += 1
                    if entries >= max_entries:
                        break
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError as exc:
                        if exc.errno == errno.ENAMETOOLONG:
                            return total, max_entries  # nested past PATH_MAX: not walked, so over
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
                    elif (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        total += st.st_blocks * 512
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # a folder nested past PATH_MAX: not walked, so over
                return total, max_entries
            continue
    return total, entries


def over_limits(rss: int, files: int, limits: Limits, scratch: Path, elapsed: float) -> tuple[str, str] | None:
    """("oom" or "disk", the detail) when the job holds more than its limits, else None."""
    if rss + files > limits.mem_mb * 2**20:
        return "oom", (
            f"memory {(rss + files) / 2**20:.0f} MB (processes' PSS {rss / 2**20:.0f} MB, its /tmp, /dev/shm "
            f"and memfds {files / 2**20:.0f} MB) > limit {limits.mem_mb:.0f} MB at {elapsed:.2f} s"
        )
    used, entries = folder_bytes(str(scratch))
    if used > limits.disk_mb * 2**20 or entries >= MAX_ENTRIES:
        what = f"{used / 2**20:.0f} MB" if entries < MAX_ENTRIES else f"over {MAX_ENTRIES} entries, or a path too deep"
        return "disk", f"the job's folder holds {what} > limit {limits.disk_mb:.0f} MB at {elapsed:.2f} s"
    return None


def memory_line() -> str:
    """The capability report's line on memory: which accounting is in force here (read without
    the job machinery: `srtui run --dry-run` prints it, #56)."""
    from srtui.engine.process import cgroups

    base = cgroups.base()
    if base is not None and "memory" in base[1]:
        return (
            "memory: cgroup v2 memory.max per job (the kernel counts its processes, /tmp, /dev/shm and "
            "memfds) and the driver's poll of the same"
        )
    return (
        "memory: the driver's poll (processes' PSS + the job's /tmp and /dev/shm, one tmpfs of size "
        "mem_mb, + its memfds) and RLIMIT_AS; no cgroup memory controller delegated here"
    )
