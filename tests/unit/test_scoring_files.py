"""`srtui score --from-csv` on SRBench's own files: evaluate_model.py JSON results of each release
and the collated docs/csv tables, end to end through the CLI."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from srtui.cli import app
from srtui.engine.errors import SrtuiError
from srtui.results.scoring.tables import read_runs_csv


def _write(folder, name, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_json_results_of_2022_stage1_and_2021_groundtruth(tmp_path):
    base = dict(params={"x": 1}, time_time=3.0, mse_test=0.1, r2_train=0.9, y_pred_test=[1, 2])
    # 2022 stage 1: the seed is the data file's prefix; '_base' is easy; a cut-off '_d' is '_data'
    _write(
        tmp_path / "a",
        "r1",
        {
            **base,
            "dataset": "2082_exact_formula_easy_data",
            "algorithm": "pysr",
            "random_state": 7,
            "r2_test": 0.99,
            "simplicity": -1.2,
            "symbolic_equivalence": {"equivalent": True, "sym_diff": "0"},
        },
    )
    _write(
        tmp_path / "a",
        "r2",
        {
            **base,
            "dataset": "3946_noise_base_d",
            "algorithm": "pysr",
            "random_state": 7,
            "r2_test": 0.8,
            "simplicity": -1.5,
        },
    )
    _write(
        tmp_path / "b",
        "r3",
        {
            **base,
            "dataset": "feynman_I_6_2",
            "algorithm": "Operon",
            "random_state": 3,
            "r2_test": 0.999,
            "model_size": 12,
            "target_noise": 0.01,
            "symbolic_error_is_zero": False,
            "symbolic_error_is_constant": True,
            "symbolic_fraction_is_constant": False,
            "simplified_symbolic_model": "x*y",
        },
    )
    runs = read_runs_csv(tmp_path).set_index("task")
    assert runs.loc["exact_formula_easy_data", "seed"] == 2082
    assert runs.loc["exact_formula_easy_data", "symbolic_solution"] == 1
    assert runs.loc["exact_formula_easy_data", "property"] == "exact_rediscovery"
    assert runs.loc["noise_easy_data", "seed"] == 3946 and runs.loc["noise_easy_data", "property"] == "accuracy"
    row = runs.loc["feynman_I_6_2"]
    assert (row["method"], row["seed"], row["size"], row["noise"], row["symbolic_solution"]) == (
        "Operon",
        3,
        12,
        0.01,
        1,
    )
    assert "params" not in runs.columns and "y_pred_test" not in runs.columns and (runs["status"] == "ok").all()
    res = CliRunner().invoke(
        app, ["score", "srbench-groundtruth", "--from-csv", str(tmp_path / "b"), "--format", "csv"]
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith(
        "# srbench-groundtruth (profile: reference; options: symbolic_solution=symbolic_solution; srtui"
    )
    assert "\nOperon,0.01,100,0,1\n" in res.output  # R2 0.999 is not > 0.999


def test_json_results_of_the_qualification_stage_need_a_baseline(tmp_path):
    for i, (alg, r2) in enumerate(
        (("LinearRegression", 0.5), ("operon", 0.9), ("LinearRegression", 0.4), ("operon", 0.3))
    ):
        _write(
            tmp_path,
            f"r{i}",
            {"dataset": f"197_cpu_act{i // 2}", "algorithm": alg, "random_state": 0, "r2_test": r2, "params": {}},
        )
    runner = CliRunner()
    res = runner.invoke(app, ["score", "srbench2022-qualification", "--from-csv", str(tmp_path), "--format", "csv"])
    assert res.exit_code == 0, res.output
    # per trial: d0 operon 1, LR 2; d1 LR 1, operon 2: operon's rank differences -1, +1 -> mean 0: no
    assert "\noperon,0,0.6,2,0,no\n" in res.output
    renamed = tmp_path / "renamed"
    for i, alg in enumerate(("baseline", "operon")):
        _write(renamed, f"r{i}", {"dataset": "d", "algorithm": alg, "random_state": 0, "r2_test": 0.5 + i / 10})
    bad = runner.invoke(app, ["score", "srbench2022-qualification", "--from-csv", str(renamed)])
    assert isinstance(bad.exception, SrtuiError) and "-o baseline=NAME" in str(bad.exception)
    ok = runner.invoke(
        app, ["score", "srbench2022-qualification", "--from-csv", str(renamed), "-o", "baseline=baseline"]
    )
    assert ok.exit_code == 0 and "baseline=baseline" in ok.output
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("{not json")
    err = runner.invoke(app, ["score", "srbench2021", "--from-csv", str(tmp_path / "broken")])
    assert isinstance(err.exception, SrtuiError) and "not a readable JSON result" in str(err.exception)


def test_collated_blackbox_table_one_row_per_method_and_dataset(tmp_path):
    path = tmp_path / "blackbox_results.csv"
    pd.DataFrame(
        {
            "algorithm": ["*Operon", "*Operon", "Linear", "Linear"],
            "dataset": ["d1", "d2", "d1", "d2"],
            "rmse_test": [0.1, 0.2, 0.5, 0.6],
            "r2_test": [0.95, 0.9, 0.4, 0.3],
            "model_size": [50.0, 40.0, 10.0, 9.0],
            "training time (s)": [100.0, 90.0, 1.0, 1.0],
        }
    ).to_csv(path, index=False)
    runs = read_runs_csv(path)
    assert {"task", "method", "size", "wall_s"} <= set(runs.columns) and (runs["seed"] == 0).all()
    res = CliRunner().invoke(app, ["score", "srbench2021", "--from-csv", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["profile"] == "reference"
    fronts = {r["method"]: r["pareto_front"] for r in data["tables"]["leaderboard"]}
    # two methods, each best on one objective: both on one front; with fewer than 6 fronts the
    # published loop leaves every method on its last level, and srtui says so
    assert fronts == {"*Operon": 5, "Linear": 5}
    assert "profile=corrected" in " ".join(data["notes"])


def test_list_shows_both_profiles():
    res = CliRunner().invoke(app, ["score", "--list"])
    assert res.exit_code == 0
    assert res.output.count("profile=reference (reference|corrected)") == 6
    assert "reference (stage2_final_ratings.ipynb)" in res.output and "\n  corrected: " in res.output
