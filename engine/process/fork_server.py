"""The fork server: a pre-imported interpreter that forks one job worker per request.

Started by srtui.engine.process.launch as a fresh interpreter (``python -m srtui.engine.process.fork_server
FAMILY``, never forked from the driver, whose threads and handlers must not leak into jobs). It
sets nothing up but imports: numpy, scikit-learn, sympy, pandas and the method family's modules, with the
thread-count variables already in its environment, and it checks it is still single-threaded.

Each request (one SOCK_SEQPACKET message: the job's env, cwd, jobdir, plus its stdout, stderr
and status pipes as passed fds) is answered with the pid of the forked job. The server stays the
job's parent: it reaps it and writes its wait status and rusage to the job's status pipe, which
the driver reads instead of wait4 (srtui.engine.process.launch). The job applies the worker's limits
itself (srtui.engine.process.job_worker._harden) and runs the same code (srtui.engine.process.job_worker.run)
writing the same files.
Its orphans go to the driver, the nearest child subreaper (the server is not one), as under exec.

The server exits on EOF of its socket (the driver is gone), on an idle timeout, and by its
parent-death signal; its jobs die with it (their parent-death signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from srtui.engine.process import huge_pages
from srtui.engine.process.fork_child import ROOMS, open_fds, run_child
from srtui.engine.process.job_inits import InitMaker, JobInit
from srtui.engine.process.kept_servers import Listening

#: pre-imported in every server (what nearly every method's fit imports)
BASE_MODULES = ("numpy", "sklearn", "sklearn.base", "sklearn.utils", "sympy", "pandas")
#: a server started for a plan of one job (``LEAN_ENV`` is "1") leaves these to that job: it
#: imports them itself if its family needs them (an adapter names them in ``preload_modules``),
#: and most do not (issue 56: sympy was a quarter of a `methods check`'s server start)
LEAN_SKIPS = ("sympy",)
LEAN_ENV = "SRTUI_FORKSERVER_LEAN"
#: the job token's value in the server's own environment: room the child overwrites in place,
#: so /proc/PID/environ (read by the escapee sweeps) shows the job's token, as for an exec'd worker
TOKEN_ROOM = 400
PLACEHOLDER = "forkserver-" + "-" * (TOKEN_ROOM - len("forkserver-"))
#: the same for the driver's identity (``pid:start-time``): a recovery sweep spares a job whose
#: driver is alive, read there; a kept server's own was the long-gone driver that started it
DRIVER_ROOM = 64
DRIVER_PLACEHOLDER = "driver-" + "-" * (DRIVER_ROOM - len("driver-"))
IDLE_EXIT_S = 900.0
MAX_MESSAGE = 1 << 20


def _environ_slot(name: str) -> tuple[int, int] | None:
    """(address, length) of ``name``'s value in the process's initial environment block."""
    libc = ctypes.CDLL(None)
    table = ctypes.cast(ctypes.c_void_p.in_dll(libc, "environ").value or 0, ctypes.POINTER(ctypes.c_void_p))
    prefix = (name + "=").encode()
    i = 0
    while table[i]:
        text = ctypes.string_at(table[i])
        if text.startswith(prefix):
            return table[i] + len(prefix), len(text) - len(prefix)
        i += 1
    return None


def _preload(family: str) -> list[str]:
    """Import the base modules, the family's adapter module and the further modules the family
    names (a folder's known fork-safe imports: srtui.engine.process.fork_plan); returns failures."""
    import importlib

    from srtui.engine.process.fork_plan import split_family

    family, extra = split_family(family)

    # pandas imports pyarrow when it is installed, and pyarrow's jemalloc starts a background
    # thread at load: a fork server must stay single-threaded (read by jemalloc at its start)
    os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")

    failed = []
    skips = LEAN_SKIPS if os.environ.get(LEAN_ENV) == "1" else ()
    for name in (m for m in _base_modules(family) if m not in skips):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a job that needs it reports the failure itself
            failed.append(name)
    import encodings.cp437  # noqa: F401 - zipfile's, for numpy.load of the job's data

    import srtui.engine.methods.registry

    # the built-ins' declarations, read from srtui's own source once here, not in every job
    # (``registry.load``: 3 ms of a forked job's CPU, issue 56)
    srtui.engine.methods.registry.declared()
    for name in extra:  # names read from a folder's imports: a class or function is no module
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the job imports what it needs and reports
            pass
    import srtui.engine.process.cgroups  # the job joins its cgroup first thing (job_worker._harden)
    import srtui.engine.process.energy
    import srtui.engine.process.job_worker
    import srtui.engine.scaling
    import srtui.engine.spec

    srtui.engine.process.energy.warm()  # the forked workers inherit the counters found and the CPU power per core
    if "sklearn" not in failed:
        _warm_sklearn()
    from srtui.engine.methods.base import Method, remember_versions

    try:
        module = importlib.import_module(family)
    except Exception as exc:  # noqa: BLE001 - the job loads it again and reports
        return [*failed, f"{family}: {type(exc).__name__}"]
    for value in vars(module).values():  # every adapter of the family: the union of their modules
        if isinstance(value, type) and issubclass(value, Method) and value.__module__ == family:
            try:
                method = value()
                failed += method.preload()
                remember_versions(method)  # its jobs report the version without the search
            except Exception:  # noqa: BLE001 - an adapter that needs arguments (folders)
                continue
    return failed


def _base_modules(family: str) -> tuple[str, ...]:
    """What the server imports before the family's own modules: ``BASE_MODULES``, or what the
    family's adapter module declares its jobs need (``FORK_SERVER_IMPORTS``: scikit-learn's
    baselines need no sympy, a quarter of a second of CPU at the server's start and 30 MB more
    image to fork for every job)."""
    import importlib

    try:
        declared = getattr(importlib.import_module(family), "FORK_SERVER_IMPORTS", None)
    except Exception:  # noqa: BLE001 - reported when the family is imported below
        declared = None
    if isinstance(declared, tuple) and all(isinstance(name, str) for name in declared):
        return declared
    return BASE_MODULES


def _warm_sklearn() -> None:
    """What scikit-learn does once per process on the first fit, done here for every job: the
    search of the installed distributions' entry points for dataframe plugins (narwhals,
    ~40 ms of CPU, then cached), and for a data frame its pandas backend's imports. Library
    code on two rows of numbers: nothing of a job's. The server's thread check follows."""
    try:
        import numpy as np
        from sklearn.dummy import DummyRegressor

        DummyRegressor().fit(np.zeros((2, 1)), np.zeros(2))
    except Exception:  # noqa: BLE001 - a job pays it again, nothing worse
        pass
    if "pandas" in sys.modules:  # folders' jobs fit on data frames (SRBench's evaluate_model.py)
        try:
            import pandas as pd

            frame = pd.DataFrame({"x0": [0.0, 1.0]})
            DummyRegressor().fit(frame, np.zeros(2)).predict(frame)
        except Exception:  # noqa: BLE001 - as above
            pass


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@dataclass
class Running:
    """A job the server forked: it reaps it, reports its status, and (sealed) is its watchdog."""

    pid: int
    status_fd: int
    init: JobInit | None  # its PID namespace's init (srtui.engine.process.job_inits), when sealed
    deadline: float | None = None  # when the watchdog kills it (its wall limit plus grace)
    owner: int = -1  # the connection that asked for it (a kept server's jobs die with theirs)


def serve(
    sock: socket.socket | None, family: str, maker: InitMaker | None = None, kept: Listening | None = None
) -> int:
    """Serve one driver's socket (``sock``) until it closes, or (``kept``) every connection of
    this user's drivers until idle (srtui.engine.process.kept_servers)."""
    slot = _environ_slot("SRTUI_JOB_TOKEN")
    driver = _environ_slot("SRTUI_DRIVER")
    if driver is not None and driver[1] == len(DRIVER_PLACEHOLDER):
        ROOMS["SRTUI_DRIVER"] = driver
    failed = _preload(family)
    # the imported objects never change: out of the collector's sight, so a job's collections do
    # not walk (and copy-on-write) every page it shares with the server. Before the hello: the
    # first job's wall time (from the driver's request) is then its own, not the server's collection
    gc.collect()
    gc.freeze()
    # then on huge pages, before the hello: the driver's first job waits for the hello, not this.
    # Not for a plan of one job (`methods check`): 60-190 ms of CPU to save ~5 ms on one fork
    if os.environ.get(LEAN_ENV) != "1":
        huge_pages.collapse()
    hello: dict[str, Any] = {
        "pid": os.getpid(),
        "threads": _threads(),
        "failed": failed,
        "rss": _rss(),
        "cwd": os.getcwd(),
    }
    if slot is None or slot[1] != len(PLACEHOLDER) or "SRTUI_DRIVER" not in ROOMS:
        hello["error"] = "the job token's or driver's room is not in the initial environment"
    elif _threads() != 1:
        hello["error"] = f"{_threads()} threads after the imports (a fork server must be single-threaded)"
    if "error" in hello or slot is None:
        if sock is not None:
            sock.send(json.dumps(hello).encode())
        elif kept is not None:
            kept.accept(hello)  # the driver waiting says why; the next starts a server again
        return 1
    if sock is not None:
        sock.send(json.dumps(hello).encode())
    # the libraries' own descriptors: a job keeps them (not the server's sockets or namespace)
    own = {s.fileno() for s in (sock, kept.sock if kept else None) if s is not None}
    keep = set(open_fds()) - own - (set() if maker is None else {maker.sock.fileno(), maker.own_pid_ns})
    conns = {sock.fileno(): sock} if sock is not None else {}
    return _loop(conns, kept, slot, keep, maker, hello)


def _loop(
    conns: dict[int, socket.socket],
    kept: Listening | None,
    slot: tuple[int, int],
    keep: set[int],
    maker: InitMaker | None,
    hello: dict[str, Any],
) -> int:
    """Answer requests, report exits and watch deadlines; return when the driver is gone (or a
    kept server has been idle long enough)."""
    listen_fd = kept.sock.fileno() if kept is not None else -1
    idle_s = kept.idle_s if kept is not None else IDLE_EXIT_S
    jobs: dict[int, Running] = {}  # by the job's pidfd
    poller = select.poll()
    for fd in [*conns, listen_fd] if listen_fd >= 0 else conns:
        poller.register(fd, select.POLLIN)
    idle_since = time.monotonic()
    while True:
        soonest = min((j.deadline for j in jobs.values() if j.deadline), default=time.monotonic() + 1.0)
        events = poller.poll(int(max(0.0, min(1.0, soonest - time.monotonic())) * 1000) + 1)
        quiet = not jobs and not events
        idle = quiet and time.monotonic() - idle_since > idle_s
        if kept is None and idle:
            return 0
        # a kept server whose socket is gone (removed by hand, or evicted for a newer server:
        # kept_servers.evict) can be reached by no driver: it leaves as soon as it is quiet
        if kept is not None and quiet and not conns and (idle or not kept.reachable()) and kept.may_exit():
            return 0
        for fd, _mask in events:
            if fd in jobs:
                poller.unregister(fd)
                _report_exit(fd, jobs.pop(fd))
                idle_since = time.monotonic()
            elif fd == listen_fd and kept is not None:
                conn = kept.accept(hello)
                if conn is not None:
                    conns[conn.fileno()] = conn
                    poller.register(conn, select.POLLIN)
            elif fd in conns and not _serve_request(conns[fd], slot, keep, jobs, poller, maker, fd):
                if kept is None:
                    return 0  # EOF: the driver is gone (the jobs' parent-death signal follows)
                poller.unregister(fd)
                conns.pop(fd).close()
                _end_jobs_of(fd, jobs.values())
                idle_since = time.monotonic()
        _watchdog(jobs.values())


def _end_jobs_of(owner: int, jobs: Iterable[Running]) -> None:
    """Kill what a driver that went away left running (it can no longer watch or record it)."""
    for job in jobs:
        if job.owner == owner:
            job.owner, job.deadline = -1, None
            if job.init is not None:
                job.init.kill()
            else:
                with contextlib.suppress(OSError):
                    os.killpg(job.pid, signal.SIGKILL)


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _watchdog(jobs: Iterable[Running]) -> None:
    """Kill a sealed job at its wall limit plus grace even when the driver is stopped: the
    server is outside the job's PID namespace, whose init takes every process with it."""
    now = time.monotonic()
    for job in jobs:
        if job.deadline is not None and job.deadline <= now and job.init is not None:
            job.deadline = None
            job.init.kill()


def _serve_request(
    sock: socket.socket,
    slot: tuple[int, int],
    keep: set[int],
    jobs: dict[int, Running],
    poller: Any,
    maker: InitMaker | None,
    owner: int = -1,
) -> bool:
    try:
        msg, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, 4)
    except OSError:
        return False
    if not msg:
        return False
    status_fd = fds.pop() if len(fds) == 3 else -1
    try:
        if status_fd < 0:  # its exit could not be reported (nor the descriptor closed)
            raise ValueError(f"expected the job's stdout, stderr and status pipes, got {len(fds)} descriptors")
        request = json.loads(msg)
        wall_s = _wall_limit(request.get("jobdir", ""))
        pid, init = _spawn(request, fds, sock, slot, keep, maker)
        pidfd = os.pidfd_open(pid)
        deadline = time.monotonic() + wall_s if init is not None and wall_s > 0 else None
        jobs[pidfd] = Running(pid, status_fd, init, deadline, owner)
        poller.register(pidfd, select.POLLIN)
        reply: dict[str, Any] = {"pid": pid}
    except Exception as exc:  # noqa: BLE001 - one bad request must not take the server down
        reply = {"error": f"{type(exc).__name__}: {exc}"}
        if status_fd >= 0:
            os.close(status_fd)
    finally:
        for fd in fds:
            os.close(fd)
    try:
        sock.send(json.dumps(reply).encode())
    except OSError:  # the driver went away after asking: the caller ends the job it asked for
        return False  # (a kept server serves the others on: its end would be theirs too)
    return True


def _report_exit(pidfd: int, job: Running) -> None:
    """Reap the job; its init goes next (every process left in its namespace with it); the job's
    wait status and rusage go to the driver through its status pipe."""
    os.close(pidfd)
    _, status, usage = os.wait4(job.pid, 0)
    if job.init is not None:
        job.init.end()
    report = {"status": status, "utime": usage.ru_utime, "stime": usage.ru_stime, "maxrss": usage.ru_maxrss}
    try:
        os.write(job.status_fd, json.dumps(report).encode())
    except OSError:
        pass  # the driver stopped waiting
    os.close(job.status_fd)


def _wall_limit(jobdir: str) -> float:
    """The sealed job's wall limit plus grace and margin (srtui.engine.process.seal.config), from the
    job.json the driver wrote just now; 0 when there is none."""
    try:
        with open(os.path.join(jobdir, "job.json"), "rb") as fh:
            return float((json.load(fh).get("seal") or {}).get("wall_s") or 0)
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def _spawn(
    request: dict[str, Any],
    fds: list[int],
    sock: socket.socket,
    slot: tuple[int, int],
    keep: set[int],
    maker: InitMaker | None = None,
) -> tuple[int, JobInit | None]:
    """Fork the job (PID 2 of a PID namespace of its own when its jobs are sealed: the maker
    made its init); the server stays its parent (it reaps it, reports its status, and is its
    watchdog)."""
    if len(fds) != 2:
        raise ValueError(f"expected the job's stdout and stderr, got {len(fds)} descriptors")
    sys.stdout.flush()
    sys.stderr.flush()
    request["server_pid"] = os.getpid()
    job, init = maker.fork_job() if maker is not None else (os.fork(), None)
    if job == 0:
        request["in_own_pid_ns"] = maker is not None
        run_child(request, fds, sock, slot, keep)  # never returns
    return job, init


def main() -> None:
    args = sys.argv[1:]
    kept_args = args[2:] if len(args) == 5 and args[1] == "--kept" else None
    if len(args) != 2 and kept_args is None:
        print(
            "usage: python -m srtui.engine.process.fork_server FAMILY (SOCKET_FD | --kept READY_FD SOCKET_PATH IDLE_S)",
            file=sys.stderr,
        )
        sys.exit(64)
    from srtui.engine.process import job_inits, tree
    from srtui.engine.process.fallback import server_not_dumpable
    from srtui.engine.process.seal import SERVER_ENV, server_start

    sock, kept = None, None
    if kept_args is None:
        tree.die_with_parent()  # the spawning thread lives as long as the driver
        sock = socket.socket(fileno=int(args[1]))
        parent = os.environ.get("SRTUI_PARENT_PID")
        if parent and os.getppid() != int(parent):
            sys.exit(70)  # the driver died before the death signal was armed
    elif os.environ.get(SERVER_ENV) != "namespaces":
        sys.exit(64)  # kept only for jobs sealed in PID namespaces (srtui.engine.process.kept_servers)
    else:
        kept = Listening(kept_args[1], int(kept_args[0]), float(kept_args[2]))
    pid_ns = server_start()  # before any import starts a thread (a user namespace needs one)
    if os.environ.get(SERVER_ENV) != "namespaces":
        server_not_dumpable()  # its jobs run beside it, unsealed: they read none of its memory
    maker = job_inits.start(pid_ns)  # before the imports: the inits it forks stay small
    code = serve(sock, args[0], maker, kept)
    # the driver is gone or it was idle: leave without tearing down the imported libraries (a
    # tenth of a second the driver waits for at its exit, issue 56); its jobs die with it
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
