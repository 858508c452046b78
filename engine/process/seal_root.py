"""The sealed job's filesystem, and the seal's primitives (srtui.engine.process.seal).

``build_root`` makes the job's root: a tmpfs holding read-only binds of the system and Python
trees, its folder at ``/job`` (``nosuid,nodev``), its ``/tmp`` and ``/dev/shm`` in one tmpfs of
``size=`` its memory limit, a minimal ``/dev``, its own ``/proc`` with the files Docker masks read
empty. Stdlib only, as the seal is.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import signal
import struct
import sys
from typing import Any

from srtui.engine import source
from srtui.engine.errors import SrtuiError

JOB_ROOT = "/job"
#: what every job sees, read-only, when it exists (a link, as /bin on merged-/usr systems, is kept as a link)
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
DEVICES = ("null", "zero", "full", "random", "urandom")

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
AT_RECURSIVE = 0x8000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 38, 22
#: (pivot_root, mount_setattr, sched_setaffinity, seccomp's AUDIT_ARCH) by machine
SYSCALLS = {"x86_64": (155, 442, 203, 0xC000003E), "aarch64": (41, 442, 122, 0xC00000B7)}

_libc: Any = None


class SealError(SrtuiError, OSError):
    """The job could not be sealed as the driver decided: it does not run unsealed."""


def _c() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SealError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if v is None else v.encode() for v in (src, dst, fstype, data)]
    _check(_c().mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {dst}")


def _syscall(index: int) -> int:
    return SYSCALLS.get(platform.machine(), SYSCALLS["x86_64"])[index]


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def python_paths() -> list[str]:
    """The trees this interpreter imports from: its prefixes, its site-packages, srtui's code."""
    import site

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *source.code_folders()}
    paths.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    with contextlib.suppress(AttributeError):
        paths.update(site.getsitepackages())
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site:
        paths.add(user_site)
    return sorted(os.path.realpath(p) for p in paths if p and os.path.isdir(p))


def build_root(jobdir: str, binds: list[str], held_mb: float) -> None:
    """The job's filesystem, as bubblewrap builds one: a tmpfs base, the old root under /oldroot
    while the new root is filled (and its /proc mounted: a user namespace may mount a procfs only
    where one is fully visible), then the new root pivoted in and the staging root detached with
    the old one under it (bubblewrap detaches the old root first: a second wait of the kernel's)."""
    _check(_c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    jobdir = os.path.realpath(jobdir)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    base = "/tmp"
    _mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    os.mkdir(base + "/newroot", 0o755)
    os.mkdir(base + "/oldroot", 0o755)
    _mount(base + "/newroot", base + "/newroot", None, MS_BIND | MS_REC)
    _pivot(base, base + "/oldroot")
    os.chdir("/")
    new = "/newroot"
    _held_tmpfs(held_mb)
    _dev(new)
    _mkdirs(new + "/tmp")  # first: a method folder or a venv under /tmp is bound inside it
    _mount("/held/tmp", new + "/tmp", None, MS_BIND)
    for path in binds:
        _bind_ro("/oldroot" + path, new + path)
    _mkdirs(new + "/proc")
    _mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _sysv_shm_limit(new, held_mb)
    _mask_proc(new)
    if os.path.isdir(new + "/sys/fs/cgroup"):
        _mount("tmpfs", new + "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "mode=0555")
    _mkdirs(new + JOB_ROOT)
    _mount("/oldroot" + jobdir, new + JOB_ROOT, None, MS_BIND)
    _set_attr(new + JOB_ROOT, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, recursive=False)  # writable: no setuid, no devices
    for name in ("job.json", "data.npz"):  # the inputs: read-only inside its writable folder
        if os.path.isfile(new + JOB_ROOT + "/" + name):
            _bind_ro(new + JOB_ROOT + "/" + name, new + JOB_ROOT + "/" + name)
    os.chdir(new)
    _pivot(".", ".")
    # the staging root, stacked on the new one, goes with the old root mounted under it: one
    # detach of the whole tree, so one wait for the kernel's RCU grace period, not two (~3 ms each)
    _check(_c().umount2(b".", MNT_DETACH), "umount the staging root and the old one")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(JOB_ROOT)


def _pivot(new_root: str, put_old: str) -> None:
    _check(_c().syscall(_syscall(0), new_root.encode(), put_old.encode()), "pivot_root")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _ro_paths(extra: list[str], jobdir: str) -> list[str]:
    """Absolute real paths to bind, none inside another, links under / kept as links. A job
    folder inside one of them (a workspace under /opt, or in a venv) is refused: the job would
    see the workspace around it."""
    wanted = [p for p in SYSTEM_PATHS if os.path.lexists(p)]
    wanted += [os.path.realpath(p) for p in [*python_paths(), *extra]]
    out: list[str] = []
    for path in sorted(set(wanted), key=len):
        if path == "/" or any(_inside(path, kept) for kept in out):
            continue
        out.append(path)
    real = os.path.realpath(jobdir)
    for path in out:
        if _inside(real, os.path.realpath(path)):
            raise SealError(errno.EPERM, f"the job's folder {real} lies inside {path}, which every job sees")
    return out


def _mkdirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _bind_ro(src: str, dst: str) -> None:
    if os.path.islink(src) and src.count("/") == 2:  # /oldroot/bin -> usr/bin: the same link
        _mkdirs(os.path.dirname(dst))
        os.symlink(os.readlink(src), dst)
        return
    if not os.path.exists(src):
        return
    if os.path.isdir(src):
        _mkdirs(dst)
    elif not os.path.exists(dst):
        _mkdirs(os.path.dirname(dst))
        open(dst, "wb").close()
    _mount(src, dst, None, MS_BIND | MS_REC)
    _set_attr(dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV * (not dst.endswith("/dev")))


def _set_attr(dst: str, attrs: int, recursive: bool = True) -> None:
    """Set mount attributes (``MOUNT_ATTR_*``) on the mount at ``dst`` (and those under it)."""
    buf = ctypes.create_string_buffer(struct.pack("QQQQ", attrs, 0, 0, 0))
    if _c().syscall(_syscall(1), -100, dst.encode(), AT_RECURSIVE * recursive, buf, 32) == 0:
        return
    # an older kernel: remount the top, keeping the flags the kernel locked on it
    kept = os.statvfs(dst).f_flag & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    flags = (MS_RDONLY * bool(attrs & MOUNT_ATTR_RDONLY)) | MS_NOSUID * bool(attrs & MOUNT_ATTR_NOSUID)
    _mount(None, dst, None, MS_REMOUNT | MS_BIND | kept | flags | MS_NODEV * bool(attrs & MOUNT_ATTR_NODEV))


def _held_tmpfs(held_mb: float) -> None:
    """One tmpfs for the job's /tmp and /dev/shm (bound from its two folders): what they hold
    together is bounded by the job's memory limit (``size=``), and the driver counts it as the
    job's memory (srtui.engine.process.held). Mounted in the staging root, which is detached later."""
    size = f",size={max(1, int(held_mb * 1024))}k" if held_mb > 0 else ""
    _mkdirs("/held")
    _mount("tmpfs", "/held", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755" + size)
    for name in ("tmp", "shm"):
        os.mkdir("/held/" + name)
        os.chmod("/held/" + name, 0o1777)


#: /proc files a job sees empty, as under Docker: /proc/keys lists the descriptions of keys its
#: user may view (an ordinary user's own), the others tell of the host's kernel
MASKED_PROC = ("keys", "key-users", "kcore", "timer_list", "sched_debug", "latency_stats")


def _mask_proc(new: str) -> None:
    for name in MASKED_PROC:
        if os.path.exists(new + "/proc/" + name):
            _mount(new + "/dev/null", new + "/proc/" + name, None, MS_BIND)


def _sysv_shm_limit(new: str, held_mb: float) -> None:
    """System V shared memory lives in no file and no process: in the job's own IPC namespace it
    is capped at the memory limit (best effort: a kernel that refuses leaves Linux's default)."""
    if held_mb <= 0:
        return
    size = int(held_mb * 2**20)
    for name, value in (("shmmax", size), ("shmall", size // os.sysconf("SC_PAGE_SIZE"))):
        with contextlib.suppress(OSError):
            _write(new + "/proc/sys/kernel/" + name, str(value))


def _dev(new: str) -> None:
    _mkdirs(new + "/dev")
    _mount("tmpfs", new + "/dev", "tmpfs", MS_NOSUID, "mode=0755")
    for name in DEVICES:  # no tty, no pts, no disks
        target = new + "/dev/" + name
        open(target, "wb").close()
        _mount("/oldroot/dev/" + name, target, None, MS_BIND)
    _mkdirs(new + "/dev/shm")
    _mount("/held/shm", new + "/dev/shm", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1")):
        os.symlink(target, new + "/dev/" + name)
    os.symlink("/proc/self/fd/2", new + "/dev/stderr")
    _mount(None, new + "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)  # no /dev/tty made either
