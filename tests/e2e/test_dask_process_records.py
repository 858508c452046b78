"""Issue 27 (attacks after the merge): the records of a job's processes (pid, start time,
session) were written by the local backend only. A job on a Dask worker now records them too, in
its host's folder for the workspace, so an env-cleared, double-forked escapee of a killed driver
(and its local cluster) is killed by the next `srtui run`."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest
from conftest import FALLBACK, srtui, start_srtui

pytest.importorskip("distributed", reason="the dask backend needs dask[distributed]")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_escapee_of_a_dask_job_of_a_killed_driver_is_killed_by_the_next_run(
    workspace: Path, suite_file, tmp_path: Path, job_writable: Path
) -> None:
    pidfile = job_writable / "escapee.pid"
    suite = suite_file(
        methods=("probe-escape",),
        limits={"time_s": 120},
        params={"probe-escape": {"clear_env": True, "wait_s": 100}},
    )
    env = {"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK}
    args = ["run", str(suite), "--backend", "dask", "--cluster", "local", "--workspace", str(workspace)]
    driver = start_srtui(*args, env=env)
    pid = 0
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pidfile.exists(), "the escapee never started"
        time.sleep(0.3)
        pid = int(pidfile.read_text())
        assert "SRTUI_JOB_TOKEN" not in psutil.Process(pid).environ()
        time.sleep(2.0)  # the worker polls the tree every 0.25 s: the escapee is written down
        tree = psutil.Process(driver.pid).children(recursive=True)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        for member in tree:  # the cluster dies with its driver (its job too), the escapee does not
            if member.pid != pid:
                with_suppress_kill(member)
        time.sleep(1.0)
        assert _alive(pid), "the escapee died with the driver: nothing to test"
        proc = srtui(
            "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(workspace)
        )
        assert proc.returncode == 0, proc.stderr
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the escapee of the dead Dask job survived the next run"
    finally:
        if driver.poll() is None:
            driver.kill()
        if pid and _alive(pid):
            psutil.Process(pid).kill()


def with_suppress_kill(proc: psutil.Process) -> None:
    try:
        proc.kill()
    except psutil.Error:
        pass
