"""A process pool with a real per-task deadline: a worker that overruns is killed and replaced.

The deadline counts the worker's own CPU time (user + system, polled from the kernel through
psutil), so a result does not depend on the machine's load: the releases' wall-clock limits were a
quiet machine's CPU time. A wall-clock backstop
(``WALL_FACTOR`` deadlines, at least ``WALL_MIN_S``) still ends a worker that sleeps or is
starved; :class:`TaskResult` says which limit ended a task.

``concurrent.futures`` cannot cancel a running task, and SIGALRM cannot interrupt sympy's C-level
loops (nor work off the main thread), so each worker is a plain process fed through its own pipe;
the parent waits on all pipes with the nearest deadline as timeout and ``kill``s a late worker.
Workers are forked from a single-threaded parent (they inherit the imported sympy); a parent with
threads (a run's driver) uses a forkserver with the expression code preloaded instead, so no
thread state is inherited.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from typing import Any

#: memory cap of one worker (address space), so a runaway simplify cannot take the machine
DEFAULT_MEM_MB = 4000
#: the wall-clock backstop of a task: WALL_FACTOR deadlines (of CPU time), at least WALL_MIN_S
#: seconds; a worker asleep, or starved to a few % of a core, still ends
WALL_FACTOR, WALL_MIN_S = 10.0, 120.0
#: ``TaskResult.limit`` of a task ended by its CPU-time deadline / by the wall-clock backstop
CPU_LIMIT, WALL_LIMIT = "cpu", "wall"


@dataclass
class TaskResult:
    key: Hashable
    status: str  # "ok" | "timeout" | "error" | "crashed"
    value: Any = None  # the function's return value when ok, else a one-line reason
    seconds: float = 0.0  # wall-clock
    cpu_seconds: float = 0.0  # the worker's CPU time on this task
    limit: str = ""  # a timeout's limit: CPU_LIMIT (the deadline) or WALL_LIMIT (the backstop)


def _die_with_parent() -> None:
    """SIGKILL this worker when its parent dies (a Dask worker killed mid-task leaves no orphan)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the pipe's EOF still ends an idle worker


def _worker_main(fn: Callable[[Any], Any], conn: Connection, mem_mb: int | None) -> None:
    import signal

    # Ctrl-C reaches the terminal's whole process group: it is the driver's to handle (it stops or
    # kills this worker); here it only printed a traceback into the run's live panel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if mem_mb:
        try:
            import resource

            limit = int(mem_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass  # no rlimit on this platform: the deadline still applies
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        key, payload = msg
        try:
            out = ("ok", fn(payload))
        except MemoryError:
            out = ("error", "out of memory")
        except RecursionError:
            out = ("error", "recursion too deep")
        except Exception as exc:  # noqa: BLE001 - a failing metric must not kill the pool
            out = ("error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        conn.send((key, out))


class _Slot:
    def __init__(self, ctx: Any, fn: Callable[[Any], Any], mem_mb: int | None, core: int | None = None) -> None:
        self.parent, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main, args=(fn, child, mem_mb), daemon=True)
        self.proc.start()
        child.close()
        if core is not None and self.proc.pid is not None:
            try:  # a run's slot computes metrics on its own core, never on a running job's
                os.sched_setaffinity(self.proc.pid, {core})
            except (AttributeError, OSError):
                pass
        self.key: Hashable | None = None
        self.started = 0.0
        self.cpu0 = 0.0
        self.ps: Any = None

    def begin(self, key: Hashable) -> None:
        """Mark the task ``key`` sent now: its wall clock and the worker's CPU time start here."""
        self.key, self.started = key, time.monotonic()
        self.cpu0 = self.cpu_time()

    def cpu_time(self) -> float:
        """The worker's CPU time so far (user + system), or 0.0 once it is gone."""
        import psutil

        try:
            if self.ps is None:
                self.ps = psutil.Process(self.proc.pid)
            t = self.ps.cpu_times()
            return float(t.user + t.system)
        except (psutil.Error, OSError, TypeError):
            return 0.0

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.parent.send(None)
            except (BrokenPipeError, OSError):
                self.proc.kill()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.parent.close()


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


class TimedPool:
    """``run(tasks)`` yields a :class:`TaskResult` per ``(key, payload)`` as each finishes.

    ``timeout``: seconds of the worker's CPU time per task; ``backstop``: wall-clock seconds per
    task (default ``WALL_FACTOR * timeout``, at least ``WALL_MIN_S``; a print shown to a person
    passes ``timeout``, so its wait is wall-clock as a person's is)."""

    def __init__(
        self,
        fn: Callable[[Any], Any],
        workers: int | None = None,
        timeout: float = 10.0,
        mem_mb: int | None = DEFAULT_MEM_MB,
        preload: tuple[str, ...] = (),
        core: int | None = None,
        backstop: float | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.fn, self.timeout, self.mem_mb, self.core = fn, float(timeout), mem_mb, core
        self.backstop = float(backstop) if backstop else max(WALL_FACTOR * self.timeout, WALL_MIN_S)
        self.n = workers or default_workers()
        if mp.current_process().daemon:
            # a Dask worker under its nanny is marked daemonic, and multiprocessing then refuses
            # children; ours die with it (parent-death signal) and are stopped by close()
            mp.current_process().daemon = False
        methods = mp.get_all_start_methods()
        if "fork" in methods and threading.active_count() == 1:
            # single-threaded parent: fork is safe, and workers inherit the imported sympy
            self.ctx: BaseContext = mp.get_context("fork")
        else:
            self.ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
            if "forkserver" in methods:
                from srtui.engine import private

                private.multiprocessing_sockets_in_private()  # its socket's path must fit AF_UNIX
            if "forkserver" in methods and preload:
                self.ctx.set_forkserver_preload(list(preload))
        self.slots: list[_Slot] = []
        self.replaced = 0

    def __enter__(self) -> TimedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for s in self.slots:
            s.stop(kill=s.key is not None)
        self.slots = []

    def run(self, tasks: Iterable[tuple[Hashable, Any]]) -> Iterator[TaskResult]:
        queue = deque(tasks)
        while len(self.slots) < min(self.n, len(queue)):
            self.slots.append(_Slot(self.ctx, self.fn, self.mem_mb, self.core))
        busy: dict[Connection, _Slot] = {}
        while queue or busy:
            for slot in self.slots:
                if slot.key is None and queue:
                    key, payload = queue.popleft()
                    slot.begin(key)
                    slot.parent.send((key, payload))
                    busy[slot.parent] = slot
            if not busy:
                break
            ready = set(wait(list(busy), timeout=self._next_check(busy.values())))
            for conn in [c for c in busy if c in ready]:
                slot = busy.pop(conn)
                key, slot.key = slot.key, None
                wall, cpu = time.monotonic() - slot.started, slot.cpu_time() - slot.cpu0
                try:
                    _, (status, value) = conn.recv()
                except (EOFError, OSError):
                    yield TaskResult(key, "crashed", f"worker died (exit code {slot.proc.exitcode})", wall, cpu)
                    self._replace(slot)
                    continue
                yield TaskResult(key, status, value, wall, max(cpu, 0.0))
            for conn, slot in list(busy.items()):
                late = self._late(slot)
                if late is not None:
                    del busy[conn]
                    slot.key = None
                    self._replace(slot, kill=True)
                    yield late

    def _next_check(self, busy: Iterable[_Slot]) -> float:
        """Seconds to wait for a result before looking at the clocks again: the least CPU time
        left of a busy task (a worker's CPU time grows no faster than the wall clock while it
        runs on one core), or its backstop if nearer; at least 10 ms."""
        now, left = time.monotonic(), []
        for slot in busy:
            left.append(min(self.timeout - (slot.cpu_time() - slot.cpu0), slot.started + self.backstop - now))
        return max(0.01, min(left))

    def _late(self, slot: _Slot) -> TaskResult | None:
        """The timeout of ``slot``'s task if it is past its CPU-time deadline or its backstop."""
        wall, cpu = time.monotonic() - slot.started, slot.cpu_time() - slot.cpu0
        if cpu >= self.timeout:
            why, limit = f"exceeded {self.timeout:g} s of CPU time", CPU_LIMIT
        elif wall >= self.backstop:
            why = f"exceeded the wall-clock backstop of {self.backstop:g} s ({cpu:.2f} s of CPU time)"
            limit = WALL_LIMIT
        else:
            return None
        return TaskResult(slot.key, "timeout", why, wall, cpu, limit)

    def _replace(self, slot: _Slot, kill: bool = True) -> None:
        slot.stop(kill=kill)
        i = self.slots.index(slot)
        self.slots[i] = _Slot(self.ctx, self.fn, self.mem_mb, self.core)
        self.replaced += 1


def render_timeout(default: float) -> float:
    """Seconds a print of an untrusted model may take: ``default``, or SRTUI_RENDER_TIMEOUT_S (for
    tests of the deadline, which no ordinary model reaches)."""
    return float(os.environ.get("SRTUI_RENDER_TIMEOUT_S") or default)


class Bounded:
    """``fn(payload)`` in a process of its own under a deadline, callable from any thread: one
    worker, started on first use and kept (replaced after a timeout). For work on untrusted
    input outside a job (printing a model string), where a few characters can cost hours."""

    def __init__(
        self,
        fn: Callable[[Any], Any],
        timeout: float,
        mem_mb: int | None = DEFAULT_MEM_MB,
        preload: tuple[str, ...] = (),
    ) -> None:
        self.fn, self.timeout, self.mem_mb, self.preload = fn, timeout, mem_mb, preload
        self._pool: TimedPool | None = None
        self._lock = threading.Lock()

    def __call__(self, payload: Any) -> TaskResult:
        with self._lock:
            if self._pool is None:
                # shown to a person, who waits in wall-clock time: the backstop is the deadline
                self._pool = TimedPool(self.fn, 1, self.timeout, self.mem_mb, self.preload, backstop=self.timeout)
            [result] = list(self._pool.run([(0, payload)]))
            return result

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
