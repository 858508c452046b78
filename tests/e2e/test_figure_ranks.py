"""The Pareto figure read from the store with numpy (``srtui.results.outputs.figures.ranks``,
#56) gives the numbers the srbench2021 rule gives from the runs table: on a real workspace of
seven built-in methods (ties, black boxes without a size, a failed run), the board, the
per-dataset ranks and values and the notes are equal, and `srtui plot pareto` (and `points`)
writes the very bytes the runs table's figure has, importing no pandas (nor pydantic to read ``--width``). Whatever the
rule would say more (a run never attempted) sends the figure through the rule again, and the
file still matches it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import srtui
from test_lazy_imports import heavy, imported

from srtui.engine.workspace import Workspace
from srtui.results.outputs.figures import FigureData, plot_data, ranks, render, store_data, workspace_data
from srtui.results.scoring import score
from srtui.results.scoring.tables import runs_frame
from srtui.results.store.store import Store

SUITE = """name = "ranks"
tasks = ["smoke-linear", "smoke-interaction", "nsr-nguyen-1", "nsr-cs-1"]
methods = ["linear", "ridge", "lasso", "poly2", "dummy", "rf", "knn"]
seeds = [1, 2]
scoring = "srbench2021"
"""


@pytest.fixture(scope="module")
def seven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of seven built-ins on four tasks, two seeds (56 jobs), then one of its runs
    failed as a crashed job records it (status error, no accuracy)."""
    root = tmp_path_factory.mktemp("ranks")
    (root / "ranks.toml").write_text(SUITE)
    ws = root / "ws"
    srtui("run", str(root / "ranks.toml"), "-w", str(ws), check=True, timeout=900)
    with sqlite3.connect(ws / "srtui.db") as conn:
        conn.execute(
            "UPDATE jobs SET status = 'error', r2_test = NULL WHERE job_id = "
            "(SELECT job_id FROM jobs WHERE method = 'poly2' ORDER BY task, seed LIMIT 1)"
        )
    return ws


def rule_board(ws: Path) -> ranks.RankBoard:
    store = Store(Workspace(ws), readonly=True)
    return ranks.from_score(score("srbench2021", runs_frame(store)))


def assert_same(stored: ranks.RankBoard, ruled: ranks.RankBoard) -> None:
    assert stored.methods == ruled.methods
    for a, b in ((stored.x, ruled.x), (stored.y, ruled.y)):
        assert np.array_equal(a, b, equal_nan=True), (a, b)
    assert stored.front.tolist() == ruled.front.tolist()
    assert stored.per_task.keys() == ruled.per_task.keys()
    for m, (r2, size) in stored.per_task.items():
        assert np.array_equal(r2, ruled.per_task[m][0], equal_nan=True), m
        assert np.array_equal(size, ruled.per_task[m][1], equal_nan=True), m
    assert stored.values.keys() == ruled.values.keys()
    for m, values in stored.values.items():
        assert values.keys() == ruled.values[m].keys() == {"r2", "size", "time"}
        for key, v in values.items():
            assert np.array_equal(v, ruled.values[m][key], equal_nan=True), (m, key)
    assert stored.notes == ruled.notes
    assert stored.reference == ruled.reference


def test_the_stores_board_is_the_rules(seven: Path) -> None:
    store = Store(Workspace(seven), readonly=True)
    stored = ranks.from_store(store, None, {})
    assert stored is not None and stored.stored
    assert_same(stored, rule_board(seven))
    assert len(stored.methods) == 7
    # what makes the comparison worth it: black boxes without a size, ties, a failed run
    assert np.isnan(stored.y).any()
    shared = np.concatenate([r for pair in stored.per_task.values() for r in pair])
    assert (shared % 1 == 0.5).any()  # methods tied on a dataset share the mean of their places
    assert ranks.from_store(store, "ranks", {"profile": "reference"}) is not None
    assert ranks.from_store(store, None, {"profile": "corrected"}) is None  # the rule's own path


@pytest.mark.parametrize("kind", ["pareto", "points"])
def test_plot_writes_the_rules_figure_without_pandas(seven: Path, tmp_path: Path, kind: str) -> None:
    out = tmp_path / "lean.svg"
    proc, modules = imported(tmp_path, "plot", kind, "--width", "5.3", "--out", str(out), "-w", str(seven))
    assert proc.returncode == 0, proc.stderr
    assert heavy(modules) == ["matplotlib"], heavy(modules)
    assert "pydantic" not in modules  # `--width 5.3` read as pydantic reads it, without it
    store = Store(Workspace(seven), readonly=True)
    ruled = workspace_data(store, None)  # the runs table, the rule's Score: the figure as it was
    render(kind, ruled, tmp_path / "rule.svg", 5.3)
    assert out.read_bytes() == (tmp_path / "rule.svg").read_bytes()
    # the app's terminal draws the same Plot from either
    assert plot_data(kind, store_data(store, None)) == plot_data(kind, workspace_data(store, None))
    notes = [line for line in proc.stderr.splitlines() if line.startswith("srtui: note")]
    assert notes == [f"srtui: note ({s.rule}): {n}" for s in ruled.scores() for n in s.notes]


def test_a_run_never_attempted_goes_through_the_rule(seven: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(seven, ws)
    with sqlite3.connect(ws / "srtui.db") as conn:  # one method lacks one run: the coverage note
        conn.execute("DELETE FROM jobs WHERE job_id = (SELECT job_id FROM jobs WHERE method = 'knn' LIMIT 1)")
    store = Store(Workspace(ws), readonly=True)
    assert ranks.from_store(store, None, {}) is None
    data = FigureData(store=store, methods=("knn",))
    assert not data.rank_board().stored and data.runs is not None  # read the runs table
    out = tmp_path / "fallback.svg"
    proc = srtui("plot", "pareto", "--width", "5.4", "--out", str(out), "-w", str(ws), check=True)
    assert "never attempted" in proc.stderr
    render("pareto", workspace_data(store, None), tmp_path / "rule.svg", 5.4)
    assert out.read_bytes() == (tmp_path / "rule.svg").read_bytes()
