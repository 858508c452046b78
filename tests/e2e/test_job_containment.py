"""Containment: every process a job creates stays in the job, whatever it does to its environment,
session or parents, and the job's memory is the proportional set size of its whole tree."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest
from conftest import FALLBACK, results_json, srtui


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_environment_cleared_double_forked_escapee_is_killed_and_counted(
    workspace: Path, suite_file, tmp_path: Path, contained_launcher: str, job_writable: Path
) -> None:
    pidfile = job_writable / "escapee.pid"
    suite = suite_file(
        methods=("probe-escape",),
        limits={"time_s": 60, "mem_mb": 300},
        params={"probe-escape": {"clear_env": True, "hold_mb": 825, "wait_s": 5}},
    )
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        str(suite),
        "--workspace",
        str(workspace),
        env={"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK},
    )
    assert proc.returncode == 0, proc.stderr
    [row] = results_json(workspace)
    pid = int(pidfile.read_text())
    try:
        assert row["status"] == "oom", row
        assert row["peak_rss_mb"] > 300, row  # the escapee's memory counted: stopped on its way to 825 MB
        assert "limit 300 MB" in row["limit_detail"]
        assert wait_gone(pid), f"escapee {pid} survived the job"
    finally:
        if alive(pid):
            psutil.Process(pid).kill()


def test_escapee_without_token_never_outlives_an_ok_job(
    workspace: Path, suite_file, tmp_path: Path, contained_launcher: str, job_writable: Path
) -> None:
    pidfile = job_writable / "escapee.pid"
    suite = suite_file(methods=("probe-escape",), params={"probe-escape": {"clear_env": True}})
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        str(suite),
        "--workspace",
        str(workspace),
        env={"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK},
    )
    assert proc.returncode == 0, proc.stderr
    pid = int(pidfile.read_text())
    try:
        assert wait_gone(pid), f"escapee {pid} survived the job"
        [row] = results_json(workspace)
        assert row["status"] == "ok", row
    finally:
        if alive(pid):
            psutil.Process(pid).kill()


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_fifty_forked_sleeping_children_are_not_oom(workspace: Path, suite_file, contained_launcher: str) -> None:
    # every child maps the worker's 100 MB of touched ballast: summed RSS is over 5 GB, the
    # proportional set size of the tree a little more than one worker's
    suite = suite_file(
        methods=("probe-forks",),
        limits={"time_s": 60, "mem_mb": 1000},
        params={"probe-forks": {"n": 50, "sleep_s": 4, "ballast_mb": 100}},
    )
    proc = srtui("run", "--launcher", contained_launcher, str(suite), "--workspace", str(workspace))
    assert proc.returncode == 0, proc.stderr
    [row] = results_json(workspace)
    assert row["status"] == "ok", row
    assert row["peak_rss_mb"] < 1000, row
