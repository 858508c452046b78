"""The Dask backend on real clusters brought up on 127.0.0.1 (tests/clusters.py): an own sshd
with a test key, a hand-started `dask scheduler` + `dask worker`, and a single-node SLURM.

Through the real CLI: a run, limits on the workers, distinct cores, a killed worker, Ctrl-C, an
impossible job, a failing worker command, a hung start, a busy port and the SLURM lifetime
rollover. Each failure path must end within its deadline with one line. Skipped, with the
reason, where a cluster cannot be brought up here.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import clusters
import psutil
import pytest
from conftest import results_json, srtui
from test_dask_backend import db_rows, left_behind

pytest.importorskip("distributed", reason="the dask backend needs dask[distributed]")
pytestmark = [pytest.mark.slow, pytest.mark.cluster]  # a step of its own in .ci/run

PYTHON = sys.executable
SSH_CONFIG = """[ssh]
hosts = ["127.0.0.1", "127.0.0.1"]
workers_per_host = 2
remote_python = "{python}"
host = "127.0.0.1"
scheduler_port = {port}
start_timeout = {timeout}
[ssh.connect_options]
{connect}
[ssh.worker_options]
host = "127.0.0.1"
"""
SLURM_CONFIG = """[slurm]
cores = {cores}
memory = "{memory}"
walltime = "{walltime}"
jobs = 1
python = "{python}"
host = "127.0.0.1"
worker_host = "127.0.0.1"
start_timeout = 60
worker_timeout = 90
{extra}
"""
LIMITS = ("--time-limit", "20", "--grace", "1", "--mem-limit", "500")


@pytest.fixture(scope="session")
def sshd():
    try:
        server = clusters.start_sshd()
    except clusters.Unavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def slurm():
    try:
        server = clusters.start_slurm()
    except clusters.Unavailable as exc:
        pytest.skip(str(exc))
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(server.conf)  # the drivers (subprocesses) inherit it
    yield server
    if old is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = old
    server.stop()


def ssh_config(tmp_path: Path, sshd, python: str = PYTHON, timeout: int = 60, port: int | None = None) -> Path:
    connect = "\n".join(f"{k} = {json.dumps(v)}" for k, v in sshd.connect_options().items())
    path = tmp_path / "cluster-ssh.toml"
    path.write_text(
        SSH_CONFIG.format(python=python, port=port or clusters.free_port(), timeout=timeout, connect=connect)
    )
    return path


def slurm_config(
    tmp_path: Path, walltime: str = "00:10:00", python: str = PYTHON, extra: str = "", cores: int = 2
) -> Path:
    path = tmp_path / "cluster-slurm.toml"
    path.write_text(
        SLURM_CONFIG.format(
            walltime=walltime, python=python, extra=extra, cores=cores, memory="2GiB" if cores == 2 else "4000MiB"
        )
    )
    return path


def start_driver(suite: Path, workspace: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    return subprocess.Popen(
        [PYTHON, "-m", "srtui", "run", str(suite), *args, "--workspace", str(workspace)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_running(workspace: Path, n: int, driver: subprocess.Popen, timeout: float = 120) -> list[tuple[str, int]]:
    """(job_id, pid) of n jobs whose worker reported its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if driver.poll() is not None:
            raise AssertionError(f"the driver ended ({driver.returncode}): {driver.communicate()[1]}")
        try:
            rows = db_rows(
                workspace, "SELECT job_id, worker_pid FROM jobs WHERE status = 'running' AND worker_pid IS NOT NULL"
            )
        except sqlite3.OperationalError:
            continue
        if len(rows) >= n:
            return rows
    raise AssertionError(f"{n} jobs did not start within {timeout} s")


def one_line_error(proc, started: float, within: float, *fragments: str) -> None:
    elapsed = time.monotonic() - started
    # progress lines ([n/N] ...) may come first; then the error, in one line
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("[")]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("srtui: error: "), proc.stderr
    assert elapsed < within, f"took {elapsed:.0f} s"
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def distinct_cores(pids: list[int]) -> set[int]:
    cores = [tuple(psutil.Process(pid).cpu_affinity()) for pid in pids]
    assert all(len(c) == 1 for c in cores), cores
    return {c[0] for c in cores}


# --- SSH ----------------------------------------------------------------------------------------


def test_ssh_runs_jobs_on_distinct_cores(sshd, tmp_path: Path, suite_file, workspace: Path) -> None:
    # sleepers only: a probe-noop job could be caught running and be gone before its core is read
    suite = suite_file(name="ssh", methods=("probe-sleep",), seeds=(1, 2, 3, 4), params={"probe-sleep": {"seconds": 4}})
    driver = start_driver(suite, workspace, "--cluster-config", str(ssh_config(tmp_path, sshd)), *LIMITS)
    running = wait_running(workspace, 2, driver)
    if len(os.sched_getaffinity(0)) >= 2:
        assert len(distinct_cores([pid for _, pid in running])) == 2
    _, err = driver.communicate(timeout=180)
    assert driver.returncode == 0, err
    assert "distributed" not in err and "INFO" not in err  # Dask's chatter is in the log, not here
    assert [r["status"] for r in results_json(workspace)] == ["ok"] * 4
    assert "Scheduler at" in (workspace / "logs" / "dask.log").read_text()
    assert not left_behind(workspace)


def test_ssh_hung_start_ends_by_deadline_and_by_ctrl_c(sshd, tmp_path: Path, suite_file, workspace: Path) -> None:
    hang = tmp_path / "hang.sh"
    # a duration no other process on the host sleeps: the sweep check below sees only this test's
    unique = f"600.{uuid.uuid4().int % 10**9:09d}"
    hang.write_text(f"#!/bin/sh\nexec sleep {unique}\n")
    hang.chmod(0o755)
    suite = suite_file(name="hang")
    t0 = time.monotonic()
    proc = srtui(
        "run",
        str(suite),
        "--cluster-config",
        str(ssh_config(tmp_path, sshd, python=str(hang), timeout=5)),
        "--workspace",
        str(workspace),
    )
    one_line_error(proc, t0, 60, "did not start within 5 s", "no answer from 127.0.0.1")
    driver = start_driver(suite, workspace, "--cluster-config", str(ssh_config(tmp_path, sshd, python=str(hang))))
    time.sleep(4)
    t0 = time.monotonic()
    driver.send_signal(signal.SIGTERM)  # as Ctrl-C (the SLURM test sends SIGINT to the group)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130 and "interrupted while starting" in err, err
    assert time.monotonic() - t0 < 30
    time.sleep(1)
    hung = [
        p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and str(hang) in " ".join(p.info["cmdline"])
    ]
    assert not hung, hung  # swept on the remote host (here)
    assert not [p for p in psutil.process_iter(["cmdline"]) if unique in (p.info["cmdline"] or [])]


def test_ssh_bad_host_and_busy_port_are_one_line(sshd, tmp_path: Path, suite_file, workspace: Path) -> None:
    import socket

    suite = suite_file(name="bad")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        t0 = time.monotonic()
        proc = srtui(
            "run",
            str(suite),
            "--cluster-config",
            str(ssh_config(tmp_path, sshd, port=port)),
            "--workspace",
            str(workspace),
        )
    one_line_error(proc, t0, 30, f"port {port} on 127.0.0.1 is in use")
    config = ssh_config(tmp_path, sshd)
    config.write_text(config.read_text().replace(f"port = {sshd.port}", f"port = {clusters.free_port()}"))
    t0 = time.monotonic()
    proc = srtui("run", str(suite), "--cluster-config", str(config), "--workspace", str(workspace))
    one_line_error(proc, t0, 60, "cannot use the dask ssh cluster", "ConnectionRefusedError", "Connect call failed")
    assert not (workspace / "srtui.db").exists()  # refused before the store was touched


# --- a scheduler started by hand ----------------------------------------------------------------


def test_scheduler_mode_queues_then_runs_on_distinct_cores(tmp_path: Path, suite_file, workspace: Path) -> None:
    port = clusters.free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
        "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",
    }
    dask = [PYTHON, "-m", "distributed.cli"]
    scheduler = subprocess.Popen(
        [
            *dask[:2],
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = None
    try:
        suite = suite_file(name="sched", methods=("probe-sleep",), seeds=(1, 2), params={"probe-sleep": {"seconds": 4}})
        driver = start_driver(suite, workspace, "--dask-scheduler", address, *LIMITS)
        deadline, status = time.monotonic() + 60, ""
        while "waiting for workers 0/?" not in status and time.monotonic() < deadline:
            time.sleep(0.5)
            status = srtui("status", "--workspace", str(workspace)).stdout
        assert "queued: probe-sleep" in status and "waiting for workers 0/?" in status, status
        worker = subprocess.Popen(
            [
                *dask[:2],
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
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        running = wait_running(workspace, 2, driver)
        if len(os.sched_getaffinity(0)) >= 2:
            assert len(distinct_cores([pid for _, pid in running])) == 2
        _, err = driver.communicate(timeout=120)
        assert driver.returncode == 0, err
        assert [r["status"] for r in results_json(workspace)] == ["ok", "ok"]
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)


# --- SLURM --------------------------------------------------------------------------------------


def test_slurm_run_with_limits_on_the_workers(slurm, tmp_path: Path, suite_file, workspace: Path) -> None:
    suite = suite_file(
        name="limits",
        methods=("probe-sleep", "probe-memhog", "probe-noop"),
        limits={"time_s": 3, "grace_s": 1, "mem_mb": 300},
    )
    proc = srtui(
        "run", str(suite), "--cluster-config", str(slurm_config(tmp_path)), "--workspace", str(workspace), timeout=240
    )
    assert proc.returncode == 0, proc.stderr
    assert "INFO" not in proc.stderr
    rows = {r["method"]: r for r in results_json(workspace)}
    assert rows["probe-sleep"]["status"] == "timeout" and rows["probe-sleep"]["wall_s"] <= 3 + 1 + 6
    assert rows["probe-memhog"]["status"] == "oom" and rows["probe-noop"]["status"] == "ok"
    assert not slurm.queue()  # the worker job is cancelled at the end of the run
    assert not left_behind(workspace)


def test_slurm_killed_worker_is_retried_and_ctrl_c_ends_the_run(
    slurm, tmp_path: Path, suite_file, workspace: Path
) -> None:
    suite = suite_file(
        name="kill",
        methods=("probe-sleep",),
        seeds=(1, 2, 3, 4, 5),
        limits={"time_s": 60, "grace_s": 1},
        params={"probe-sleep": {"seconds": 3}},
    )
    config = slurm_config(tmp_path)
    driver = start_driver(suite, workspace, "--cluster-config", str(config), "--mem-limit", "500")
    victim, pid = wait_running(workspace, 1, driver)[0]
    worker = psutil.Process(pid).parent()  # the dask worker process running that job
    assert worker is not None
    worker.kill()
    _, err = driver.communicate(timeout=240)
    assert driver.returncode == 0, err
    assert db_rows(workspace, f"SELECT attempt, status FROM attempts WHERE job_id = '{victim}' ORDER BY attempt") == [
        (1, "lost"),
        (2, "ok"),
    ]
    assert {r["status"] for r in results_json(workspace)} == {"ok"}

    # Ctrl-C: dask_jobqueue's import must not take the handler away (it used to exit 0)
    again = tmp_path / "again"
    suite = suite_file(
        name="stop", methods=("probe-sleep",), seeds=(1, 2, 3, 4, 5), limits={"time_s": 60, "grace_s": 1}
    )
    driver = start_driver(suite, again, "--cluster-config", str(config), "--mem-limit", "500")
    wait_running(again, 2, driver)
    os.killpg(driver.pid, signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    assert dict(db_rows(again, "SELECT status, count(*) FROM jobs GROUP BY status")) == {"interrupted": 2, "pending": 3}
    assert db_rows(again, "SELECT status FROM runs") == [("interrupted",)]
    deadline = time.monotonic() + 30
    while slurm.queue() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not slurm.queue() and not left_behind(again)


@pytest.mark.parametrize(
    ("case", "fragments"),
    [
        ("bad queue", ("sbatch failed", "Invalid partition")),
        ("bad python", ("ended before its workers joined", "/nonexistent/python")),
        ("impossible", ("can never start", "PartitionConfig")),
    ],
)
def test_slurm_failure_paths_end_with_one_line(
    slurm, tmp_path: Path, suite_file, workspace: Path, case: str, fragments
) -> None:
    config = {
        "bad queue": lambda: slurm_config(tmp_path, extra='queue = "nope"'),
        "bad python": lambda: slurm_config(tmp_path, python="/nonexistent/python"),
        "impossible": lambda: slurm_config(tmp_path, cores=8),  # the node has 2 CPUs
    }[case]()
    suite = suite_file(name="fail", seeds=(1, 2, 3))
    t0 = time.monotonic()
    proc = srtui(
        "run", str(suite), "--cluster-config", str(config), "--workspace", str(workspace), *LIMITS, timeout=200
    )
    one_line_error(proc, t0, 120, *fragments)
    if (workspace / "srtui.db").exists():  # nothing claimed stays running; the next run resumes
        assert not db_rows(workspace, "SELECT 1 FROM jobs WHERE status = 'running'")
    assert not slurm.queue()


def test_slurm_lifetime_rollover_replaces_the_worker_job(slurm, tmp_path: Path, suite_file, workspace: Path) -> None:
    # walltime 4 min: Dask draws each worker's life in 108 +- 12 s, and a worker starts no job
    # that could outlive it (25 + 1 + 60 s): it retires at an age between 10 and 34 s, while
    # five rounds of 8 s jobs need ~40 s, so srtui must submit a new SLURM job to finish
    suite = suite_file(
        name="roll",
        methods=("probe-sleep",),
        seeds=tuple(range(1, 11)),
        limits={"time_s": 25, "grace_s": 1},
        params={"probe-sleep": {"seconds": 8}},
    )
    proc = srtui(
        "run",
        str(suite),
        "--cluster-config",
        str(slurm_config(tmp_path, walltime="00:04:00")),
        "--workspace",
        str(workspace),
        "--mem-limit",
        "500",
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr
    rows = results_json(workspace)
    assert [r["status"] for r in rows] == ["ok"] * 10 and {r["attempt"] for r in rows} == {1}, rows  # no attempt spent
    scripts = list((workspace / "cache" / "jobs" / "slurm").glob("*.sh"))
    assert len(scripts) >= 2, scripts  # a replacement job was submitted
