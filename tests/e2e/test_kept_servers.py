"""`methods check` forks its job from a fork server kept between commands (issue 56,
srtui.engine.process.kept_servers): the second check finds the first one's server warm; a driver
killed mid-job takes its job with it, not the server; an idle server leaves and removes its
socket; a socket served by another account is refused. Each test has a temp directory of its
own, so its private folder, and the servers in it, are its own (process checks stay scoped)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import REPO

from srtui.engine.process import kept_servers


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A temp directory of this test's, short enough for the sockets of its private folder."""
    path = Path(tempfile.mkdtemp(prefix="kept-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _env(tmp: Path, idle_s: float = 60.0) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "XDG_RUNTIME_DIR")}
    env.update({"TMPDIR": str(tmp), kept_servers.IDLE_ENV: str(idle_s), "PYTHONPATH": str(REPO)})
    return env


def _run_check(tmp: Path, name: str = "linear", idle_s: float = 60.0, **popen: Any) -> subprocess.CompletedProcess[str]:
    """`srtui methods check NAME --json` in this test's private folder (``popen``: preexec_fn)."""
    return subprocess.run(
        [sys.executable, "-m", "srtui", "methods", "check", name, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp,
        env=_env(tmp, idle_s),
        **popen,
    )


def _check(tmp: Path, name: str = "linear", idle_s: float = 60.0) -> dict[str, object]:
    proc = _run_check(tmp, name, idle_s)
    assert proc.returncode == 0, proc.stderr
    assert "no kept fork server" not in proc.stderr, proc.stderr
    found: dict[str, object] = json.loads(proc.stdout)
    return found


def _servers(tmp: Path) -> dict[str, int]:
    """Socket name -> the pid listening there (its credentials), in this test's private folder."""
    found = {}
    for path in sorted((tmp / f"srtui-{os.geteuid()}").glob("fs-*.sock")):
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
            sock.connect(str(path))
            found[path.name] = kept_servers.peer(sock)[0]
    return found


def _stop(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_second_check_forks_from_the_server_the_first_one_left(tmp_path: Path) -> None:
    first = _check(tmp_path)
    servers = _servers(tmp_path)
    try:
        assert len(servers) == 1
        [pid] = servers.values()
        server = psutil.Process(pid)
        assert "--kept" in server.cmdline() and server.uids().real == os.getuid()
        second = _check(tmp_path)
        assert _servers(tmp_path) == servers  # the same server, not a new one
        assert first["status"] == second["status"] == "ok"
        assert first["r2_test"] == second["r2_test"]  # the same fit, seeded alike
    finally:
        _stop(list(servers.values()))


def _sleeping_check(tmp: Path) -> subprocess.Popen[bytes]:
    """A `methods check` whose job sleeps (for two minutes: until the test kills something)."""
    return subprocess.Popen(
        [sys.executable, "-m", "srtui", "methods", "check", "probe-sleep", "--time-limit", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp,
        env=_env(tmp),
    )


def test_a_driver_killed_mid_job_takes_its_job_with_it_and_leaves_the_server(tmp_path: Path) -> None:
    driver = _sleeping_check(tmp_path)
    servers: dict[str, int] = {}
    try:
        deadline, jobs = time.monotonic() + 120, list[psutil.Process]()
        while time.monotonic() < deadline and not jobs:  # the job: a process of the server's with a token
            time.sleep(0.2)
            if (tmp_path / f"srtui-{os.geteuid()}").is_dir():
                servers = _servers(tmp_path)
                jobs = [p for pid in servers.values() for p in _tokened(pid)]
        assert jobs, "the sleeping job never started"
        driver.kill()
        driver.wait()
        _gone, alive = psutil.wait_procs(jobs, timeout=30)
        assert not alive, f"the job outlived its driver: {alive}"
        assert all(psutil.pid_exists(pid) for pid in servers.values())  # the server stays
    finally:
        driver.kill()
        driver.wait()
        _stop(list(servers.values()))


def _tokened(server_pid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process(server_pid).children(recursive=True):
        try:
            token = proc.environ().get("SRTUI_JOB_TOKEN", "")
        except psutil.Error:
            continue
        if token and not token.startswith("forkserver-"):
            found.append(proc)
    return found


def test_an_idle_server_leaves_and_takes_its_socket_with_it(tmp_path: Path) -> None:
    _check(tmp_path, idle_s=2.0)
    folder = tmp_path / f"srtui-{os.geteuid()}"
    [sock] = folder.glob("fs-*.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
        probe.connect(str(sock))
        server = psutil.Process(kept_servers.peer(probe)[0])
    try:
        server.wait(timeout=60)  # idle 2 s after our probe's connection closed
    except psutil.TimeoutExpired:
        server.kill()
        pytest.fail("the kept server did not leave when idle")
    assert not list(folder.glob("fs-*.sock"))
    _check(tmp_path, idle_s=2.0)  # and the next check starts a new one
    _stop(list(_servers(tmp_path).values()))


def test_a_socket_another_account_listens_on_is_refused_and_the_check_still_runs(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to listen as another account")
    _check(tmp_path)  # the key's socket name, from a real check
    folder = tmp_path / f"srtui-{os.geteuid()}"
    [path] = folder.glob("fs-*.sock")
    _stop(list(_servers(tmp_path).values()))
    path.unlink()
    # nobody listens on a socket in a folder it can reach; root moves it into ours
    spot = Path(tempfile.mkdtemp(prefix="theirs-", dir="/tmp"))
    os.chmod(spot, 0o777)
    planted = spot / "planted.sock"
    system_python = shutil.which("python3", path="/usr/bin:/bin")  # one another account may run
    if system_python is None:
        pytest.skip("no system python3 for another account")
    other = subprocess.Popen(
        [system_python, "-c", LISTEN, str(planted)], user=65534, group=65534, stdout=subprocess.PIPE, cwd="/"
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == b"listening"
        os.rename(planted, path)
        proc = _run_check(tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "ok"
        assert "served by another user's process: refused" in proc.stderr
    finally:
        other.kill()
        other.wait()
        shutil.rmtree(spot, ignore_errors=True)


LISTEN = """
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(4)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.send(b'{"pid": 1}')
"""


SPY = """
import os, resource
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class Spy(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        # what the job inherited, said in its error (the check prints it)
        raise RuntimeError(f"SPY nice={os.nice(0)} nofile={resource.getrlimit(resource.RLIMIT_NOFILE)[0]}")

    def predict(self, X):
        return np.zeros(len(X))


est = Spy()


def model(est, X=None):
    return "0"
"""


def _spy(tmp: Path, preexec_fn: Callable[[], object] | None = None) -> str:
    """The error of a check of the spy folder (``preexec_fn``: how its driver is started)."""
    folder = tmp / "methods" / "spy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "regressor.py").write_text(textwrap.dedent(SPY))
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", "methods", "check", f"srbench:{folder}", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp,
        env=_env(tmp),
        preexec_fn=preexec_fn,
    )
    error = str(json.loads(proc.stdout)["error"])
    assert "SPY" in error, proc.stderr
    return error


def test_a_server_started_under_nice_and_a_lower_limit_is_not_the_next_plain_checks(tmp_path: Path) -> None:
    """A kept server outlives the driver that started it, with its nice and resource limits (they
    are inherited at its start, then by each job it forks): a later plain check's job ran with them."""
    nice, nofile = os.nice(0), resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    lower = min(nofile, 300)

    def niced() -> None:
        os.nice(3)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lower, lower))

    try:
        first = _spy(tmp_path, niced)
        assert f"nice={min(19, nice + 3)} nofile={lower}" in first
        second = _spy(tmp_path)
        assert f"nice={nice} nofile={nofile}" in second, "the plain check's job ran with the first driver's"
        assert len(_servers(tmp_path)) == 2
    finally:
        _stop(list(_servers(tmp_path).values()))


def test_a_job_from_a_server_another_check_started_is_its_own_drivers_for_the_recovery_sweep(
    tmp_path: Path,
) -> None:
    """A forked job's /proc/PID/environ is its server's start-up block (the token written in
    place): a kept server's named the check that started it, long gone, so a second check in the
    same kept workspace (`-w`) took the running job for a dead driver's orphan and killed it."""
    from srtui.engine.process import tree

    _check(tmp_path, "probe-noop")  # the probes' kept server, started by a driver that has left
    ws = tmp_path / "ws"
    driver = subprocess.Popen(
        [sys.executable, "-m", "srtui", "methods", "check", "probe-sleep", "--time-limit", "120", "-w", str(ws)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    try:
        deadline, jobs = time.monotonic() + 120, list[psutil.Process]()
        while time.monotonic() < deadline and not jobs:
            time.sleep(0.2)
            jobs = [p for pid in _servers(tmp_path).values() for p in _tokened(pid)]
        assert len(jobs) == 1, "the sleeping job never started"
        assert len(_servers(tmp_path)) == 1  # it forked from the server the first check started
        assert jobs[0].environ()[tree.DRIVER_ENV] == tree.driver_identity(driver.pid)
        # the same check in the same workspace: its run starts with the recovery of dead drivers' jobs
        subprocess.run(
            [sys.executable, "-m", "srtui", "methods", "check", "probe-sleep", "--time-limit", "5", "-w", str(ws)],
            capture_output=True,
            timeout=600,
            cwd=tmp_path,
            env=_env(tmp_path),
        )
        assert jobs[0].is_running(), "the second check's recovery killed the first one's running job"
    finally:
        driver.kill()
        driver.wait()
        _stop(list(_servers(tmp_path).values()))


def test_a_server_whose_socket_was_removed_leaves_the_newer_servers_socket_when_it_exits(tmp_path: Path) -> None:
    """Someone removes a live server's socket file: the next check starts a new server at the same
    path; when the old one idled out it removed that path, the new server's socket, and every
    check after started yet another server."""
    _check(tmp_path, idle_s=3.0)
    [(name, old_pid)] = _servers(tmp_path).items()
    path = tmp_path / f"srtui-{os.geteuid()}" / name
    held = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    held.connect(str(path))  # the old server stays up (a connection open) while the new one starts
    path.unlink()
    try:
        _check(tmp_path, idle_s=60.0)
        [new_pid] = _servers(tmp_path).values()
        assert new_pid != old_pid
        held.close()
        psutil.Process(old_pid).wait(timeout=120)  # idle 3 s: it leaves
        assert _servers(tmp_path) == {name: new_pid}, "the old server removed the new one's socket"
    finally:
        held.close()
        _stop([old_pid, *_servers(tmp_path).values()])


def test_checks_leave_nothing_new_in_the_private_folder(tmp_path: Path) -> None:
    """The kept server's socket, lock and log stay three files, and no check leaves a folder of
    its own behind (each made an empty ``pids/HASH`` for its temp workspace, never removed)."""

    def listing() -> set[str]:
        folder = tmp_path / f"srtui-{os.geteuid()}"
        return {str(p.relative_to(folder)) for p in folder.rglob("*") if not p.name.startswith("pymp-")}

    _check(tmp_path)
    try:
        before = listing()
        for _ in range(3):
            _check(tmp_path)
        assert listing() == before
    finally:
        _stop(list(_servers(tmp_path).values()))


def _check_within(tmp: Path, seconds: float) -> subprocess.CompletedProcess[str]:
    """A check of linear that must end in ``seconds`` (far below the 300 s a server may take to
    start), ok."""
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", "methods", "check", "linear", "--json"],
        capture_output=True,
        text=True,
        timeout=seconds,
        cwd=tmp,
        env=_env(tmp),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "ok"
    return proc


def test_a_stopped_kept_server_does_not_hold_the_next_check(tmp_path: Path) -> None:
    """A kept server that does not greet (stopped, hung) held each check for the 300 s a start may
    take, under the lock every other check waits for: it is left to itself, a new one starts."""
    _check(tmp_path)
    [(name, old_pid)] = _servers(tmp_path).items()
    os.kill(old_pid, signal.SIGSTOP)
    try:
        proc = _check_within(tmp_path, 200)
        assert "no kept fork server" not in proc.stderr  # a new kept one, at the same path
        [new_pid] = _servers(tmp_path).values()
        assert new_pid != old_pid
        _check_within(tmp_path, 200)
        assert _servers(tmp_path) == {name: new_pid}
    finally:
        os.kill(old_pid, signal.SIGCONT)
        _stop([old_pid, *_servers(tmp_path).values()])


def test_a_lock_held_by_a_stuck_command_does_not_hold_the_next_check(tmp_path: Path) -> None:
    """The lock a kept server is started and connected under, held by a stopped command (Ctrl-Z
    during its check): the next check waited for it without end; it starts a server of its own."""
    import fcntl

    _check(tmp_path)
    [name] = _servers(tmp_path)
    _stop(list(_servers(tmp_path).values()))
    lock = tmp_path / f"srtui-{os.geteuid()}" / name.replace(".sock", ".lock")
    with open(lock, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = _check_within(tmp_path, 200)
    assert "no kept fork server" in proc.stderr


def test_a_driver_gone_before_its_reply_leaves_the_server_and_the_other_checks_job(tmp_path: Path) -> None:
    """A driver that dies between its request and the server's reply (killed at that instant):
    the reply's broken pipe ended the kept server, and with it every other check's running job;
    so did a request without a status pipe (its job's exit closed descriptor -1)."""
    driver = _sleeping_check(tmp_path)
    servers: dict[str, int] = {}
    try:
        deadline, jobs = time.monotonic() + 120, list[psutil.Process]()
        while time.monotonic() < deadline and not jobs:
            time.sleep(0.2)
            if (tmp_path / f"srtui-{os.geteuid()}").is_dir():
                servers = _servers(tmp_path)
                jobs = [p for pid in servers.values() for p in _tokened(pid)]
        assert jobs, "the sleeping job never started"
        [(name, pid)] = servers.items()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as gone:  # asks, and leaves
            gone.connect(str(tmp_path / f"srtui-{os.geteuid()}" / name))
            assert json.loads(gone.recv(1 << 16))["pid"] == pid
            r, w = os.pipe()
            socket.send_fds(gone, [b"[]"], [w, w, w])
            os.close(r)
            os.close(w)
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as odd:  # no status pipe: refused
            odd.connect(str(tmp_path / f"srtui-{os.geteuid()}" / name))
            odd.recv(1 << 16)
            r, w = os.pipe()
            socket.send_fds(odd, [b"{}"], [w, w])
            assert "status pipes" in json.loads(odd.recv(1 << 16))["error"]
            os.close(r)
            os.close(w)
        time.sleep(3)  # the server polls once a second
        assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        assert jobs[0].is_running(), "the other check's job died with the server"
        assert _servers(tmp_path) == {name: pid}
    finally:
        driver.kill()
        driver.wait()
        _stop(list(servers.values()))


def test_kept_servers_beyond_the_most_leave_once_quiet(tmp_path: Path) -> None:
    """Each key is a server of its own, ~175 MB kept ten minutes: an edit of srtui, an install or
    a check under another nice each started one more, never fewer. Past ``MAX_KEPT`` the oldest
    socket goes, and its server leaves within a poll (it is idle)."""
    started: list[int] = []
    try:
        for n in range(kept_servers.MAX_KEPT + 1):  # each nice is another key (what jobs inherit)

            def niced(n: int = n) -> None:
                os.nice(n)

            proc = _run_check(tmp_path, preexec_fn=niced)
            assert proc.returncode == 0, proc.stderr
            started += [p for p in _servers(tmp_path).values() if p not in started]
        assert len(started) == kept_servers.MAX_KEPT + 1
        with contextlib.suppress(psutil.NoSuchProcess):  # gone already, as the fifth check ran
            psutil.Process(started[0]).wait(timeout=60)  # evicted: it leaves though its idle time (60 s) is not up
        live = _servers(tmp_path)
        assert sorted(live.values()) == sorted(started[1:])
        assert len(list((tmp_path / f"srtui-{os.geteuid()}").glob("fs-*.log"))) == len(live)
    finally:
        _stop(started)
