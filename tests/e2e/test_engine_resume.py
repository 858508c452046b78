"""Resume, driver crash recovery, concurrent status reads, and bad input through the real CLI."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import results_json, srtui, start_srtui

from srtui.engine.process.tree import processes_with_token


def db_rows(workspace: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(workspace / "srtui.db") as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_rerun_skips_done_jobs_and_new_params_make_new_jobs(workspace: Path, suite_file, launcher: str) -> None:
    suite = suite_file(methods=("probe-noop",), seeds=(1, 2))
    srtui("run", "--launcher", launcher, str(suite), "--workspace", str(workspace), check=True)
    first = {r["job_id"]: r for r in results_json(workspace)}
    assert len(first) == 2 and all(r["status"] == "ok" for r in first.values())
    # the launcher is not part of a job: the other one finds the same jobs done
    other = "exec" if launcher == "fork" else "fork"
    again = srtui("run", "--launcher", other, str(suite), "--workspace", str(workspace), check=True)
    assert "2 already done" in again.stderr
    assert {r["job_id"]: r["ended_at"] for r in results_json(workspace)} == {k: v["ended_at"] for k, v in first.items()}
    # a different limit is a different job, stored beside the old one (no overwrite)
    srtui("run", "--launcher", launcher, str(suite), "--time-limit", "99", "--workspace", str(workspace), check=True)
    assert len(results_json(workspace)) == 4


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_driver_killed_mid_run_then_resumed(workspace: Path, suite_file, launcher: str) -> None:
    suite = suite_file(
        name="crashy",
        tasks=("smoke-linear", "smoke-interaction"),
        methods=("probe-noop", "probe-sleep"),
        seeds=tuple(range(1, 11)),
        limits={"time_s": 20, "grace_s": 1},
        params={"probe-sleep": {"seconds": 0.6}},
    )
    driver = start_srtui("run", "--launcher", launcher, str(suite), "--jobs", "2", "--workspace", str(workspace))
    # wait until some jobs are done and some are running, then kill the driver outright
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if (workspace / "srtui.db").exists():
            try:
                done = db_rows(workspace, "SELECT count(*) FROM jobs WHERE status = 'ok'")[0][0]
            except sqlite3.OperationalError:
                continue
            if done >= 8:
                break
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    statuses = dict(db_rows(workspace, "SELECT status, count(*) FROM jobs GROUP BY status"))
    assert statuses.get("ok", 0) < 40, "the run finished before it could be killed"
    # the jobs die with their driver (parent-death signal); only this workspace's jobs are ours
    mine = db_rows(workspace, "SELECT value FROM meta WHERE key = 'workspace_id'")[0][0] + ":"
    deadline = time.monotonic() + 30
    while processes_with_token(prefix=mine) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_with_token(prefix=mine)
    # nothing the driver started outlives it: no job, no fork server (they carry its identity)
    deadline = time.monotonic() + 5
    while _started_by(driver.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _started_by(driver.pid)
    # until the next run, the jobs left "running" are reported with their driver gone
    status = json.loads(srtui("status", "--json", "--workspace", str(workspace), check=True).stdout)
    assert status["running"] and not any(r["driver_alive"] for r in status["running"])

    proc = srtui("run", "--launcher", launcher, str(suite), "--jobs", "2", "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    assert len(rows) == 40 and len({r["job_id"] for r in rows}) == 40
    assert all(r["status"] == "ok" for r in rows), proc.stderr
    # the jobs that were running when the driver died were recorded lost, then retried
    lost = db_rows(workspace, "SELECT job_id, attempt FROM attempts WHERE status = 'lost'")
    for job_id, attempt in lost:
        assert db_rows(workspace, f"SELECT attempt, status FROM jobs WHERE job_id = '{job_id}'") == [
            (attempt + 1, "ok")
        ]
    # each job's attempts are numbered 1..n, and exactly the last is its terminal record
    counts = db_rows(workspace, "SELECT job_id, count(*), max(attempt) FROM attempts GROUP BY job_id")
    assert all(n == top for _, n, top in counts)
    assert not processes_with_token(prefix=mine)
    # the killed driver's run is not left "running"
    assert db_rows(workspace, "SELECT count(*) FROM runs WHERE status = 'running'") == [(0,)]
    assert db_rows(workspace, "SELECT count(*) FROM runs WHERE status = 'lost'") == [(1,)]
    # the killed driver's attempts left their scratch folders: the resumed run removed them
    assert lost and not list((workspace / "cache" / "jobs").iterdir())


def _started_by(driver_pid: int) -> list[int]:
    """Live processes whose environment names the driver ``driver_pid`` as theirs."""
    import psutil

    found = []
    for proc in psutil.process_iter():
        try:
            if (
                proc.environ().get("SRTUI_DRIVER", "").startswith(f"{driver_pid}:")
                and proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_status_json_answers_during_a_run(workspace: Path, suite_file, launcher: str) -> None:
    suite = suite_file(methods=("probe-sleep",), seeds=(1, 2), params={"probe-sleep": {"seconds": 4}})
    driver = start_srtui("run", "--launcher", launcher, str(suite), "--jobs", "2", "--workspace", str(workspace))
    try:
        seen_running = False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not seen_running:
            time.sleep(0.3)
            if not (workspace / "srtui.db").exists():
                continue
            out = srtui("status", "--json", "--workspace", str(workspace), timeout=10)
            assert out.returncode == 0, out.stderr
            status = json.loads(out.stdout)
            seen_running = status["counts"].get("running", 0) >= 1 and len(status["running"]) >= 1
            assert all(r["driver_alive"] for r in status["running"])
        assert seen_running
    finally:
        driver.wait(timeout=60)
    final = json.loads(srtui("status", "--json", "--workspace", str(workspace), check=True).stdout)
    assert final["counts"] == {"ok": 2}


def _snapshot(workspace: Path) -> dict:
    return {p.name: p.read_bytes() for p in workspace.glob("srtui.db*")}


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no-such-suite"], "unknown suite"),
        (["run", "smoke", "--methods", "no-such-method"], "unknown method"),
        (["run", "smoke", "--tasks", "no-such-task"], "unknown task"),
        (["run", "smoke", "--time-limit", "-1"], "time_s must be a positive number"),
        (["run", "smoke", "--mem-limit", "0"], "mem_mb must be a positive number"),
        (["run", "smoke", "--jobs", "0"], "--jobs must be at least 1"),
        (["results", "--format", "xml"], "--format must be table, csv or json"),
    ],
)
def test_bad_input_is_one_line_and_stores_nothing(workspace: Path, suite_file, args, message) -> None:
    srtui("run", str(suite_file(methods=("probe-noop",))), "--workspace", str(workspace), check=True)
    before = _snapshot(workspace)
    proc = srtui(*args, "--workspace", str(workspace))
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert _snapshot(workspace) == before


def test_unwritable_workspace(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            target = Path("/proc/srtui-cannot-write-here")  # root ignores mode bits
        else:
            target = locked / "ws"
        proc = srtui("run", "smoke", "--methods", "probe-noop", "--workspace", str(target))
        assert proc.returncode != 0
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "not writable" in lines[0], proc.stderr
    finally:
        locked.chmod(0o700)


def test_status_of_missing_workspace_fails_cleanly(tmp_path: Path) -> None:
    proc = srtui("status", "--workspace", str(tmp_path / "nothing"))
    assert proc.returncode != 0 and "no srtui workspace" in proc.stderr
    assert not (tmp_path / "nothing").exists()
