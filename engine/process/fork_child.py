"""A job process forked by the fork server, made to look like a fresh
``python -m srtui.engine.process.job_worker``.

Runs in the forked child only. It leaves the server's session, takes its stdout/stderr pipes,
closes the server's own descriptors, takes the job's environment (and its token in
/proc/PID/environ), reseeds numpy's global RNG (the random module reseeds itself after fork),
then applies the worker's limits and runs the worker's code. It ends as the interpreter would: non-daemon
threads joined, atexit handlers run, streams
flushed, an uncaught exception printed with exit code 1.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import os
import signal
import socket
import sys
import threading
import traceback
from typing import Any, NoReturn

#: the server's other in-place environment values (name -> slot), found at its start
#: (srtui.engine.process.fork_server): each job writes its own value there, as its token
ROOMS: dict[str, tuple[int, int]] = {}


def run_child(
    request: dict[str, Any], fds: list[int], sock: socket.socket, slot: tuple[int, int], keep: set[int]
) -> NoReturn:
    import time

    started = time.time(), time.process_time(), os.getpid()
    code = 70
    try:
        os.setsid()
        _take_stdio(fds, sock, keep)
        _take_environment({**request["env"], "SRTUI_PARENT_PID": str(request["server_pid"])}, slot)
        os.chdir(request["cwd"])
        sys.argv = [request["worker_path"], request["jobdir"]]
        if sys.path and sys.path[0] == request.get("server_cwd"):
            sys.path[0] = request["cwd"]  # `python -m` puts its cwd first: the job's, under exec
        import numpy as np

        np.random.seed()  # a fresh interpreter seeds numpy's global RNG from the OS
        from srtui.engine.process import job_worker

        job_worker.TIMING[:] = [("started", *started)]
        job_worker.mark("child set up")
        code = _run_worker(request["jobdir"], request["cwd"], bool(request.get("in_own_pid_ns")))
    except BaseException:  # noqa: BLE001 - anything before the worker runs: report, never serve on
        traceback.print_exc()
        code = 1 if code == 70 else code
    _exit_like_interpreter(code)


def _take_stdio(fds: list[int], sock: socket.socket, keep: set[int]) -> None:
    out_fd, err_fd = fds
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    sock.detach()  # its number may be reused below: the object must not close it later
    for fd in open_fds():
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    # fresh text streams, as a new interpreter builds them for pipes under PYTHONUNBUFFERED
    for fd, name, errors in ((1, "stdout", "strict"), (2, "stderr", "backslashreplace")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "wb", closefd=False)
        stream = io.TextIOWrapper(
            raw,
            encoding=getattr(old, "encoding", None) or "utf-8",
            errors=errors,
            newline="\n",
            line_buffering=False,
            write_through=True,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def open_fds() -> list[int]:
    return [int(fd) for fd in os.listdir("/proc/self/fd")]


def write_environ_value(slot: tuple[int, int], value: str) -> bool:
    """Overwrite the value in place: ``value``, NUL, then filler without '=' (skipped by
    environ readers) up to the slot's own terminating NUL."""
    address, room = slot
    data = value.encode()
    if len(data) > room - 2 or b"\0" in data:
        return False
    ctypes.memmove(address, data + b"\0" + b"x" * (room - len(data) - 1), room)
    return True


def _take_environment(env: dict[str, str], slot: tuple[int, int]) -> None:
    from srtui.engine.process import tree

    # only what differs from the server's: clearing and refilling all of it cost a job 0.9 ms
    for key in [k for k in os.environ if k not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
    if not write_environ_value(slot, env[tree.TOKEN_ENV]):
        raise RuntimeError("the job token does not fit in the fork server's environment")
    for name, room in ROOMS.items():
        if not write_environ_value(room, env.get(name, "")):
            raise RuntimeError(f"{name} does not fit in the fork server's environment")


def _run_worker(jobdir: str, cwd: str, in_own_pid_ns: bool = False) -> int:
    from srtui.engine.process import job_worker

    sealed = job_worker.enter(jobdir, in_own_pid_ns)  # the one sealing of both launchers (srtui.engine.process.seal)
    if sealed != jobdir:
        jobdir = sealed
        if sys.path and sys.path[0] == cwd:
            sys.path[0] = sealed
    try:
        try:
            return job_worker.run(jobdir)
        finally:
            job_worker._kill_descendants()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0)
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the interpreter exits "by" SIGINT
        os.kill(os.getpid(), signal.SIGINT)
        return 1
    except BaseException:  # noqa: BLE001 - an uncaught error: traceback, exit code 1
        traceback.print_exc()
        return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
            pass


def _exit_like_interpreter(code: int) -> NoReturn:
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # join non-daemon threads
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    _flush()
    os._exit(code)
