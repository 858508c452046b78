"""Sealing a job: the job's process sees its own folder and the software it runs, nothing else.

``enter`` is the one sealing function; both launchers call it in the job's own process before
any of the method's code is imported (``python -m engine.process.job_worker``, exec'd, and the
child a fork server forks, engine.process.fork_child): the fork server's pre-imported modules are
kept, so a forked job stays a fork. It is stdlib-only, since a method environment's interpreter
runs it too. What it does (docs/untrusted-jobs.md lists what a job can see, with the tests):

- **namespaces** (an ordinary user: Linux user namespaces; the driver's root: the same namespaces
  without a user namespace, and the job then runs as a uid of its own, ``JOB_UID_BASE + pid``):
  new mount, PID, IPC, UTS and (unless the method is allowed the network) network namespaces.
  The job's root is a fresh tmpfs holding read-only binds of the system and Python trees
  (``/usr``, ``/etc``, ..., the interpreter's prefixes, srtui's ``engine`` package, a method
  folder), a private ``/tmp``, a minimal ``/dev`` (no tty), its own ``/proc`` and its folder at
  ``/job`` (writable; ``job.json`` and ``data.npz`` read-only). The process that called ``enter``
  stays outside the job's PID namespace as its watchdog: it kills the job (PID 1 of the
  namespace: every process in it dies) at the wall limit plus grace, even when the driver is
  stopped, and exits with the job's status. The job gets no capability back (``no_new_privs``).
- **fallback** (no user namespaces, or ``SRTUI_ISOLATION=fallback``): the kernel limits and the
  affinity guard below, nothing more; the run says so.

Always: ``RLIMIT_AS`` (what the process has mapped, plus twice the memory limit and a slack),
``RLIMIT_FSIZE``, ``RLIMIT_NPROC``, no core files, and a seccomp filter that refuses
``sched_setaffinity`` (the driver's one-core pin cannot be widened). The environment is the
driver's allow-list (engine.process.supervise.worker_environment); stdin is /dev/null and the job
has no controlling terminal (its own session).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import platform
import resource
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any, NoReturn

from engine.errors import SrtuiError
from engine.process import fallback, seccomp

ISOLATION_ENV = "SRTUI_ISOLATION"  # "fallback": do not use namespaces even where they work
JOB_ROOT = "/job"
JOB_UID_BASE = 0x70000000  # the driver's root: each job runs as JOB_UID_BASE + its watchdog's pid
#: what a job may add to its memory limit in address space: an interpreter with numpy maps far
#: more than it touches (thread stacks, allocator arenas); the driver's PSS check is the tight one
AS_SLACK_BYTES = 1 << 30
FSIZE_BYTES = 1 << 30  # the largest file a job may write (predictions are capped at 256 MB)
NPROC = 512  # processes and threads of a job
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


# --- what the driver decides ------------------------------------------------------------------


@dataclass(frozen=True)
class Isolation:
    """The isolation jobs get on this machine: ``mode`` is ``namespaces`` or ``fallback``."""

    mode: str
    summary: str  # what jobs get, in a few words

    @property
    def line(self) -> str:
        """The capability report's one line (``srtui run --dry-run``, ``srtui methods check``)."""
        return f"isolation: {self.summary}"


_FOUND: dict[str | None, Isolation] = {}


def isolation() -> Isolation:
    """What this machine gives jobs, found once per driver (and value of ``SRTUI_ISOLATION``)
    by sealing a throwaway child."""
    key = os.environ.get(ISOLATION_ENV)
    if key not in _FOUND:
        _FOUND[key] = _probe()
    return _FOUND[key]


def _probe() -> Isolation:
    import subprocess
    import tempfile

    who = "the driver is root: each job runs as a uid of its own" if os.geteuid() == 0 else "user namespaces"
    if os.environ.get(ISOLATION_ENV) == "fallback":
        why = f"{ISOLATION_ENV}=fallback"
    else:
        with tempfile.TemporaryDirectory(prefix="srtui-seal-probe-") as folder:
            with open(os.path.join(folder, "job.json"), "w") as fh:
                json.dump({"seal": {"mode": "namespaces", "wall_s": 60.0, "mem_mb": 512.0}}, fh)
            os.chmod(folder, 0o755)
            source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            proc = subprocess.run(
                [sys.executable, "-m", "engine.process.seal", folder],
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": source},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
                check=False,
            )
        if proc.returncode == 0 and proc.stdout.strip() == b"sealed":
            return Isolation(
                "namespaces",
                f"namespaces (mount, pid, network, ipc; {who}); a job sees its own folder only",
            )
        lines = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
        why = lines[-1][:160] if lines else f"exit {proc.returncode}"
    return Isolation(
        "fallback",
        f"fallback ({why}): kernel limits, no terminal, an environment allow-list; each job runs as a uid of its own"
        if os.geteuid() == 0
        else "a job can read and write what this user can",
    )


def config(mode: str, limits: dict[str, float], network: bool, ro: list[str]) -> dict[str, Any]:
    """The ``seal`` section of a job's job.json, which ``enter`` follows (``limits``: the job's
    wall and memory as ``engine.spec.Limits.crossing`` derives them)."""
    return {"mode": mode, "network": network, "ro": ro, **limits}


def protect_driver() -> None:
    """Under the fallback, where a job runs as the driver's user beside it: the driver's /proc
    files (environ, fd, mem) become root's and it cannot be traced, so a job reads none of them
    (PR_SET_DUMPABLE 0; reset by exec in the processes the driver starts)."""
    _c().prctl(4, 0, 0, 0, 0)


# --- in a fork server -------------------------------------------------------------------------

SERVER_ENV = "SRTUI_SEAL"  # a fork server's environment: "namespaces" when its jobs are sealed


def server_start() -> int | None:
    """First thing in a fork server whose jobs are sealed: an ordinary user's server enters a
    user namespace of its own (its jobs' namespaces are then made without a second fork);
    returns a descriptor of its own PID namespace (engine.process.job_inits goes back to it
    after each job's fork), or None."""
    if os.environ.get(SERVER_ENV) != "namespaces":
        return None
    try:
        if os.geteuid() != 0:
            uid, gid = os.getuid(), os.getgid()
            _check(_c().unshare(ctypes.c_int(CLONE_NEWUSER)), "unshare")
            _map_own_ids(uid, gid)
        return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None  # its jobs seal themselves with a fork of their own (``enter``)


# --- in the job's process ---------------------------------------------------------------------


def enter(jobdir: str, in_own_pid_ns: bool = False) -> str:
    """Seal this process as its job.json says and return the job's folder as the job sees it.
    Under namespaces the method's code runs in PID 2 of a new PID namespace whose PID 1 is an
    init of srtui's; only PID 2 returns. A fork server's job is PID 2 already
    (``in_own_pid_ns``: the server forked it into an init's namespace, engine.process.job_inits,
    and is its watchdog); an exec'd worker makes the namespace, forks the init (which forks the
    job: ``_init``), stays outside as the watchdog and exits as the job did (never returns)."""
    with open(os.path.join(jobdir, "job.json"), "rb") as fh:
        cfg = json.load(fh).get("seal") or {}
    mode = cfg.get("mode", "fallback")
    if mode != "namespaces":
        if os.geteuid() == 0:  # not root on the host: a uid of its own (engine.process.fallback)
            fallback.become_job_uid(jobdir, _job_uid(jobdir), [p for p in cfg.get("ro") or [] if isinstance(p, str)])
        else:  # forked from a server that is not dumpable: its own /proc files the driver's again
            _c().prctl(4, 1, 0, 0, 0)
        _limits(cfg)
        _lock_down()
        return jobdir
    root = os.geteuid() == 0
    binds = _ro_paths([p for p in cfg.get("ro") or [] if isinstance(p, str)], jobdir)
    flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (0 if cfg.get("network") else CLONE_NEWNET)
    uid = _job_uid(jobdir) if root else None
    held_mb = float(cfg.get("mem_mb") or 0)
    if uid is not None:
        os.chown(jobdir, uid, uid)  # its folder is the one place it writes
    if in_own_pid_ns:  # root, or the server's user namespace, which owns the PID namespace too
        _check(_c().unshare(ctypes.c_int(flags)), "unshare")
        _build_root(jobdir, binds, held_mb)  # its /proc is its PID namespace's
        if uid is None:  # a user namespace of its own: its own count of processes (RLIMIT_NPROC)
            _own_user_namespace()
        _become_job(cfg, uid)
        return JOB_ROOT
    ids = os.getuid(), os.getgid()  # (inside a new user namespace they read as unmapped)
    _check(_c().unshare(ctypes.c_int(flags | CLONE_NEWPID | (0 if root else CLONE_NEWUSER))), "unshare")
    if uid is None:
        _map_own_ids(*ids)
    reported, report = os.pipe()
    first = os.fork()
    if first == 0:  # PID 1: it mounts its /proc while the old root is still there
        os.close(reported)
        _build_root(jobdir, binds, held_mb)
        _init(report)
        _become_job(cfg, uid)
        return JOB_ROOT
    os.close(report)
    _watch(first, float(cfg.get("wall_s") or 0), reported)


def _init(report_fd: int) -> None:
    """PID 1 of an exec'd job's namespace forks the job (PID 2, which returns: signals work for it as
    for any process) and stays its init: reaps every orphan, and when the job ends writes its
    wait status to ``report_fd`` and exits (the kernel then kills what is left in the namespace).
    The job cannot signal it (an init ignores what it has no handler for) nor trace it."""
    job = os.fork()
    if job == 0:
        os.close(report_fd)
        _check(_c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
        return
    _c().prctl(4, 0, 0, 0, 0)  # not dumpable: not traceable by the job
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for fd in set(_open_fds()) - {report_fd}:
        with contextlib.suppress(OSError):
            os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == job:
            with contextlib.suppress(OSError):
                os.write(report_fd, struct.pack("i", status))
            os._exit(0)


def _open_fds() -> list[int]:
    return [int(fd) for fd in os.listdir("/proc/self/fd")]


def job_status(init_status: int, reported_fd: int) -> int:
    """The job's wait status as its init reported it (``_init``), else the init's own."""
    try:
        data = os.read(reported_fd, 4)
    except OSError:
        data = b""
    return struct.unpack("i", data)[0] if len(data) == 4 else init_status


def _job_uid(jobdir: str) -> int:
    """Under root, the job's own uid: from its folder's inode (unique among live folders)."""
    return JOB_UID_BASE + os.stat(jobdir).st_ino % (1 << 24)


def _map_own_ids(uid: int, gid: int) -> None:
    """Map this user (its ids outside) to itself in the user namespace just made."""
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _own_user_namespace() -> None:
    uid, gid = os.getuid(), os.getgid()
    _check(_c().unshare(ctypes.c_int(CLONE_NEWUSER)), "unshare a user namespace")
    _map_own_ids(uid, gid)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def python_paths() -> list[str]:
    """The trees this interpreter imports from: its prefixes, its site-packages, srtui's engine."""
    import site

    engine = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # through an environment's link
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, engine}
    paths.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    with contextlib.suppress(AttributeError):
        paths.update(site.getsitepackages())
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site:
        paths.add(user_site)
    return sorted(os.path.realpath(p) for p in paths if p and os.path.isdir(p))


def _build_root(jobdir: str, binds: list[str], held_mb: float) -> None:
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
    job's memory (engine.process.held). Mounted in the staging root, which is detached later."""
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


def _become_job(cfg: dict[str, Any], uid: int | None) -> None:
    """The job (PID 2 of its namespace): no capability, its limits."""
    _c().sethostname(b"job", 3)  # its own UTS namespace
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # root to a uid of its own: every capability goes
        _c().prctl(4, 1, 0, 0, 0)  # dumpable again: its own /proc/self (it is alone in its namespace)
    else:
        _drop_capabilities()
    _limits(cfg)
    _lock_down()


def _drop_capabilities() -> None:
    header = struct.pack("II", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # effective, permitted, inheritable: empty (two 32-bit words each)
    _check(_c().capset(header, data), "capset")


def _mapped_bytes() -> int:
    """This process's address space now (VmSize), 0 where /proc cannot say."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read(64).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limits(cfg: dict[str, Any]) -> None:
    mem = int(float(cfg.get("mem_mb") or 0) * 2**20)
    if mem > 0:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        # on top of what this process has mapped already (a forked job inherits its server's
        # libraries, often over a GB of address space), twice the limit and the slack: the
        # driver's tree-wide RSS watch ends an over-limit job first and calls it oom; this is
        # the kernel's bound for when the driver cannot (stopped, say)
        want = _mapped_bytes() + 2 * mem + AS_SLACK_BYTES
        if hard == resource.RLIM_INFINITY or want < hard:
            resource.setrlimit(resource.RLIMIT_AS, (want, want))
    for name, value in ((resource.RLIMIT_FSIZE, FSIZE_BYTES), (resource.RLIMIT_CORE, 0)):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(name, (value, value))
    if cfg.get("mode") == "namespaces":  # its own uid (root) or user namespace: its own count
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NPROC, (NPROC, NPROC))


def _lock_down() -> None:
    """No new privileges (no setuid, no file capabilities), a fresh empty session keyring, and
    the seccomp filter (engine.process.seccomp: Docker's default profile and more)."""
    _check(_c().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    seccomp.fresh_session_keyring(_c())  # before the filter, which refuses keyctl itself
    err = seccomp.install(_c())
    if err:
        raise SealError(err, f"seccomp: {os.strerror(err)}")


def _watch(job: int, wall_s: float, reported_fd: int) -> NoReturn:
    """The watchdog: outside the job's PID namespace, so the job cannot signal it. Kills the job
    at the wall limit (the whole namespace goes with its PID 1), then exits as the job did."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the driver's SIGTERM is the job's (it gets it too)
    with contextlib.suppress(OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    deadline = time.monotonic() + wall_s if wall_s > 0 else None
    try:
        fd = os.pidfd_open(job)
    except OSError:
        fd = None
    while True:
        pid, status = os.waitpid(job, os.WNOHANG)
        if pid == job:
            break
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            with contextlib.suppress(OSError):
                os.kill(job, signal.SIGKILL)
            deadline = None
            continue
        wait_ms = int(min(left if left is not None else 3600.0, 3600.0) * 1000) + 1
        if fd is not None:
            select.select([fd], [], [], wait_ms / 1000)
        else:
            time.sleep(min(0.05, wait_ms / 1000))
    sys.stdout.flush()
    status = job_status(status, reported_fd)
    if os.WIFSIGNALED(status):
        died_by = os.WTERMSIG(status)
        if died_by not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(died_by, signal.SIG_DFL)
        os.kill(os.getpid(), died_by)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _self_test() -> int:
    """``python -m engine.process.seal FOLDER``: seal a throwaway job there and report."""
    where = enter(sys.argv[1])
    ok = where == JOB_ROOT and os.getpid() == 2 and not os.path.exists("/oldroot") and os.path.isfile("job.json")
    print("sealed" if ok else f"not sealed: pid {os.getpid()} in {os.getcwd()}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(_self_test())
    except OSError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
