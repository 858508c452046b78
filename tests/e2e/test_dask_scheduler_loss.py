"""Issue 43, break 9: the Dask scheduler killed mid-run ends the run in one line with exit code
3; every job that was running is recorded ``lost`` (none left ``running``) and the next run
retries it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import clusters
import pytest
from conftest import srtui

pytest.importorskip("distributed", reason="the dask backend needs dask[distributed]")
pytestmark = [pytest.mark.slow, pytest.mark.cluster]


def _rows(workspace: Path, sql: str) -> list[tuple]:
    try:
        conn = sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        return []
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def _start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_a_lost_scheduler_ends_the_run_with_exit_3_and_jobs_lost(tmp_path: Path, suite_file, workspace: Path) -> None:
    port = clusters.free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    env.pop("SRTUI_WORKSPACE", None)
    scheduler = _start(
        ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"], env
    )
    worker = _start(
        [
            "distributed.cli.dask_worker",
            address,
            "--nworkers",
            "2",
            "--nthreads",
            "1",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
        ],
        env,
    )
    driver = None
    try:
        suite = suite_file(
            name="gone", methods=("probe-sleep",), seeds=(1, 2, 3), params={"probe-sleep": {"seconds": 30}}
        )
        driver = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "srtui",
                "run",
                str(suite),
                "--dask-scheduler",
                address,
                "--workspace",
                str(workspace),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while (
            time.monotonic() < deadline and len(_rows(workspace, "SELECT 1 FROM jobs WHERE worker_pid IS NOT NULL")) < 1
        ):
            time.sleep(0.3)
        running = _rows(workspace, "SELECT job_id FROM jobs WHERE status = 'running'")
        assert running, "no job started"
        os.killpg(scheduler.pid, signal.SIGKILL)  # the scheduler, gone without a word
        _, err = driver.communicate(timeout=180)
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[")]
        assert driver.returncode == 3, err
        assert "Traceback" not in err and len(lines) == 1, err
        assert "scheduler" in lines[0], lines
        statuses = dict(_rows(workspace, "SELECT status, count(*) FROM jobs GROUP BY status"))
        assert "running" not in statuses and statuses.get("lost", 0) >= len(running), statuses
        again = srtui("run", str(suite), "--dry-run", "--workspace", str(workspace), check=True)
        assert "3 jobs, 3 to run" in again.stdout, again.stdout  # the lost ones are retried
    finally:
        for proc in (driver, worker, scheduler):
            if proc is not None and proc.poll() is None:
                with_group = proc is not driver
                if with_group:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
                proc.wait(timeout=30)
