"""Issue 27: an escapee of a dead driver is found without the token. A method forks, setsid()s,
forks again and execs with an empty environment; the driver is killed with SIGKILL (its jobs die
with it, the escapee does not). The next `srtui run` in the workspace kills the escapee, found
through the record of the job's processes (pid, start time, session), under both launchers."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest
from conftest import FALLBACK, srtui, start_srtui


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_env_cleared_escapee_of_a_killed_driver_is_killed_by_the_next_run(
    workspace: Path, suite_file, tmp_path: Path, contained_launcher: str, job_writable: Path
) -> None:
    pidfile = job_writable / "escapee.pid"
    suite = suite_file(
        methods=("probe-escape",),
        limits={"time_s": 120},
        params={"probe-escape": {"clear_env": True, "wait_s": 100}},
    )
    env = {"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK}
    driver = start_srtui("run", "--launcher", contained_launcher, str(suite), "--workspace", str(workspace), env=env)
    pid = 0
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pidfile.exists(), "the escapee never started"
        time.sleep(0.3)
        pid = int(pidfile.read_text())
        assert "SRTUI_JOB_TOKEN" not in psutil.Process(pid).environ()
        time.sleep(2.0)  # the driver polls the tree every 0.25 s: the escapee is written down
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        time.sleep(1.0)
        assert _alive(pid), "the escapee died with the driver: nothing to test"
        proc = srtui(
            "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(workspace)
        )
        assert proc.returncode == 0, proc.stderr
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the escapee of the dead driver survived the next run"
        assert not list((workspace / "cache" / "pids").iterdir())
    finally:
        if driver.poll() is None:
            driver.kill()
        if pid and _alive(pid):
            psutil.Process(pid).kill()
