"""Storage failures: a full or read-only disk and a broken database end in one line, and no
finished job's outcome is lost."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import results_json, srtui

NOISY = """
import sys
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
class Noisy(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        sys.stderr.write("x" * (1 << 20) + "\\n")  # a 1 MB log per job
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Noisy()
def model(est, X=None):
    return repr(est.mean_)
"""
READS = (["status"], ["results"], ["export"], ["score", "wilcoxon"], ["results", "--format", "json"])


@pytest.fixture
def tmpfs(tmp_path: Path):
    """A 5 MB tmpfs (needs root); unmounted afterwards."""
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("srtui: error: "), proc.stderr
    return last


@pytest.mark.slow  # 15-35 s: the default run stays well under 15 minutes; CI runs it in its slow step
def test_disk_fills_during_a_run(tmpfs: Path, tmp_path: Path) -> None:
    method = tmp_path / "noisy"
    method.mkdir()
    (method / "regressor.py").write_text(NOISY)
    ws = tmpfs / "ws"
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        "noisy",
        "--method-dir",
        str(method),
        "--tasks",
        "smoke-linear",
        "--seeds",
        "12",
        "--jobs",
        "1",
        "--workspace",
        str(ws),
    )
    line = one_line_error(proc)
    assert "No space left on device" in line or "disk is full" in line, line
    rows = results_json(ws)
    finished = [r for r in rows if r["status"] not in ("pending",)]
    assert len(finished) >= 2, rows
    assert all(r["status"] in ("ok", "interrupted") for r in finished), [r["status"] for r in rows]
    assert [r for r in finished if r["status"] == "ok"]
    # read-only commands still work on the full disk; a second run ends in one line too
    for args in READS[:3]:
        assert srtui(*args, "--workspace", str(ws)).returncode == 0, args
    one_line_error(
        srtui(
            "run",
            "smoke",
            "--methods",
            "noisy",
            "--method-dir",
            str(method),
            "--tasks",
            "smoke-linear",
            "--seeds",
            "12",
            "--jobs",
            "1",
            "--workspace",
            str(ws),
        )
    )


@pytest.fixture(scope="module")
def done_ws(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("done") / "ws"
    srtui(
        "run",
        "smoke",
        "--methods",
        "probe-noop,probe-crash",
        "--tasks",
        "smoke-linear,smoke-interaction",
        "--workspace",
        str(ws),
        check=True,
    )
    return ws


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("damage", ["corrupted", "zero-byte", "truncated"])
def test_broken_database_is_one_line_everywhere(done_ws: Path, tmp_path: Path, damage: str) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(done_ws, ws)
    db = ws / "srtui.db"
    data = db.read_bytes()
    db.write_bytes(
        {"corrupted": data[:100] + b"\xff" * (len(data) - 100), "zero-byte": b"", "truncated": data[: len(data) // 3]}[
            damage
        ]
    )
    writes = [] if damage == "zero-byte" else [["run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear"]]
    for args in [*READS, ["rescore"], *writes]:  # `run` initialises an empty file, as SQLite does
        line = one_line_error(srtui(*args, "--workspace", str(ws)))
        assert "not a usable srtui database" in line, (args, line)
    assert db.stat().st_size == len({"corrupted": data, "zero-byte": b"", "truncated": data[: len(data) // 3]}[damage])


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_read_only_workspace_reads_and_refuses_writes_in_one_line(done_ws: Path, tmpfs: Path) -> None:
    ws = tmpfs / "ws"
    shutil.copytree(done_ws, ws)  # cleanly closed: no -wal/-shm files, which a reader would create
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    for args in READS:
        proc = srtui(*args, "--workspace", str(ws))
        assert proc.returncode == 0, (args, proc.stderr)
    assert len(results_json(ws)) == 4
    csv = tmpfs.parent / "t.csv"
    csv.write_text("a,y\n" + "".join(f"{i},{2 * i}\n" for i in range(40)))
    for args in (
        ["tasks", "add", "mine", str(csv), "--target", "y"],
        ["rescore"],
        ["run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear"],
    ):
        one_line_error(srtui(*args, "--workspace", str(ws)))
