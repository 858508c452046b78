"""The engine's hard limits, through the real CLI, real subprocesses and a real SQLite file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
from conftest import FALLBACK, results_json, srtui

from srtui.engine.process.tree import processes_with_token


def job_processes_alive(workspace: Path) -> list[psutil.Process]:
    """Any process still carrying a job token of this workspace (other runs share the machine)."""
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    store = Store(Workspace(workspace), readonly=True)
    prefix = store.workspace_id + ":"
    store.close()
    return [p for p in processes_with_token(prefix=prefix) if p.pid != os.getpid()]


def one(rows: list[dict], **where) -> dict:
    found = [r for r in rows if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, (where, rows)
    return found[0]


def test_sleep_times_out_and_leaves_nothing(workspace: Path, contained_launcher: str) -> None:
    t0 = time.monotonic()
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        "smoke",
        "--methods",
        "probe-sleep",
        "--tasks",
        "smoke-linear",
        "--time-limit",
        "3",
        "--grace",
        "1",
        "--workspace",
        str(workspace),
    )
    assert proc.returncode == 0, proc.stderr
    # the probe sleeps forever, so a driver that waits for it never returns; the bound leaves room
    # for interpreter start-up and the fork server's imports on a host loaded 5x over its cores
    # (the limit itself is checked on the job's own wall_s below)
    assert time.monotonic() - t0 < 120
    row = one(results_json(workspace), method="probe-sleep")
    assert row["status"] == "timeout"
    assert row["wall_s"] <= 3 + 1 + 6, row  # limit + grace + a margin for a loaded host
    assert row["signal"] == 9  # it ignores SIGTERM, so the grace period ended in SIGKILL
    assert not job_processes_alive(workspace)


def test_memhog_is_oom_and_neighbours_carry_on(workspace: Path, suite_file, contained_launcher: str) -> None:
    suite = suite_file(methods=("probe-memhog", "probe-noop"), seeds=(1, 2), limits={"time_s": 30, "mem_mb": 300})
    proc = srtui("run", "--launcher", contained_launcher, str(suite), "--jobs", "2", "--workspace", str(workspace))
    assert proc.returncode == 0, proc.stderr
    rows = results_json(workspace)
    hogs = [r for r in rows if r["method"] == "probe-memhog"]
    assert [r["status"] for r in hogs] == ["oom", "oom"]
    for row in hogs:
        assert row["peak_rss_mb"] >= 250
        # it grows at ~500 MB/s: detection within 2 s of crossing 300 MB means < 300 + 1000 MB,
        # and well before the 30 s wall limit
        assert row["peak_rss_mb"] < 1300, row
        assert row["wall_s"] < 15, row  # margin for a loaded host
        assert "limit 300 MB" in row["limit_detail"]
    assert [r["status"] for r in rows if r["method"] == "probe-noop"] == ["ok", "ok"]
    assert not job_processes_alive(workspace)


def test_escaped_grandchild_is_killed(
    workspace: Path, tmp_path: Path, contained_launcher: str, job_writable: Path
) -> None:
    pidfile = job_writable / "escapee.pid"
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        "smoke",
        "--methods",
        "probe-escape",
        "--tasks",
        "smoke-linear",
        "--workspace",
        str(workspace),
        env={"SRTUI_PROBE_PIDFILE": str(pidfile), **FALLBACK},
    )
    assert proc.returncode == 0, proc.stderr
    assert one(results_json(workspace), method="probe-escape")["status"] == "ok"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    assert not alive, f"escaped grandchild {pid} survived the job"


def test_crash_records_the_signal(workspace: Path, contained_launcher: str) -> None:
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        "smoke",
        "--methods",
        "probe-crash",
        "--tasks",
        "smoke-linear",
        "--workspace",
        str(workspace),
    )
    assert proc.returncode == 0, proc.stderr
    row = one(results_json(workspace), method="probe-crash")
    assert row["status"] == "crashed"
    assert row["signal"] == 11 and row["returncode"] == -11
    assert "probe-crash: raising signal" in row["stderr_tail"]
    logs = list((workspace / "logs").glob(f"{row['job_id']}.a1.stderr"))
    assert logs and b"raising signal" in logs[0].read_bytes()


def test_bad_model_is_never_evaluated(workspace: Path, tmp_path: Path, launcher: str) -> None:
    proc = srtui(
        "run",
        "--launcher",
        launcher,
        "smoke",
        "--methods",
        "probe-badmodel",
        "--tasks",
        "smoke-linear",
        "--workspace",
        str(workspace),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    row = one(results_json(workspace), method="probe-badmodel")
    assert row["status"] == "invalid_model"
    assert row["model"] == "__import__('os').system('touch PWNED')"  # kept verbatim, as data
    assert row["model_error"]
    for root in (tmp_path, Path.cwd(), Path.home()):
        assert not list(root.rglob("PWNED")) if root == tmp_path else not (root / "PWNED").exists()


def test_cpu_time_limit(workspace: Path, tmp_path: Path, contained_launcher: str) -> None:
    # a busy loop with a 2 s CPU limit and a generous wall limit ends as cpu_timeout
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "regressor.py").write_text(
        "import numpy as np\n"
        "from sklearn.base import BaseEstimator, RegressorMixin\n"
        "class Busy(RegressorMixin, BaseEstimator):  # SRBench clones its estimators\n"
        "    def __init__(self, max_time=100):\n"
        "        self.max_time = max_time\n"
        "    def fit(self, X, y):\n"
        "        while True:\n"
        "            pass\n"
        "    def predict(self, X):\n"
        "        return np.zeros(len(X))\n"
        "est = Busy()\n"
        "def model(est, X=None):\n"
        "    return '0'\n"
    )
    proc = srtui(
        "run",
        "--launcher",
        contained_launcher,
        "smoke",
        "--methods",
        "busy",
        "--method-dir",
        str(folder),
        "--tasks",
        "smoke-linear",
        "--time-limit",
        "30",
        "--cpu-limit",
        "2",
        "--workspace",
        str(workspace),
    )
    assert proc.returncode == 0, proc.stderr
    row = one(results_json(workspace), method="busy")
    assert row["status"] == "cpu_timeout", row
    assert row["wall_s"] < 25  # 2 CPU-seconds take longer in wall time on a loaded host
