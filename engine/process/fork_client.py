"""The driver's end of one fork server (srtui.engine.process.fork_server): its own, started here
and ended with this driver, or a kept one this user's commands share
(srtui.engine.process.kept_servers). A job is asked for over its socket (the job's pipes passed as
descriptors) and comes back as a :class:`ForkedProcess`, which srtui.engine.process.launch's
``ExitWaiter`` and the supervisor treat as they treat an exec'd worker.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

from srtui.engine import private
from srtui.engine.process import kept_servers, tree
from srtui.engine.process.fork_server import DRIVER_PLACEHOLDER, LEAN_ENV, PLACEHOLDER
from srtui.engine.process.kept_servers import START_TIMEOUT_S

#: a server whose memory grew this much since it started is replaced (a leak in the server)
LEAK_BYTES = 256 << 20
REPLY_TIMEOUT_S = 60.0


@dataclass
class ForkedProcess:
    """What run_job needs of a started worker, as for a Popen: pid, pipes, returncode; and the
    pipe its server reports the wait status through (the server, not we, is its parent)."""

    pid: int
    stdout: IO[bytes]
    stderr: IO[bytes]
    status_fd: int
    returncode: int | None = None
    lost: str | None = None  # why no status came: the job died with its server (retried as lost)


class ForkServer:
    """The driver's end of one server: its process, socket and a lock (one request at a time).
    Its own server (started here, dies with this driver) or a kept one (``kept``: this user's
    server of the same key, started by an earlier command or now: srtui.engine.process.kept_servers)."""

    def __init__(
        self,
        family: str,
        key: tuple[object, ...],
        env: dict[str, str],
        python: str = sys.executable,
        lean: bool = False,
        kept: bool = False,
    ) -> None:
        self.family, self.key = family, key
        self.lock = threading.Lock()
        from srtui.engine.process import seal

        server_env = dict(env)
        server_env[tree.TOKEN_ENV] = PLACEHOLDER
        server_env[tree.DRIVER_ENV] = DRIVER_PLACEHOLDER  # each job writes its driver's (a kept server's outlives it)
        server_env[seal.SERVER_ENV] = seal.isolation().mode  # its jobs sealed: the server is their watchdog
        if lean:
            server_env[LEAN_ENV] = "1"
        self.cwd = str(private.private_dir())  # ours alone; -P: no folder of anyone's first on sys.path
        self.proc: subprocess.Popen[bytes] | None = None
        self.pidfd = -1
        self.kept_key = kept_servers.key(family, server_env, python, seal.isolation().mode) if kept else None
        if self.kept_key is None:
            hello = self._start_own(family, server_env, python)
        else:
            self.log_path = kept_servers.paths(self.kept_key)[2]
            self.sock, hello = kept_servers.connect(self.kept_key, family, server_env, python, self.log_path)
            if kept_servers.peer(self.sock)[0] != hello.get("pid"):
                self.sock.close()
                raise OSError("the kept fork server's hello names another process")
            # its process, held while we are connected (a signal through it never reaches a pid
            # reused after the server's death)
            self.pidfd = os.pidfd_open(int(hello["pid"]))
        if "error" in hello:
            self.close()
            raise OSError(hello["error"])
        self.pid = int(hello["pid"])
        self.socket_inode = hello.get("socket_inode")
        self.cwd = str(hello.get("cwd") or self.cwd)
        self.sock.settimeout(REPLY_TIMEOUT_S)
        self.baseline = int(hello.get("rss") or 0) or self._memory()

    def _start_own(self, family: str, server_env: dict[str, str], python: str) -> dict[str, Any]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.log = tempfile.TemporaryFile(prefix="forkserver-log-", dir=private.private_dir())  # noqa: SIM115 - lives as long as its server
        try:
            self.proc = subprocess.Popen(
                private.python_command(python, "-m", "srtui.engine.process.fork_server", family, str(theirs.fileno())),
                cwd=self.cwd,
                env=server_env,
                stdin=subprocess.DEVNULL,
                stdout=self.log,
                stderr=self.log,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        self.sock.settimeout(START_TIMEOUT_S)
        return self._receive()

    def _receive(self) -> dict[str, Any]:
        try:
            data = self.sock.recv(MAX_REPLY)
        except OSError as exc:
            raise OSError(f"no answer from the fork server: {exc}; {self.tail()}") from None
        if not data:
            raise OSError(f"the fork server exited; {self.tail()}")
        reply: dict[str, Any] = json.loads(data)
        return reply

    def tail(self) -> str:
        try:
            if self.proc is None:  # a kept server's log, bounded: the end of it
                with open(self.log_path, "rb") as fh:
                    fh.seek(max(0, os.fstat(fh.fileno()).st_size - 4096))
                    text = fh.read()
            else:
                self.log.seek(0)
                text = self.log.read()
            lines = [ln for ln in text.decode("utf-8", "replace").splitlines() if ln.strip()]
            return lines[-1][:300] if lines else "it said nothing"
        except OSError:
            return "its log is unreadable"

    def _memory(self) -> int:
        try:
            return int(psutil.Process(self.pid).memory_info().rss)
        except psutil.Error:
            return 0

    def healthy(self) -> bool:
        """Alive, single-threaded, and not grown by a leak since it started."""
        if self.proc is not None and self.proc.poll() is not None:
            return False
        try:
            if psutil.Process(self.pid).num_threads() != 1:
                return False
        except psutil.Error:
            return False
        return self._memory() - self.baseline < LEAK_BYTES

    def fork(self, scratch: Path, env: dict[str, str]) -> ForkedProcess:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        request = {
            "env": env,
            "cwd": str(scratch),
            "jobdir": str(scratch),
            "worker_path": str(Path(__file__).with_name("job_worker.py")),
            "server_cwd": self.cwd,
        }
        try:
            with self.lock:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [out_w, err_w, status_w])
                reply = self._receive()
        except BaseException:
            for fd in (out_r, err_r, status_r):
                os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w, status_w):
                os.close(fd)
        if "pid" not in reply:
            for fd in (out_r, err_r, status_r):
                os.close(fd)
            raise OSError(reply.get("error", "no pid in the fork server's answer"))
        return ForkedProcess(int(reply["pid"]), open(out_r, "rb"), open(err_r, "rb"), status_r)

    def close(self) -> None:
        if self.proc is None:  # a kept server: it stays for the next command
            self.sock.close()
            if self.pidfd >= 0:
                os.close(self.pidfd)
                self.pidfd = -1
            return
        try:
            self.sock.close()  # EOF: the server exits
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.log.close()


MAX_REPLY = 1 << 16
