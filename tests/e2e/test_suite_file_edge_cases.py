"""Issue 27's smaller items: suite files (TOML nesting, huge integers, ceilings however a plan is
made, distinct seeds), errors quoting at most ~200 characters, the disk-full wording and the scratch
a disk-filling method leaves, the app's filter against SQLite's limits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import results_json, srtui
from test_storage_failures import tmpfs  # noqa: F401 - the fixture

from srtui.engine.workspace import Workspace
from srtui.results.store.filters import QueryError, where_clause
from srtui.results.store.store import db_error
from srtui.runs import planning_checks
from srtui.runs.errors import RunError
from srtui.runs.options import RunRequest
from srtui.runs.planning import plan_run


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text('name = "s"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\n' + body)
    return path


def _one_line(proc, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr) < 400, len(proc.stderr)
    for word in words:
        assert word in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("body", "word"),
    [
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("seeds = [1180591620717411303424]\n", "2**32"),
        ("seeds = [" + ", ".join(str(i) for i in range(100_000)) + "]\n", "at most 1000 seeds"),
        ("seeds = [1, 1]\n", "repeats"),
        ("seeds = [1]\n[tuning.grids]\nprobe-noop = [" + ", ".join("{}" for _ in range(5000)) + "]\n", "5000"),
    ],
    ids=["nesting", "int-overflow", "many-seeds", "repeated", "grid"],
)
def test_suite_files_fail_in_one_line(tmp_path: Path, body: str, word: str) -> None:
    _one_line(srtui("run", str(_suite(tmp_path, body)), "--workspace", str(tmp_path / "ws")), word)


def test_jobs_planned_have_a_ceiling_however_planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planning_checks, "MAX_PLANNED", 50)
    suite = _suite(tmp_path, "seeds = [" + ", ".join(str(i) for i in range(60)) + "]\n")
    with pytest.raises(RunError, match="ceiling of 50"):
        plan_run(Workspace(tmp_path / "ws"), RunRequest(str(suite)), write_data=False)
    with pytest.raises(RunError, match="ceiling of 50"):
        plan_run(Workspace(tmp_path / "ws"), RunRequest("smoke", tasks=["smoke-linear"], seeds=60), write_data=False)


def test_seeds_are_distinct_when_the_suite_already_names_small_ones(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "seeds = [1, 2, 3]\n")
    plan = plan_run(Workspace(tmp_path / "ws"), RunRequest(str(suite), seeds=900), write_data=False)
    seeds = [s.seed for s in plan.specs]
    assert len(seeds) == 900 and len(set(seeds)) == 900


def test_tasks_add_quotes_at_most_a_bit_of_a_huge_cell(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n" + "1,2\n" * 5 + "z" * 5_000_000 + ",3\n")
    _one_line(srtui("tasks", "add", "mine", str(csv), "--target", "y", "--workspace", str(tmp_path / "ws")), "numeric")


def test_unknown_names_in_a_suite_are_quoted_short(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('name = "s"\ntasks = ["' + "x" * 1_000_000 + '"]\nmethods = ["probe-noop"]\nseeds = [1]\n')
    _one_line(srtui("run", str(path), "--workspace", str(tmp_path / "ws")), "unknown task")
    path.write_text('name = "s"\ntasks = ["smoke-linear"]\nmethods = ["' + "m" * 1_000_000 + '"]\nseeds = [1]\n')
    _one_line(srtui("run", str(path), "--workspace", str(tmp_path / "ws")), "unknown method")


def test_disk_full_is_said_as_such() -> None:
    line = db_error(Path("/w/srtui.db"), sqlite3.OperationalError("database or disk is full"))
    assert line.startswith("disk full") and "free space" in line and "not a usable" not in line


FILLER = """
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
class Filler(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        try:
            with open("ballast", "wb") as fh:  # in its scratch dir, until the disk is full
                while True:
                    fh.write(b"x" * (1 << 16))
        except OSError:
            pass
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Filler()
def model(est, X=None):
    return repr(est.mean_)
"""


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_disk_filling_method_leaves_no_scratch_and_the_next_run_starts(tmpfs: Path, tmp_path: Path) -> None:  # noqa: F811
    method = tmp_path / "filler"
    method.mkdir()
    (method / "regressor.py").write_text(FILLER)
    ws = tmpfs / "ws"
    common = ["smoke", "--tasks", "smoke-linear", "--seeds", "1", "--workspace", str(ws)]
    srtui("run", "--methods", "filler", "--method-dir", str(method), *common)
    assert not list((ws / "cache" / "jobs").iterdir()), "the filled scratch dir was left"
    proc = srtui("run", "--methods", "probe-noop", *common)
    assert proc.returncode == 0, proc.stderr
    assert {r["method"] for r in results_json(ws)} >= {"probe-noop"}


def test_a_filter_past_sqlites_limits_is_refused_in_words() -> None:
    with pytest.raises(QueryError, match="at most"):
        where_clause(" ".join(f"word{i}" for i in range(1100)))
    with pytest.raises(QueryError, match="at most"):
        where_clause("method=" + ",".join(f"m{i}" for i in range(5000)))
