"""Sealing a job: the job's process sees its own folder and the software it runs, nothing else.

``enter`` is the one sealing function; both launchers call it in the job's own process before
any of the method's code is imported (``python -m srtui.engine.process.job_worker``, exec'd, and the
child a fork server forks, srtui.engine.process.fork_child): the fork server's pre-imported modules are
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
  filter below, and under root a uid of its own (srtui.engine.process.fallback); the run says so.

Always: ``RLIMIT_AS`` (what the process has mapped, plus twice the memory limit and a slack),
``RLIMIT_FSIZE``, ``RLIMIT_NPROC``, no core files, a fresh session keyring and the seccomp filter
of srtui.engine.process.seccomp (Docker's default profile and more; ``sched_setaffinity`` among them:
the driver's one-core pin cannot be widened). The job's filesystem: srtui.engine.process.seal_root. The
environment is the driver's allow-list (srtui.engine.process.worker_env.worker_environment); stdin is
/dev/null and the job has no controlling terminal (its own session).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any, NoReturn

from srtui.engine import source
from srtui.engine.process import fallback, seccomp
from srtui.engine.process.seal_root import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
    JOB_ROOT,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    SealError,
    _c,
    _check,
    _ro_paths,
    _write,
    build_root,
)

ISOLATION_ENV = "SRTUI_ISOLATION"  # "fallback": do not use namespaces even where they work
JOB_UID_BASE = 0x70000000  # the driver's root: each job runs as JOB_UID_BASE + its watchdog's pid
#: what a job may add to its memory limit in address space: an interpreter with numpy maps far
#: more than it touches (thread stacks, allocator arenas); the driver's PSS check is the tight one
AS_SLACK_BYTES = 1 << 30
FSIZE_BYTES = 1 << 30  # the largest file a job may write (predictions are capped at 256 MB)
NPROC = 512  # processes and threads of a job


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
    by sealing a throwaway child, or kept from an earlier driver of the same machine state."""
    key = os.environ.get(ISOLATION_ENV)
    if key not in _FOUND:
        _FOUND[key] = _kept_or_probed(key)
    return _FOUND[key]


def _kept_or_probed(env: str | None) -> Isolation:
    """A sealed probe's answer kept by an earlier driver (under seal_key's digest of the machine's
    state), else :func:`_probe` now; only a sealed answer is kept."""
    from srtui.engine import kept
    from srtui.engine.process.seal_key import machine_key

    key = machine_key(env)
    found = kept.cached("isolation", key)
    if isinstance(found, list) and len(found) == 2 and found[0] == "namespaces" and isinstance(found[1], str):
        return Isolation(found[0], found[1])
    probed = _probe()
    if probed.mode == "namespaces":
        kept.keep("isolation", key, [probed.mode, probed.summary])
    return probed


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
            proc = subprocess.run(
                [sys.executable, "-P", "-m", "srtui.engine.process.seal", folder],  # -P: no cwd on sys.path
                cwd=folder,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": source.import_root()},
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
    wall and memory as ``srtui.engine.spec.Limits.crossing`` derives them)."""
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
    returns a descriptor of its own PID namespace (srtui.engine.process.job_inits goes back to it
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
    (``in_own_pid_ns``: the server forked it into an init's namespace, srtui.engine.process.job_inits,
    and is its watchdog); an exec'd worker makes the namespace, forks the init (which forks the
    job: ``_init``), stays outside as the watchdog and exits as the job did (never returns)."""
    # the root it builds must be traversable by the uid of its own a root driver gives it: a
    # hardened root's umask 077 made every job fail on /job (its folders are made here)
    os.umask(0o022)
    with open(os.path.join(jobdir, "job.json"), "rb") as fh:
        cfg = json.load(fh).get("seal") or {}
    mode = cfg.get("mode", "fallback")
    if mode != "namespaces":
        if os.geteuid() == 0:  # not root on the host: a uid of its own (srtui.engine.process.fallback)
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
        build_root(jobdir, binds, held_mb)  # its /proc is its PID namespace's
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
        build_root(jobdir, binds, held_mb)
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
    the seccomp filter (srtui.engine.process.seccomp: Docker's default profile and more)."""
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
    """``python -m srtui.engine.process.seal FOLDER``: seal a throwaway job there and report."""
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
