"""Scaling and a method's alternative (Pareto) models: each stored point is mapped back to the
task's units like the final model, the string the method printed kept beside it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import srtui

from srtui.engine.expression import parse_expression
from srtui.engine.outcome_check import pareto_in_original_units
from srtui.engine.scaling import Scaling, statistics

FEATURES = ["x0", "x1"]


def test_each_point_is_mapped_and_one_that_cannot_be_is_marked() -> None:
    X = np.random.default_rng(1).normal(5, 3, size=(40, 2))
    y = 2 * X[:, 0] - X[:, 1] + 7
    scaler = Scaling.for_job("xy", {"X_train": X, "y_train": y})
    assert scaler is not None
    points: list[dict[str, Any]] = [
        {"expression": "x0 + 0.5", "complexity": 3.0, "loss": 0.1},
        {"expression": "x0 * x1 - x1", "complexity": 5.0, "loss": 0.05},
        {"expression": "x0 + (", "complexity": 2.0, "loss": 1.0},  # unreadable
        {"expression": "x0 + x1 + x0 * x", "complexity": 9.0, "loss": 0.0, "too_large": 30_000},
    ]
    out = pareto_in_original_units(points, FEATURES, "python", scaler)
    assert [p["complexity"] for p in out] == [3.0, 5.0, 2.0, 9.0] and [p["loss"] for p in out] == [0.1, 0.05, 1.0, 0.0]
    for point, mapped in zip(points[:2], out[:2]):
        assert mapped["expression_as_printed"] == point["expression"] and "units" not in mapped
        standardised = parse_expression(point["expression"], FEATURES).evaluate(scaler.transform_x(X))
        raw = parse_expression(mapped["expression"], FEATURES).evaluate(X)
        np.testing.assert_allclose(raw, scaler.inverse_y(standardised), rtol=1e-10)
    for point, kept in zip(points[2:], out[2:]):
        assert kept["expression"] == point["expression"] and kept["units"] == "standardised" and kept["units_error"]
    assert "size cap" in out[3]["units_error"]


PYOPERON = """
[params.pyoperon]
generations = 5
population_size = 60
[tuning]
scaling = "xy"
"""


@pytest.mark.slow
def test_a_scaled_run_stores_its_pareto_models_in_the_task_s_units(workspace: Path, tmp_path: Path) -> None:
    suite = tmp_path / "pareto.toml"
    suite.write_text(
        'name = "pareto"\ntasks = ["smoke-interaction"]\nmethods = ["pyoperon"]\nseeds = [2]\n'
        f'protocol = "none"\n{PYOPERON}'
    )
    srtui("run", str(suite), "--jobs", "1", "--workspace", str(workspace), check=True, timeout=600)
    rows = json.loads(srtui("results", "--format", "json", "--workspace", str(workspace), check=True).stdout)
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    job = rows[0]
    with sqlite3.connect(workspace / "srtui.db") as conn:  # the stored front (results shows no column of it)
        pareto = json.loads(conn.execute("SELECT pareto FROM jobs WHERE suite = 'pareto'").fetchone()[0])
    assert job["params"]["srtui_scaling"] == "xy" and len(pareto) >= 2
    with np.load(workspace / "cache" / "data" / f"{job['data_fingerprint']}.npz") as z:
        X, y, names = z["X_train"], z["y_train"], [str(n) for n in z["feature_names"]]
    stats = statistics(X, y)
    Xs = (X - stats["scale_x_mean"]) / stats["scale_x_scale"]
    for point in pareto:
        assert "units" not in point, point  # every point of a small front is readable
        printed = parse_expression(point["expression_as_printed"], names, "pyoperon").evaluate(Xs)
        raw = parse_expression(point["expression"], names, "pyoperon").evaluate(X)
        expected = printed * stats["scale_y_scale"][0] + stats["scale_y_mean"][0]
        np.testing.assert_allclose(raw, expected, rtol=1e-8, atol=1e-8 * float(np.abs(y).max()))
    # the final model went through the same mapping
    assert job["method_notes"]["model_as_printed"] != job["model"]
