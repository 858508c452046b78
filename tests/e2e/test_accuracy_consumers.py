"""A declared accuracy metric reaches every consumer with no list to edit (issue 57).

A throwaway metric is declared here, the way CONTRIBUTING says (``@accuracy`` only), before a
real workspace is scored; it must then appear, with its value and its declaration's label, in
`srtui results`, `srtui export`, the app's expression screen (through the facade) and a scoring
rule's runs table. The same checks run over a metric whose home is the job's row (``mae_train``),
the other store, which once vanished from the expression screen with no test failing.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_tui_seed import seed_demo
from typer.testing import CliRunner

from srtui.engine.workspace import Workspace
from srtui.results.metrics import accuracy, pivot
from srtui.results.metrics.accuracy import Golden
from srtui.results.scoring.base import RULES, Rule, Score
from srtui.results.store.columns import ACCURACY
from srtui.results.store.queries import Reader
from srtui.results.store.store import Store

NAME, LABEL = "overshoot", "throwaway overshoot"
STORED = (f"{NAME}_train", f"{NAME}_test")
RULE = "throwaway-overshoot"


def overshoot(y: np.ndarray, yhat: np.ndarray) -> float:
    return float(np.mean(yhat - y))


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, dict[str, dict[str, float]]]]:
    """A real workspace scored with the throwaway metric declared; the expected values per job,
    computed here from the stored predictions and the task's data (numpy, not the metric code)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(accuracy, "_DECLARED", dict(accuracy._DECLARED))  # the declaration ends with the module
        golden = Golden((1.0,), (2.0,), 1.0)
        accuracy.accuracy(NAME, "lower", LABEL, "target units", "a test's own", "split", golden)(overshoot)
        ws = seed_demo(tmp_path_factory.mktemp("consumers") / "ws")
        yield ws, _expected(ws)


def _expected(ws: Workspace) -> dict[str, dict[str, float]]:
    from srtui.tasks.catalogue import TaskContext, get_task

    store = Store(ws, readonly=True)
    out = {}
    for job in store.jobs():
        pred = store.predictions(job["job_id"])
        if pred is None or job["status"] != "ok":
            continue
        task = get_task(job["task"], TaskContext.for_workspace(ws.root))
        y_train = pd.Series(task.y_train, index=task.train_index)[pred["train_index"]].to_numpy()
        y_test = pd.Series(task.y_test, index=task.test_index)[pred["test_index"]].to_numpy()
        out[job["job_id"]] = {
            f"{NAME}_train": float(np.mean(pred["train_pred"] - y_train)),
            f"{NAME}_test": float(np.mean(pred["test_pred"] - y_test)),
            "mae_train": float(np.mean(np.abs(pred["train_pred"] - y_train))),
        }
    store.close()
    assert len(out) == 4 and any(abs(v[f"{NAME}_test"]) > 1e-3 for v in out.values())  # ridge's shrunk predictions
    return out


def _cli(*args: str) -> str:
    from srtui.cli import app

    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


#: the names checked in each consumer: the throwaway's (the metrics table) and one of the job's row
CHECKED = (*STORED, "mae_train")


def test_the_throwaway_is_stored_once_in_the_metrics_table(scored) -> None:
    ws, expected = scored
    assert not set(STORED) & set(ACCURACY)  # not a job column: no schema change was made for it
    store = Store(ws, readonly=True)
    for job_id, values in expected.items():
        q = "SELECT name, value FROM metrics WHERE job_id = ? AND name LIKE ?"
        rows = store.conn.execute(q, (job_id, f"{NAME}%"))
        assert dict(rows.fetchall()) == pytest.approx({n: values[n] for n in STORED})
    store.close()


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_srtui_results_prints_every_declared_metric(scored, fmt: str) -> None:
    ws, expected = scored
    out = _cli("results", "--format", fmt, "-w", str(ws.root))
    rows = json.loads(out) if fmt == "json" else list(csv.DictReader(io.StringIO(out)))
    by_id = {r["job_id"]: r for r in rows}
    for job_id, values in expected.items():
        for name in CHECKED:
            assert float(by_id[job_id][name]) == pytest.approx(values[name]), (job_id, name)


def test_srtui_export_has_every_declared_metric(scored, tmp_path: Path) -> None:
    ws, expected = scored
    _cli("export", "--format", "csv", "--out", str(tmp_path), "-w", str(ws.root))
    runs = pd.read_csv(tmp_path / "runs.csv").set_index("job_id")
    for job_id, values in expected.items():
        for name in CHECKED:
            assert runs.loc[job_id, name] == pytest.approx(values[name]), (job_id, name)


def test_the_app_s_expression_screen_shows_every_declared_metric_with_its_label(scored) -> None:
    from srtui.views import expression_detail

    ws, expected = scored
    reader = Reader(ws)
    try:
        for job_id, values in expected.items():
            shown = dict(expression_detail(reader, job_id).metrics)
            for name in CHECKED:
                label = accuracy.labels()[name]
                assert label in shown, (label, sorted(shown))
                assert float(shown[label]) == pytest.approx(values[name], rel=1e-5), (job_id, name)
            assert f"{LABEL} test" in shown  # the declaration's words, not a hand list's
    finally:
        reader.close()


def test_a_rule_reads_every_declared_metric(scored, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule gets the runs table every rule gets (runs_frame); a metric declared but not yet
    stored by any job is a column too, so a rule reading it does not fail on an older workspace."""
    from srtui.results.scoring import score
    from srtui.results.scoring.tables import runs_frame

    ws, expected = scored

    def median_overshoot(runs: pd.DataFrame) -> Score:
        table = runs.groupby("method")[list(CHECKED)].median().reset_index()
        return Score(RULE, {}, {"leaderboard": table})

    monkeypatch.setitem(RULES, RULE, Rule(RULE, "median overshoot", median_overshoot, {}))
    store = Store(ws, readonly=True)
    try:
        runs = runs_frame(store, "smoke")
    finally:
        store.close()
    assert set(pivot.stored_names()) <= set(runs.columns)  # r2_extrapolation: declared, no smoke job stores it
    board = score(RULE, runs).main.set_index("method")
    ridge = [v for job_id, v in expected.items() if job_id in set(runs.loc[runs["method"] == "ridge", "job_id"])]
    for name in CHECKED:
        assert board.loc["ridge", name] == pytest.approx(float(np.median([v[name] for v in ridge]))), name


def test_each_accuracy_metric_is_computed_once(workspace: Path, suite_file) -> None:
    """A real run: the job's row gets its accuracy as the job ends (the declarations, srtui.runs.sink);
    the metrics pass adds the others and leaves the row's (a marked value survives it), and only
    a rescore of a scored job computes them all again from the stored predictions."""
    from conftest import srtui

    from srtui.results.metrics.compute import compute_for_store

    srtui("run", str(suite_file(methods=("sgd",))), "-w", str(workspace), "--no-metrics", check=True)
    ws = Workspace(workspace)
    store = Store(ws)
    try:
        [job] = store.jobs()
        pred = store.predictions(job["job_id"])
        assert pred is not None and job["status"] == "ok"
        assert all(job[name] is not None for name in ACCURACY)  # written by the driver as the job ended
        assert store.conn.execute("SELECT count(*) FROM metrics").fetchone()[0] == 0  # the rest waits
        true_r2 = job["r2_train"]
        store.conn.execute("UPDATE jobs SET r2_train = 0.123")  # marked: would a pass compute it again?
        store.conn.commit()
        compute_for_store(store, workers=1)
        after = store.jobs()[0]
        assert after["r2_train"] == 0.123 and after["r2_test"] == job["r2_test"]  # the row's: not recomputed
        stored = dict(store.conn.execute("SELECT name, value FROM metrics WHERE name IN ('nmse_test', 'r2_test_3')"))
        assert stored["r2_test_3"] == round(job["r2_test"], 3) and stored["nmse_test"] >= 0
        compute_for_store(store, workers=1, only_missing=False)  # `srtui rescore --force`: every one again
        assert store.jobs()[0]["r2_train"] == pytest.approx(true_r2, abs=1e-12)
    finally:
        store.close()
