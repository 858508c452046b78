"""The Dask backend through the real CLI on a LocalCluster (loopback only):
same records as the local backend, limits enforced on the worker, a killed worker's job retried,
Ctrl-C, and a running scheduler given by address."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from conftest import FALLBACK, results_json, srtui, start_srtui

from srtui.engine.process.tree import processes_with_token

pytest.importorskip("distributed", reason="the dask backend needs dask[distributed]")

DASK = ("--backend", "dask", "--cluster", "local")


def db_rows(workspace: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True)  # never creates it
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def left_behind(workspace: Path) -> list[psutil.Process]:
    """Live processes carrying a job token of this workspace (other tests' jobs are not ours)."""
    (token,) = db_rows(workspace, "SELECT value FROM meta WHERE key = 'workspace_id'")[0]
    return processes_with_token(prefix=token + ":")


def by_job(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["method"], r["task"], r["seed"]): r for r in rows}


@pytest.mark.slow
def test_smoke_suite_matches_the_local_backend(tmp_path: Path) -> None:
    # the smoke suite's deterministic methods; the SR methods stop on a time budget, so their
    # expressions depend on machine load, not on the backend
    local, dask = tmp_path / "local", tmp_path / "dask"
    args = ("smoke", "--methods", "linear,poly2", "--jobs", "2", "--time-limit", "120")
    srtui("run", *args, "--workspace", str(local), check=True)
    srtui("run", *args, *DASK, "--workspace", str(dask), check=True)
    a, b = by_job(results_json(local)), by_job(results_json(dask))
    assert a.keys() == b.keys() and len(a) == 4
    for key, row in a.items():
        other = b[key]
        assert row["job_id"] == other["job_id"] and row["status"] == other["status"] == "ok"
        assert row["model"] == other["model"], key  # deterministic methods: the same expression
        assert row["r2_test"] == pytest.approx(other["r2_test"], abs=1e-12)
        assert row["r2_train"] == pytest.approx(other["r2_train"], abs=1e-12)
        assert other["attempt"] == 1


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_limits_on_a_dask_worker(
    workspace: Path, suite_file, tmp_path: Path, launcher: str, job_writable: Path
) -> None:
    suite = suite_file(
        name="limits",
        methods=("probe-sleep", "probe-memhog", "probe-escape", "probe-noop"),
        limits={"time_s": 3, "grace_s": 1, "mem_mb": 300},
    )
    pidfile = job_writable / "escapee.pid"
    t0 = time.monotonic()
    proc = srtui(
        "run",
        str(suite),
        *DASK,
        "--jobs",
        "2",
        "--launcher",
        launcher,
        "--workspace",
        str(workspace),
        env={"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK},
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["method"]: r for r in results_json(workspace)}
    sleep, hog = rows["probe-sleep"], rows["probe-memhog"]
    assert sleep["status"] == "timeout" and sleep["signal"] == 9 and sleep["wall_s"] <= 3 + 1 + 6, sleep
    assert "wall time" in sleep["limit_detail"]
    assert hog["status"] == "oom" and hog["wall_s"] < 3, hog
    assert rows["probe-noop"]["status"] == rows["probe-escape"]["status"] == "ok"
    escapee = int(pidfile.read_text())  # setsid + double fork on the worker: swept all the same
    assert not psutil.pid_exists(escapee) or psutil.Process(escapee).status() == psutil.STATUS_ZOMBIE
    assert time.monotonic() - t0 < 120
    assert not left_behind(workspace)


@pytest.mark.slow
def test_killed_worker_job_is_lost_then_retried(workspace: Path, suite_file, launcher: str) -> None:
    suite = suite_file(
        name="kill",
        tasks=("smoke-linear", "smoke-interaction"),
        methods=("probe-sleep",),
        seeds=(1, 2, 3),
        limits={"time_s": 60, "grace_s": 1},
        params={"probe-sleep": {"seconds": 3}},
    )
    args = ("run", str(suite), *DASK, "--jobs", "2", "--launcher", launcher, "--workspace", str(workspace))
    driver = start_srtui(*args, stderr=subprocess.PIPE, text=True)
    # wait for a job whose worker has reported its pid: that job runs now, on a known worker
    victim_job = job_pid = None
    deadline = time.monotonic() + 90
    while victim_job is None and time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            found = db_rows(
                workspace, "SELECT job_id, worker_pid FROM jobs WHERE status = 'running' AND worker_pid IS NOT NULL"
            )
        except sqlite3.OperationalError:
            continue
        if found:
            victim_job, job_pid = found[0]
    assert victim_job is not None, "no job started"
    job = psutil.Process(job_pid)
    dask_worker = job.parent()
    if dask_worker is not None and "srtui.engine.process.fork_server" in " ".join(dask_worker.cmdline()):
        dask_worker = dask_worker.parent()  # a forked job's parent is its server, started by the worker
    assert dask_worker is not None and dask_worker.pid != driver.pid
    dask_worker.kill()
    job.wait(timeout=10)  # the job dies with its worker (parent-death signal), not at the end of the run
    _, err = driver.communicate(timeout=180)
    assert driver.returncode == 0, err

    rows = results_json(workspace)
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows), rows
    attempts = {r["job_id"]: r["attempt"] for r in rows}
    assert attempts[victim_job] == 2
    assert db_rows(
        workspace, f"SELECT attempt, status FROM attempts WHERE job_id = '{victim_job}' ORDER BY attempt"
    ) == [(1, "lost"), (2, "ok")]
    # every job: attempts 1..n, exactly one terminal record (the last)
    for job_id, n, top, terminal in db_rows(
        workspace, "SELECT job_id, count(*), max(attempt), sum(status = 'ok') FROM attempts GROUP BY job_id"
    ):
        assert n == top == attempts[job_id] and terminal == 1
    assert not left_behind(workspace)


@pytest.mark.slow
def test_ctrl_c_interrupts_running_jobs_and_keeps_workers(workspace: Path, suite_file) -> None:
    suite = suite_file(
        name="stop", methods=("probe-sleep",), seeds=(1, 2, 3, 4, 5), limits={"time_s": 60, "grace_s": 1}
    )
    args = ("run", str(suite), *DASK, "--jobs", "2", "--workspace", str(workspace))
    driver = start_srtui(*args, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            if len(db_rows(workspace, "SELECT 1 FROM jobs WHERE worker_pid IS NOT NULL")) == 2:
                break
        except sqlite3.OperationalError:
            continue
    os.killpg(driver.pid, signal.SIGINT)  # as a terminal does: the whole process group, workers too
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    statuses = dict(db_rows(workspace, "SELECT status, count(*) FROM jobs GROUP BY status"))
    assert statuses == {"interrupted": 2, "pending": 3}, statuses  # running ones stopped, the rest never claimed
    details = db_rows(workspace, "SELECT limit_detail, error FROM jobs WHERE status = 'interrupted'")
    assert all("Ctrl-C" in (d or "") + (e or "") for d, e in details), details
    assert not left_behind(workspace)
    again = srtui("run", str(suite), *DASK, "--dry-run", "--workspace", str(workspace), check=True)
    assert "5 jobs, 5 to run" in again.stdout  # interrupted attempts are resumed


@pytest.mark.slow
def test_running_scheduler_by_address(workspace: Path, suite_file) -> None:
    import dask
    from distributed import LocalCluster

    suite = suite_file(name="addr", methods=("probe-noop",), seeds=(1, 2))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        refused = srtui(
            "run",
            str(suite),
            "--backend",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--workspace",
            str(workspace),
        )
    assert refused.returncode != 0 and "ALLOWED_FAILURES=0" in refused.stderr
    assert not (workspace / "srtui.db").exists()  # refused before the store was touched
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
    ):
        srtui(
            "run",
            str(suite),
            "--backend",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--workspace",
            str(workspace),
            check=True,
        )
        assert len(cluster.scheduler.workers) == 2  # the driver leaves a shared cluster running
    rows = results_json(workspace)
    assert [r["status"] for r in rows] == ["ok", "ok"]


def test_worker_near_its_lifetime_retires_rather_than_start_a_job() -> None:
    """SLURM workers get a lifetime below the walltime; one too old for a job hands it back."""
    from distributed import Client, LocalCluster

    from srtui.engine.backends.dask_worker import run_on_worker
    from srtui.engine.process.job_io import JobPayload
    from srtui.engine.spec import JobSpec, Limits

    spec = JobSpec("s", "smoke-linear", "probe-noop", 1, Limits(time_s=7200), "fp", "v")
    payload = JobPayload(spec=spec, attempt=1, workspace_token="retire-test")
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, lifetime="1h"
        ) as cluster,
        Client(cluster) as client,
    ):
        future = client.submit(run_on_worker, payload, "token", key="srtui-retire-test", pure=False)
        deadline = time.monotonic() + 30
        while cluster.scheduler.workers and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not cluster.scheduler.workers, "the worker kept running although a 2 h job cannot fit in its 1 h"
        assert future.status == "pending"  # rescheduled, waiting for a younger worker; never run
