"""The PID 1 of each sealed job a fork server forks, made by a small process, not the server.

A sealed job runs in a PID namespace of its own. Its PID 1 (the job's init) must outlive the
job: when the init exits, the kernel kills whatever is left in the namespace (the job's
escapees). Forking that init from the fork server copies the server's page tables (some 150 MB
of imported libraries) and then forking the job from the init copies them again: about 10 ms of
CPU a job, a third of a built-in job's. So a small process, the maker, forked from the server
before its imports (``start``), forks every init; the server forks the job straight into the
init's namespace (``fork_job``: setns, fork), so the job is PID 2 and the server's only fork.

An init does nothing but exist. It is not dumpable (the maker made itself so before forking it):
the job can neither trace it nor read its /proc files or its root, which is the host's. It
ignores SIGCHLD (the kernel reaps what it inherits; a job is its own subreaper anyway), ignores
every signal sent from inside its namespace (an init without handlers), and exits at EOF of a
pipe whose write end only the server holds, or with the maker. The server reaps the job itself,
then ends the init (``JobInit.end``): the namespace is empty before the driver hears of the exit.

Stdlib only: a method environment's interpreter runs it too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import socket
from dataclasses import dataclass

from srtui.engine.process.seal_root import CLONE_NEWPID, PR_SET_PDEATHSIG, SealError, _c, _check

PR_SET_DUMPABLE = 4
#: how long the server waits for an ended init's namespace to empty (escapees in the kernel's
#: uninterruptible sleep can hold it): the report goes to the driver then in any case
END_WAIT_MS = 2000


@dataclass
class JobInit:
    """A job's init as the server holds it: a pidfd (to kill it, and to see it gone) and the
    write end of the pipe it waits on."""

    pidfd: int
    pipe: int

    def end(self) -> None:
        """Kill the init (and so every process of the namespace) and wait until it is gone."""
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(self.pipe)
        with contextlib.suppress(OSError):
            select.select([self.pidfd], [], [], END_WAIT_MS / 1000)
        with contextlib.suppress(OSError):
            os.close(self.pidfd)

    def kill(self) -> None:
        """The watchdog's kill: the namespace goes, the job (PID 2) with it."""
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)


class InitMaker:
    """The server's end of the maker: one request, one init."""

    def __init__(self, sock: socket.socket, own_pid_ns: int) -> None:
        self.sock = sock
        self.own_pid_ns = own_pid_ns

    def fork_job(self) -> tuple[int, JobInit | None]:
        """``os.fork`` into a fresh init's PID namespace: (job pid, its init) in the server, (0,
        None) in the job, which is PID 2 there."""
        init = self._new_init()
        try:
            _check(_c().setns(init.pidfd, ctypes.c_int(CLONE_NEWPID)), "setns into the job's PID namespace")
            pid = os.fork()
        except BaseException:
            self._back()
            init.end()
            raise
        if pid == 0:
            return 0, None
        try:
            self._back()
        except OSError:
            init.end()  # the job with it; the server must not fork on in a job's namespace
            raise
        return pid, init

    def _back(self) -> None:
        """The server's next fork (the next init's job, or nothing) starts from its own namespace."""
        _check(_c().setns(self.own_pid_ns, ctypes.c_int(CLONE_NEWPID)), "setns back")

    def _new_init(self) -> JobInit:
        read_end, write_end = os.pipe()
        try:
            socket.send_fds(self.sock, [b"init"], [read_end])
        finally:
            os.close(read_end)
        try:
            msg, fds, _flags, _addr = socket.recv_fds(self.sock, 512, 1)
        except OSError:
            os.close(write_end)
            raise
        if len(fds) != 1:
            os.close(write_end)
            for fd in fds:
                os.close(fd)
            raise SealError(0, f"no init for the job: {msg.decode('utf-8', 'replace')[:200] or 'the maker is gone'}")
        return JobInit(pidfd=fds[0], pipe=write_end)


def start(own_pid_ns: int | None) -> InitMaker | None:
    """Fork the maker (call before the server imports anything large); None when the server's
    jobs are not sealed or this kernel cannot make inits this way (the job then seals itself
    with a fork of its own, srtui.engine.process.seal.enter)."""
    if own_pid_ns is None or not hasattr(os, "pidfd_open"):
        return None
    server_end, maker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        server_end.close()
        try:
            _maker(maker_end, own_pid_ns)
        finally:
            os._exit(0)
    maker_end.close()
    maker = InitMaker(server_end, own_pid_ns)
    try:  # one init made and entered: the kernel allows all of it here
        job, init = maker.fork_job()
        if job == 0:
            os._exit(0)
        os.waitpid(job, 0)
        if init is not None:
            init.end()
    except OSError:
        server_end.close()
        return None
    return maker


def _maker(sock: socket.socket, own_pid_ns: int) -> None:
    _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the server
    _c().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # and so does every init it forks: not traceable
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # its inits are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver's Ctrl-C: the server decides
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 64, 1)
        except InterruptedError:
            continue
        except OSError:
            return
        if not msg:
            return  # EOF: the server is gone
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            sock.send(b"expected one pipe")
            continue
        try:
            init = _fork_init(fds[0], sock, own_pid_ns)
        except OSError as exc:
            sock.send(f"{type(exc).__name__}: {exc}".encode())
            continue
        finally:
            os.close(fds[0])
        try:
            socket.send_fds(sock, [b"ok"], [init])
        finally:
            os.close(init)


def _fork_init(pipe: int, sock: socket.socket, own_pid_ns: int) -> int:
    """PID 1 of a new PID namespace; returns its pidfd (before the kernel can reap it: it lives
    until the pipe's EOF)."""
    _check(_c().unshare(ctypes.c_int(CLONE_NEWPID)), "unshare a PID namespace")
    try:
        pid = os.fork()
    finally:
        if os.getpid() != 1:  # the maker (the init is PID 1): the next init needs a fresh namespace
            _check(_c().setns(own_pid_ns, ctypes.c_int(CLONE_NEWPID)), "setns back")
    if pid == 0:
        _be_init(pipe, sock)  # never returns
    try:
        return os.pidfd_open(pid)
    except OSError:
        os.kill(pid, signal.SIGKILL)
        raise


def _be_init(pipe: int, sock: socket.socket) -> None:
    try:
        _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the maker
        sock.detach()
        os.closerange(0, pipe)
        os.closerange(pipe + 1, os.sysconf("SC_OPEN_MAX"))
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)  # PID 1 of a namespace: ignored from inside it
        while True:
            try:
                if not os.read(pipe, 64):
                    break
            except InterruptedError:
                continue
    finally:
        os._exit(0)
