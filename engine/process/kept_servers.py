"""Fork servers kept between commands: a `methods check` forks its job from a warm server.

A check is one job, and its fork server's imports (scikit-learn: ~0.9 s of a 1.3 s check) were
most of its wall time (issue 56). A *kept* server is the same fork server
(srtui.engine.process.fork_server) listening on a socket in this user's private folder instead of
one socketpair: the next check of the same family connects to it and its job forks at once.

What keeps it as safe as a driver's own server:
- Where: ``<private folder>/fs-<key>.sock``, 0700 and owner-checked; each end checks the
  other's uid (``SO_PEERCRED``), so only this user's srtui reaches it and it answers nobody else.
- What: the key digests the family, the interpreter, the server's whole environment (the
  driver's identity aside), this machine's isolation, the driver's cgroup, every file of srtui's
  code and every distribution's metadata (a method environment's own too), and what a started
  server hands on to its jobs from its starter (``inherited``: limits, nice, umask, signals,
  namespaces): an edit, an upgrade, another environment or a check under ``nice`` gets a server
  of its own; at most ``MAX_KEPT`` live (``evict``).
- Whose jobs: each connection owns the jobs it asked for; when it closes (the driver exited or
  was killed) the server kills the ones still running (their PID namespace's init takes all).
- Only where jobs are sealed in PID namespaces: their escapees stay in their namespace, so no
  driver needs to be the subreaper of a job it did not fork.
- How long: it exits after ``SRTUI_KEEP_SERVER_S`` seconds (``IDLE_DEFAULT_S``) without a
  connection or a job, under the same lock a driver connects under (no connection is lost to an
  exit); ``0`` keeps none (the check's server is then its driver's, as a run's is). One whose
  socket is gone (evicted, removed by hand) leaves once quiet. A driver waits ``WAIT_S`` at most
  for the lock and for a running server's hello (a stopped driver or server holds nobody).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from srtui.engine import private

#: how long a driver waits for a server it started (its own or a kept one) to import and say
#: hello: imports on a loaded machine take seconds, not minutes
START_TIMEOUT_S = 300.0
#: the variable that says how long an idle kept server lives (seconds; 0: none is kept)
IDLE_ENV = "SRTUI_KEEP_SERVER_S"
IDLE_DEFAULT_S = 600.0
#: environment entries of a server that differ by driver and do not change what it imports
PER_DRIVER = ("SRTUI_DRIVER", "SRTUI_PARENT_PID")
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: how long a driver waits for the lock (another driver starting the server) and for a running
#: server's hello (it greets within a poll of a second): past it, a stopped or hung driver or
#: server does not hold every later check; this one starts a server again or one of its own
WAIT_S = 20.0


def idle_seconds() -> float:
    """How long a kept server waits for its next connection; 0 when none should be kept."""
    try:
        return max(0.0, float(os.environ.get(IDLE_ENV, IDLE_DEFAULT_S)))
    except ValueError:
        return IDLE_DEFAULT_S


def peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a connected unix socket."""
    pid, uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size))
    return pid, uid


def key(family: str, server_env: dict[str, str], python: str, mode: str) -> str:
    """The digest a kept server is found by: everything its imports and its jobs' code depend on."""
    from srtui.engine.code_stamp import code_and_libraries
    from srtui.engine.process.cgroups import own

    digest = hashlib.sha256()
    shared = {k: v for k, v in sorted(server_env.items()) if k not in PER_DRIVER}
    # the driver's cgroup too: a job moves itself from its server's into the driver's job cgroup,
    # which an ordinary user may do only within a tree delegated to them
    digest.update(json.dumps([family, python, mode, os.geteuid(), own(), shared, inherited()]).encode())
    code_and_libraries(digest, ())
    if os.path.abspath(python) != os.path.abspath(sys.executable):  # a method environment's own
        from srtui.engine.kept import stamp
        from srtui.engine.methods.dist_cache import metadata_stamp

        stamp(digest, [python])
        metadata_stamp(digest, environment_paths(python))
    return digest.hexdigest()[:24]


def environment_paths(python: str) -> list[str]:
    """The site-packages folders of the virtual environment of interpreter ``python``
    (``ENV/bin/python``), found without running it: a re-created or upgraded environment at the
    same path is another key, not the old server with the old libraries imported."""
    root = Path(os.path.abspath(python)).parent.parent
    return [str(p) for p in sorted(root.glob("lib*/python*/site-packages"))]


#: the lines of /proc/thread-self/status a started server inherits from the thread starting it
_STATUS = ("Umask", "SigBlk", "SigIgn", "NoNewPrivs", "Seccomp", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


def inherited() -> list[object]:
    """What a server inherits from the driver that starts it and hands on to every job it forks,
    which the job does not set itself: resource limits, umask, nice, affinity, ignored and blocked
    signals, capabilities, no-new-privileges, seccomp, OOM score, namespaces and root. A check
    under ``nice``, ``ulimit -n`` or ``umask 077`` gets a server of its own, and the next plain
    check's job is not run with them (a kept server outlives the driver whose traits it has)."""
    import resource

    found: list[object] = [
        [resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource)) if n.startswith("RLIMIT_")],
        os.getpriority(os.PRIO_PROCESS, 0),  # this thread's (it starts the server)
        sorted(os.sched_getaffinity(0)),
    ]
    with contextlib.suppress(OSError), open("/proc/thread-self/status") as fh:
        found.append([line.strip() for line in fh if line.partition(":")[0] in _STATUS])
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj") as fh:
        found.append(fh.read().strip())
    for name in ("mnt", "pid", "net", "ipc", "uts", "user", "cgroup"):  # a driver in another container
        with contextlib.suppress(OSError):
            found.append(os.readlink(f"/proc/self/ns/{name}"))
    with contextlib.suppress(OSError):
        root = os.stat("/")
        found.append([root.st_dev, root.st_ino])
    return found


class Lock:
    """The lock one key's socket is made, connected to and removed under (``flock``)."""

    def __init__(self, path: Path) -> None:
        self.path, self.fd = path, private.open_file(path, os.O_RDWR | os.O_CREAT)

    def take(self, timeout: float | None = None) -> None:
        """Take it, waiting ``timeout`` seconds at most (OSError past them; None: no limit)."""
        if timeout is None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            return
        import time

        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(f"another command has held {self.path} for {timeout:.0f} s") from None
                time.sleep(0.05)

    def close(self) -> None:
        os.close(self.fd)  # releases the lock


def paths(digest: str) -> tuple[Path, Path, Path]:
    """The socket, lock and log of the kept server of ``digest``: in the private folder, or (a
    long ``TMPDIR``) the short one a socket's address fits in (``private.socket_dir``)."""
    folder = private.socket_dir()
    return folder / f"fs-{digest}.sock", folder / f"fs-{digest}.lock", folder / f"fs-{digest}.log"


def connect(
    digest: str, family: str, server_env: dict[str, str], python: str, log_path: Path
) -> tuple[socket.socket, dict[str, Any]]:
    """A connection to the kept server of ``digest`` and its hello, started first if none
    answers (the caller sets the reply timeouts); OSError when it cannot be had."""
    path, lock_path, _log = paths(digest)
    lock = Lock(lock_path)
    try:
        lock.take(WAIT_S)
        for attempt in range(2):  # a server may idle out between our connect and its accept
            sock = _connect(path)
            started = sock is None
            if started:
                evict(path)
                _start(path, family, server_env, python, log_path)
                sock = _connect(path)
            if sock is None:
                raise OSError(f"the kept fork server of {family} did not listen at {path}")
            sock.settimeout(START_TIMEOUT_S if started else WAIT_S)  # a new one imports first
            try:
                data = sock.recv(1 << 16)
            except OSError as exc:
                sock.close()
                if started or attempt:
                    raise OSError(f"no hello from the kept fork server of {family}: {exc}") from None
                # stopped or hung: left to itself (its jobs too); its socket goes, a new one starts
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                continue
            if data:
                hello = json.loads(data)
                if isinstance(hello, dict):  # which socket file it was: ``end`` removes that one only
                    with contextlib.suppress(OSError):
                        hello["socket_inode"] = os.stat(path).st_ino
                return sock, hello
            sock.close()
            if attempt == 0:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        raise OSError(f"the kept fork server of {family} exited at once; see {log_path}")
    finally:
        lock.close()


def _connect(path: Path) -> socket.socket | None:
    """A connection to a live listener of this user at ``path``, else None (a stale socket file
    is removed: the caller holds its lock)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            if path.is_socket():
                path.unlink()
        return None
    except OSError:
        sock.close()
        raise
    if peer(sock)[1] != os.geteuid():
        sock.close()
        raise OSError(f"{path} is served by another user's process: refused")
    return sock


def _start(path: Path, family: str, server_env: dict[str, str], python: str, log_path: Path) -> None:
    """Start the server (the caller holds the lock) in a session of its own, and wait until it
    listens at ``path`` (it binds it: its connections' credentials are then its own); it outlives
    this driver (no parent-death signal) until it idles out."""
    _SPAWNED[:] = [p for p in _SPAWNED if p.poll() is None]  # a long-lived driver reaps the ones that left
    ready_r, ready_w = os.pipe()
    try:
        log_fd = private.open_file(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            argv = [family, "--kept", str(ready_w), str(path), str(idle_seconds())]
            _SPAWNED.append(
                subprocess.Popen(
                    private.python_command(python, "-m", "srtui.engine.process.fork_server", *argv),
                    cwd=str(private.private_dir()),
                    env=server_env,
                    stdin=subprocess.DEVNULL,
                    stdout=log_fd,
                    stderr=log_fd,
                    start_new_session=True,
                    pass_fds=(ready_w,),
                )
            )
        finally:
            os.close(log_fd)
        os.close(ready_w)
        ready_w = -1
        import select

        if not select.select([ready_r], [], [], START_TIMEOUT_S)[0] or os.read(ready_r, 1) != b"1":
            raise OSError(f"the kept fork server of {family} did not start; see {log_path}")
    finally:
        os.close(ready_r)
        if ready_w >= 0:
            os.close(ready_w)


#: the most kept servers of one user (each ~175 MB of PSS for ``IDLE_DEFAULT_S``): an edit of
#: srtui, an install or a check under another nice is a new key, and their servers piled up
MAX_KEPT = 4


def evict(path: Path) -> None:
    """Before a server starts at ``path``: remove the sockets of the oldest other kept servers
    beyond ``MAX_KEPT - 1``, each under its own lock (one a driver holds is passed over); each
    leaves once it has no connection and no job (``Listening.reachable``)."""
    others = []
    for sock in path.parent.glob("fs-*.sock"):
        with contextlib.suppress(OSError):
            if sock != path:
                others.append((sock.lstat().st_mtime, sock))
    for _mtime, sock in sorted(others)[: max(0, len(others) - (MAX_KEPT - 1))]:
        try:
            lock = Lock(sock.with_suffix(".lock"))
        except (OSError, private.PrivateDirError):
            continue
        try:
            fcntl.flock(lock.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()
        except BlockingIOError:
            pass
        finally:
            lock.close()


#: the kept servers this process started: never waited for (they outlive it)
_SPAWNED: list[subprocess.Popen[bytes]] = []


def end(pidfd: int, socket_inode: int | None, digest: str) -> None:
    """Stop a kept server found unhealthy (it leaked or grew a thread) and remove its socket, so
    the next connection starts a fresh one: signalled through its pidfd (never a pid reused by
    now), its socket file removed only if it is still the one connected to (not a newer server's)."""
    path, lock_path, _log = paths(digest)
    lock = Lock(lock_path)
    try:
        lock.take()
        with contextlib.suppress(ProcessLookupError, OSError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        with contextlib.suppress(OSError):
            if socket_inode is not None and os.stat(path).st_ino == socket_inode:
                path.unlink()
    finally:
        lock.close()


class Listening:
    """The server's side: accepts this user's connections, says hello, and decides when an idle
    server may exit (under the lock, so a driver connecting meanwhile is never refused)."""

    def __init__(self, path: str, ready_fd: int, idle_s: float) -> None:
        """Listen at ``path`` (the driver that started us holds its lock and has removed any
        stale socket there), then say so on ``ready_fd``."""
        self.path, self.lock_path, self.idle_s = path, path[: -len(".sock")] + ".lock", idle_s
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        self.sock.bind(path)
        os.chmod(path, 0o600)
        self.inode = os.stat(path).st_ino  # the socket file is ours while it is this one
        self.sock.listen(16)
        os.write(ready_fd, b"1")
        os.close(ready_fd)

    def accept(self, hello: dict[str, Any]) -> socket.socket | None:
        """The next connection, greeted; None for one not of this user (closed unanswered)."""
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return None
        if peer(conn)[1] != os.geteuid():
            conn.close()
            return None
        try:
            conn.send(json.dumps(hello).encode())
        except OSError:
            conn.close()
            return None
        return conn

    def reachable(self) -> bool:
        """Whether a driver can still connect: our socket file is at our path."""
        try:
            return os.lstat(self.path).st_ino == self.inode
        except OSError:
            return False

    def may_exit(self) -> bool:
        """Whether to exit now (idle long enough, checked by the caller): only if no driver is
        connecting; the socket file goes first, so the next driver starts a new server."""
        try:
            lock = os.open(self.lock_path, os.O_RDWR | private.NOFOLLOW)
        except OSError:
            return True  # the private folder is gone: nobody can connect
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            return False
        import select

        waiting = select.select([self.sock], [], [], 0)[0]
        if waiting:
            os.close(lock)
            return False
        # only our own socket file: one removed under us (by hand, evicted) may be a newer
        # server's now, started at the same path by the next driver, and with it its log
        gone = not os.path.lexists(self.path)  # under the lock: no newer server since
        with contextlib.suppress(OSError):
            if self.reachable():
                os.unlink(self.path)
                gone = True
        if gone:
            with contextlib.suppress(OSError):  # nothing went wrong (the lock file stays)
                os.unlink(self.path[: -len(".sock")] + ".log")
        self.sock.close()
        return True  # the lock is released at exit, once nobody can reach us
