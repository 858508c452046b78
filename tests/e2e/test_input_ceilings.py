"""Ceilings: unbounded inputs are refused in one line, and a huge model cannot blow up the driver."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO, results_json, srtui

from srtui.engine.backends.base import usable_cores


def refused(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("srtui: error: "), proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    "args, words",
    [
        (["--grace", "1e300"], ["grace_s", "at most 60"]),
        (["--grace", "61"], ["grace_s"]),
        (["--cpu-limit", "1e300"], ["cpu_s", "at most"]),
        (["--time-limit", "nan"], ["time_s", "positive"]),
        (["--time-limit", "inf"], ["time_s"]),
        (["--mem-limit", "1e300"], ["mem_mb"]),
        (["--seeds", "2000000"], ["--seeds", "1000"]),
        (["--jobs", "100000"], ["--jobs"]),
        (["--jobs", str(len(usable_cores()) + 1)], ["usable core", "--oversubscribe"]),
    ],
)
def test_run_ceilings(workspace: Path, args: list[str], words: list[str]) -> None:
    t0 = time.monotonic()
    refused(srtui("run", "smoke", "--tasks", "smoke-linear", "--dry-run", *args, "--workspace", str(workspace)), *words)
    assert time.monotonic() - t0 < 60
    assert not workspace.exists()


def test_oversubscribe_is_explicit(workspace: Path) -> None:
    proc = srtui(
        "run",
        "smoke",
        "--tasks",
        "smoke-linear",
        "--methods",
        "probe-noop",
        "--dry-run",
        "--jobs",
        str(len(usable_cores()) + 1),
        "--oversubscribe",
        "--workspace",
        str(workspace),
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["expr", "x0 + 1", "--timeout", "1e300"],
        ["expr", "x0 + 1", "--timeout", "nan"],
        ["rescore", "--timeout", "inf"],
    ],
)
def test_timeouts_are_finite_and_positive(workspace: Path, args: list[str]) -> None:
    refused(srtui(*args, *(["--workspace", str(workspace)] if args[0] == "rescore" else [])), "--timeout")


def test_score_from_csv_with_text_scores(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("task,method,r2_test\nt1,a,hello\nt1,b,0.5\nt2,a,0.3\nt2,b,0.1\n")
    refused(srtui("score", "wilcoxon", "--from-csv", str(runs)), "r2_test", "hello")


@pytest.mark.parametrize(
    "n_columns, name, words", [(20_000, "a", ["20001 columns"]), (1_000_000, "column", ["header line"])]
)
def test_tasks_add_checks_the_header_first(workspace: Path, tmp_path: Path, n_columns: int, name: str, words) -> None:
    wide = tmp_path / "wide.csv"
    with open(wide, "w") as fh:
        fh.write(",".join(f"{name}{i}" for i in range(n_columns)) + ",y\n")
        fh.write(",".join("1" for _ in range(n_columns + 1)) + "\n")
    t0 = time.monotonic()
    refused(srtui("tasks", "add", "wide", str(wide), "--target", "y", "--workspace", str(workspace)), *words)
    assert time.monotonic() - t0 < 30


HUGE = """
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
class Huge(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Huge()
def model(est, X=None):
    return "x0 + " * (20 * 2**20)  # 100 MB
def get_population(est):
    return [est]
"""


def test_a_100_mb_model_is_stored_truncated_and_the_driver_stays_small(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "huge"
    folder.mkdir()
    (folder / "regressor.py").write_text(HUGE)
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--methods",
            "huge",
            "--method-dir",
            str(folder),
            "--tasks",
            "smoke-linear",
            "--workspace",
            str(workspace),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    me, peak = psutil.Process(driver.pid), 0
    while driver.poll() is None:
        try:
            peak = max(peak, me.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.02)
    assert driver.returncode == 0, driver.communicate()[1]
    assert peak < 300 * 2**20, f"driver peaked at {peak / 2**20:.0f} MB"
    [row] = results_json(workspace)
    assert row["status"] == "ok", row
    assert len(row["model"]) <= 100_000
    assert row["method_notes"]["model_truncated_from"] == 100 * 2**20
    import sqlite3

    with sqlite3.connect(workspace / "srtui.db") as conn:
        assert conn.execute("SELECT model_too_large FROM jobs").fetchall() == [(1,)]  # marked too large
    store_size = (workspace / "srtui.db").stat().st_size + sum(p.stat().st_size for p in workspace.glob("srtui.db-*"))
    assert store_size < 20 * 2**20


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _ignores_sigterm(pid: int) -> bool:
    import signal

    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigIgn:")), 0)
    return bool(ignored & (1 << (signal.SIGTERM - 1)))


def test_a_second_sigterm_kills_at_once_whatever_the_grace(workspace: Path) -> None:
    import signal
    import sqlite3

    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--methods",
            "probe-sleep",
            "--tasks",
            "smoke-linear",
            "--time-limit",
            "300",
            "--grace",
            "60",
            "--workspace",
            str(workspace),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until its worker runs and ignores SIGTERM (slow to get there under load)
        time.sleep(0.2)
        try:
            with sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True) as conn:
                row = conn.execute("SELECT worker_pid FROM jobs WHERE worker_pid IS NOT NULL").fetchone()
        except sqlite3.Error:
            continue
        # the probe ignores SIGTERM, in the job's tree (a sealed job runs under an init of its own)
        if row and any(_ignores_sigterm(p) for p in [row[0], *_descendants(row[0])]):
            break
    driver.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    t0 = time.monotonic()
    driver.send_signal(signal.SIGTERM)
    driver.wait(timeout=60)
    assert time.monotonic() - t0 < 40, "the second SIGTERM did not kill the job at once"  # not the 60 s grace
    assert driver.returncode == 130, driver.communicate()[1]
    [row] = results_json(workspace)
    assert row["status"] == "interrupted" and row["wall_s"] < 40, row
