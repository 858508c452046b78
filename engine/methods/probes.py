"""Probe methods: misbehaving on purpose, to prove the engine's limits. In no default suite."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from srtui.engine.methods.base import FittedModel, Method, builtin
from srtui.engine.spec import FitBudget


def _constant(value: float) -> FittedModel:
    return FittedModel(predict=lambda X: np.full(len(X), value), expression=repr(value))


class _Probe(Method):
    family = "probe"
    fork_safe = True  # numpy only; the probes fork, thread and crash in the job itself
    licence = "part of srtui"
    honours_time_limit = False


@builtin()
class Noop(_Probe):
    name = "probe-noop"
    honours_time_limit = True

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        fitted = _constant(float(np.mean(y)))
        # what the engine handed the fit (tests/e2e/test_limit_path.py follows the limit down here)
        fitted.notes = {"budget_type": type(fit_budget).__name__, "budget_nominal": fit_budget.nominal}
        return fitted


@builtin()
class Sleep(_Probe):
    """Sleeps (default: forever) and ignores SIGTERM, so only SIGKILL ends it."""

    name = "probe-sleep"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        deadline = time.monotonic() + float(params.get("seconds", 1e9))
        while time.monotonic() < deadline:
            time.sleep(0.2)
        return _constant(0.0)


@builtin()
class MemHog(_Probe):
    """Allocates and touches memory at a steady rate (default 500 MB/s) until stopped."""

    name = "probe-memhog"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        chunk = int(params.get("chunk_mb", 10)) * 2**20
        pause = float(params.get("pause_s", 0.02))
        hoard = []
        while True:
            block = bytearray(chunk)
            block[::4096] = b"\x01" * len(range(0, chunk, 4096))  # touch every page: RSS grows
            hoard.append(block)
            time.sleep(pause)


@builtin()
class Crash(_Probe):
    """Dies by a signal (default SIGSEGV) in the middle of the fit."""

    name = "probe-crash"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        sys.stdout.flush()
        sys.stderr.write("probe-crash: raising signal\n")
        sys.stderr.flush()
        os.kill(os.getpid(), int(params.get("signal", signal.SIGSEGV)))
        time.sleep(5)
        raise RuntimeError("signal did not kill the process")


_ESCAPEE = r"""
import os, sys, time
if os.fork():            # first child exits at once: the grandchild is orphaned
    os._exit(0)
os.setsid()              # and leaves the job's session
path = sys.argv[1]
if path:
    with open(path + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.replace(path + ".tmp", path)
hold = bytearray(int(sys.argv[2]) * 2**20)
hold[::4096] = b"\x01" * len(range(0, len(hold), 4096))  # touch every page: it is resident
while True:
    time.sleep(1)
"""


@builtin()
class Escape(_Probe):
    """Starts a setsid, double-forked grandchild that sleeps forever, then returns.

    params: ``clear_env`` (start it with only PATH in its environment: no job token),
    ``hold_mb`` (memory the grandchild holds), ``wait_s`` (how long the fit goes on after)."""

    name = "probe-escape"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        path = os.environ.get("SRTUI_PROBE_PIDFILE", "")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} if params.get("clear_env") else None
        child = subprocess.Popen(
            [sys.executable, "-P", "-c", _ESCAPEE, path, str(int(params.get("hold_mb", 0)))],
            env=env,
            start_new_session=True,
        )
        child.wait()
        deadline = time.monotonic() + 30
        while path and not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(float(params.get("wait_s", 0)))
        return _constant(float(np.mean(y)))


@builtin()
class Forks(_Probe):
    """Touches ``ballast_mb`` (default 0), then forks ``n`` (default 50) children that sleep
    ``sleep_s`` (default 4) and exit: every child maps the ballast, nothing more is allocated."""

    name = "probe-forks"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        ballast = bytearray(int(params.get("ballast_mb", 0)) * 2**20)
        ballast[::4096] = b"\x01" * len(range(0, len(ballast), 4096))
        children = []
        for _ in range(int(params.get("n", 50))):
            pid = os.fork()
            if pid == 0:
                time.sleep(float(params.get("sleep_s", 4)))
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
        return _constant(float(np.mean(y)))


@builtin()
class BadModel(_Probe):
    """Returns a model string that would run a shell command if anyone evaluated it."""

    name = "probe-badmodel"
    honours_time_limit = True

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        fitted = _constant(float(np.mean(y)))
        fitted.expression = "__import__('os').system('touch PWNED')"
        return fitted


def _fork_loop(seconds: float, setsid_every: int, beat: str) -> None:
    """Fork a child and exit, again and again (a new pid each time, a new session every
    ``setsid_every`` forks), writing the live pid to ``beat`` every 256 forks; stops by itself
    after ``seconds`` (a safety cap: this is what a test proves srtui ends long before)."""
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if n % setsid_every == 0:
            try:
                os.setsid()
            except OSError:
                pass
        if beat and n % 256 == 1:
            try:
                fd = os.open(beat, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.write(fd, f"{os.getpid()} {n}".encode())
                os.close(fd)
            except OSError:
                pass
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            time.sleep(0.01)  # out of processes: try again
    os._exit(0)


@builtin()
class ForkLoop(_Probe):
    """Starts a fork-and-exit loop that outlives the fit (``seconds``, default 20, its own cap;
    ``setsid_every``, default 64), then returns at once, or with ``hold_s`` sleeps that long (the
    job's time limit then kills its worker). SRTUI_PROBE_PIDFILE gets the loop's heartbeat."""

    name = "probe-forkloop"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        if os.fork() == 0:
            try:
                _fork_loop(
                    float(params.get("seconds", 20)),
                    int(params.get("setsid_every", 64)),
                    os.environ.get("SRTUI_PROBE_PIDFILE", ""),
                )
            finally:
                os._exit(0)
        beat, deadline = os.environ.get("SRTUI_PROBE_PIDFILE", ""), time.monotonic() + 10
        while beat and not os.path.exists(beat) and time.monotonic() < deadline:
            time.sleep(0.01)  # the loop runs before the fit returns
        time.sleep(float(params.get("hold_s", 0)))
        return _constant(float(np.mean(y)))
