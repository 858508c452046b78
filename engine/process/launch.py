"""How a job's worker process is started: a fresh interpreter (exec) or a fork of a server.

``exec``: ``python -m srtui.engine.process.job_worker JOBDIR`` per job, every import paid by every job.
``fork``: a fork server per method family in this process (srtui.engine.process.fork_server) forks the job;
the job is then this process's child, with the same pipes, limits, files and tree as under exec.
``auto`` (the default): fork for methods that declare ``fork_safe`` and for method folders whose
imports are known fork-safe (srtui.engine.process.fork_plan), exec for the others.

The driver's end of each server (its own, or a kept one: srtui.engine.process.kept_servers) is
srtui.engine.process.fork_client's. The servers of one process live in a pool: started on one
long-lived thread (a server's parent-death signal fires when the thread that started it exits),
replaced when they die, leak memory or grow threads, and stopped by EOF of their socket when
this process ends.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from srtui.engine import private
from srtui.engine.process import kept_servers, tree
from srtui.engine.process.fork_client import ForkedProcess, ForkServer
from srtui.engine.process.fork_server import TOKEN_ROOM

log = logging.getLogger("srtui.forkserver")


def measure(methods: dict[str, str], pythons: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    """Start the servers of these methods (name -> ref) now, in their environments' interpreters
    (``pythons``: name -> python, python_path, as the jobs get them), and wait for them: name ->
    why a server cannot be used (a thread after its imports, or it failed to start)."""
    from srtui.engine.process.worker_env import worker_environment

    refused: dict[str, str] = {}

    def start(name: str, family: str) -> None:
        env, python = worker_environment(), (pythons or {}).get(name, {}).get("python")
        if python is not None:  # as run_job gives a job of that environment
            env["PYTHONPATH"] = (pythons or {})[name].get("python_path") or ""
        if POOL.server(family, env, python) is None:
            refused[name] = POOL.refusal(family, env, python) or "its fork server did not start"

    threads = [
        threading.Thread(target=start, args=(name, family_of(ref)), name="srtui-forkserver-measure", daemon=True)
        for name, ref in methods.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return refused


def warm(method_refs: list[str], lean: bool = False) -> None:
    """Start the servers of these (forked) methods' families now, in the background, so their
    imports overlap the driver's planning instead of delaying the first jobs; ``lean``: for a
    plan of one job (its server leaves ``LEAN_SKIPS`` to that job)."""
    from srtui.engine.process.worker_env import worker_environment

    env = worker_environment()
    for family in dict.fromkeys(family_of(ref) for ref in method_refs):
        threading.Thread(
            target=POOL.server, args=(family, env, None, lean), name="srtui-forkserver-warm", daemon=True
        ).start()


def family_of(method_ref: str) -> str:
    """Methods that share a server: the adapter module of a built-in; for a folder, the folder
    adapter with what the folder imports among the known fork-safe libraries (its own code is
    imported in the job, never in the server)."""
    from srtui.engine.methods import registry
    from srtui.engine.process.fork_plan import folder_family

    if method_ref.startswith(registry.SRBENCH_PREFIX):
        return folder_family(method_ref[len(registry.SRBENCH_PREFIX) :])
    target = registry.BUILTIN.get(method_ref, "")
    return target.partition(":")[0] or method_ref


#: bytes of a fork server's exit report read at the most (bounded work, whoever writes it)
_REPORT_CAP = 64 * 1024


class ExitWaiter:
    """Tells when the worker has exited, with its wait status and rusage: wait4 on our own
    child (exec), the status its server reports (fork). ``fd`` wakes a poll when it is time."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.forked = isinstance(proc, ForkedProcess)
        self.report = b""
        try:
            self.fd: int | None = proc.status_fd if self.forked else os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.fd = None

    def poll(self) -> tuple[int, int, Any]:
        """(pid, wait status, rusage) once the worker has exited, else (0, 0, None)."""
        if not self.forked:
            return os.wait4(self.proc.pid, os.WNOHANG)
        ready = select.poll()  # poll, not select: descriptors of a 1024-slot driver go past FD_SETSIZE
        ready.register(self.proc.status_fd, select.POLLIN)
        while True:  # the report ends at EOF, which follows its bytes at once
            if not ready.poll(0):
                return 0, 0, None
            chunk = os.read(self.proc.status_fd, 4096)
            if not chunk or len(self.report) > _REPORT_CAP:  # a report is under 200 bytes
                break
            self.report += chunk
        try:
            report = json.loads(self.report)
            usage = SimpleNamespace(ru_utime=report["utime"], ru_stime=report["stime"], ru_maxrss=report["maxrss"])
            return self.proc.pid, int(report["status"]), usage
        except (ValueError, KeyError, TypeError):  # the server died: so did its job (death signal)
            self.proc.lost = "its fork server died under it"
            return self.proc.pid, signal.SIGKILL, SimpleNamespace(ru_utime=0.0, ru_stime=0.0, ru_maxrss=0)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def starter(launcher: str, method_ref: str, env: dict[str, str], python: str | None = None) -> Callable[[Path], Any]:
    """A function that starts the job's worker in a scratch dir (a Popen or a ForkedProcess).
    Under fork, the family's server is made ready here, before the job's clock starts. A method
    in its own environment runs that environment's interpreter (``python``), exec'd or forked from
    a server of its own."""
    interpreter = python or sys.executable
    if launcher != "fork" or len(env.get(tree.TOKEN_ENV, "")) > TOKEN_ROOM - 2:
        return lambda scratch: _exec_worker(scratch, env, interpreter)
    server = POOL.server(family_of(method_ref), env, python)
    if server is None:
        return lambda scratch: _exec_worker(scratch, env, interpreter)

    def fork(scratch: Path) -> Any:
        try:
            return server.fork(scratch, env)
        except OSError as exc:
            log.warning("srtui: fork server %s failed (%s); replaced, this job runs exec'd", server.family, exc)
            POOL.discard(server)
            return _exec_worker(scratch, env, interpreter)

    return fork


def _exec_worker(scratch: Path, env: dict[str, str], python: str = sys.executable) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        private.python_command(python, "-m", "srtui.engine.process.job_worker", str(scratch)),
        cwd=scratch,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )


class ServerPool:
    """This process's fork servers, by family and import-time environment."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.servers: dict[tuple[object, ...], ForkServer] = {}
        self.refused: dict[tuple[object, ...], str] = {}  # families whose server cannot be used, and why
        self.starting: dict[tuple[object, ...], threading.Lock] = {}
        self.requests: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self.spawner: threading.Thread | None = None
        self.keep = False  # a `methods check`: its servers are kept ones (``keep_servers``)

    @staticmethod
    def key(family: str, env: dict[str, str], python: str | None) -> tuple[object, ...]:
        from srtui.engine.process.seal import isolation
        from srtui.engine.process.worker_env import THREAD_VARS

        return (family, tuple(env.get(v) for v in THREAD_VARS), env.get(tree.DRIVER_ENV), python, isolation().mode)

    def refusal(self, family: str, env: dict[str, str], python: str | None = None) -> str | None:
        """Why the server of ``family`` cannot be used (None: it can, or was never tried)."""
        with self.lock:
            return self.refused.get(self.key(family, env, python))

    def server(
        self, family: str, env: dict[str, str], python: str | None = None, lean: bool = False
    ) -> ForkServer | None:
        """The healthy server of ``family`` (started or replaced as needed) in this interpreter or
        a method environment's (``python``); None: exec instead. ``lean``: a server started here
        for a plan of one job (srtui.engine.process.fork_server.LEAN_SKIPS); one running is used
        whichever it is."""
        key = self.key(family, env, python)
        with self.lock:
            gate = self.starting.setdefault(key, threading.Lock())
        with gate:  # one start per family at a time; other slots wait for it
            with self.lock:
                current, refused = self.servers.get(key), self.refused.get(key)
            if refused is not None:
                return None
            if current is not None and current.healthy():
                return current
            if current is not None:
                log.warning("srtui: fork server %s died or leaked; starting a new one", family)
                self.discard(current)
            try:
                fresh = self._on_spawner(lambda: self._make(family, key, env, python or sys.executable, lean))
            except OSError as exc:
                with self.lock:
                    self.refused[key] = str(exc)
                log.warning("srtui: no fork server for %s (%s); its jobs run exec'd", family, exc)
                return None
            with self.lock:
                self.servers[key] = fresh
            return fresh

    def _make(self, family: str, key: tuple[object, ...], env: dict[str, str], python: str, lean: bool) -> ForkServer:
        """A kept server where this process keeps them and jobs are sealed in PID namespaces
        (srtui.engine.process.kept_servers), else (or when it cannot be had) one of our own."""
        from srtui.engine.process.seal import isolation

        if self.keep and kept_servers.idle_seconds() > 0 and isolation().mode == "namespaces":
            try:
                return ForkServer(family, key, env, python, lean, kept=True)
            except (OSError, private.PrivateDirError) as exc:
                log.warning("srtui: no kept fork server for %s (%s); starting one of this command's", family, exc)
        return ForkServer(family, key, env, python, lean)

    def _on_spawner(self, make: Callable[[], ForkServer]) -> ForkServer:
        tree.become_subreaper()  # before the server exists: its jobs are re-parented to us
        with self.lock:
            if self.spawner is None:
                atexit.register(self.close)
            if self.spawner is None or not self.spawner.is_alive():
                self.spawner = threading.Thread(target=self._spawn_loop, name="srtui-forkserver", daemon=True)
                self.spawner.start()
        done: Future[ForkServer] = Future()
        self.requests.put((make, done))
        return done.result()

    def _spawn_loop(self) -> None:
        while True:
            make, done = self.requests.get()
            try:
                done.set_result(make())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting slot
                done.set_exception(exc if isinstance(exc, OSError) else OSError(f"{type(exc).__name__}: {exc}"))

    def close(self) -> None:
        """End every server and wait for it (at this process's exit): its CPU time and its
        jobs' reach this process's children's (``getrusage``), as an exec'd worker's do."""
        with self.lock:
            servers = list(self.servers.values())
            self.servers.clear()
        for server in servers:
            server.close()

    def discard(self, server: ForkServer) -> None:
        with self.lock:
            if self.servers.get(server.key) is server:
                del self.servers[server.key]
        if server.kept_key is not None:  # unhealthy for every command: ended, not only left
            kept_servers.end(server.pidfd, server.socket_inode, server.kept_key)
        server.close()


POOL = ServerPool()


def keep_servers() -> None:
    """This process's fork servers are kept ones (a `methods check`: its next call, or another
    check's, forks from a warm server: srtui.engine.process.kept_servers)."""
    POOL.keep = True
