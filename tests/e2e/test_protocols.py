"""Protocols: tuning expanded into configuration x fold jobs, final jobs chosen from their scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import poll_db, results_json, srtui, start_srtui

from srtui.engine.protocols import ProtocolError, best_configuration, get_protocol, kfold


@pytest.mark.parametrize("n_rows,n_splits,seed", [(15, 5, 1), (101, 5, 2082), (10, 3, 0)])
def test_folds_are_scikit_learn_s_shuffled_kfold(n_rows, n_splits, seed) -> None:
    from sklearn.model_selection import KFold

    theirs = list(KFold(n_splits, shuffle=True, random_state=seed).split(np.zeros((n_rows, 1))))
    ours = kfold(n_rows, n_splits, seed)
    assert len(ours) == len(theirs)
    for (a_train, a_valid), (b_train, b_valid) in zip(ours, theirs):
        assert np.array_equal(a_train, b_train) and np.array_equal(a_valid, b_valid)


def test_choice_is_grid_search_cv_s_including_ties_and_failures() -> None:
    assert best_configuration([[0.5, 0.7], [0.6, 0.6], [0.1, 0.2]])[0] == 0  # tie: the first
    assert best_configuration([[None, 0.9], [0.2, 0.3]])[0] == 1  # a failed fold ranks last
    assert best_configuration([[None], [None]])[0] == 0
    with pytest.raises(ProtocolError, match="unknown protocol"):
        get_protocol("nope")


def _grid_search(method: str, X, y, seed: int):
    """GridSearchCV as SRBench 2.0 runs it: X and y standardised once, before the folds."""
    from sklearn.linear_model import LinearRegression, RidgeCV
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.preprocessing import StandardScaler

    X = StandardScaler().fit_transform(X)
    y = StandardScaler().fit_transform(y.reshape(-1, 1)).ravel()

    grid: list[dict[str, list[Any]]]
    if method == "linear":  # SRBench's LinearRegression folder: fit_intercept (True,), one candidate
        est, grid = LinearRegression(), [{"fit_intercept": [True]}]
    else:
        est, grid = RidgeCV(), [{"alphas": [(0.1, 1.0, 10.0)]}, {"alphas": [(1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)]}]
    return GridSearchCV(est, grid, scoring="r2", cv=KFold(5, shuffle=True, random_state=seed)).fit(X, y)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_tuned_run_has_one_final_job_with_grid_search_cv_s_choice(workspace: Path, suite_file) -> None:
    suite = suite_file(
        name="tuned", tasks=("smoke-linear", "smoke-interaction"), methods=("linear", "ridge"), seeds=(7,)
    )
    srtui("run", str(suite), "--protocol", "srbench2025", "--jobs", "2", "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    finals = [r for r in rows if r["suite"] == "tuned"]
    tuning = [r for r in rows if r["suite"] == "tuned@tuning"]
    assert len(finals) == 4 and all(r["status"] == "ok" for r in finals)
    assert len({(r["task"], r["method"], r["seed"]) for r in finals}) == 4
    # ridge: 2 configurations x 5 folds per task; linear has one configuration: nothing to tune
    assert len(tuning) == 2 * 2 * 5 and all(r["status"] == "ok" and r["method"] == "ridge" for r in tuning)
    for final in finals:
        with np.load(workspace / "cache" / "data" / f"{final['data_fingerprint']}.npz") as z:
            search = _grid_search(final["method"], z["X_train"], z["y_train"], final["seed"])
        mine = [r for r in tuning if r["task"] == final["task"] and r["method"] == final["method"]]
        if final["method"] == "linear":
            assert (
                not mine
                and final["params"] == {"srtui_scaling": "xy"}
                and search.best_params_ == {"fit_intercept": True}
            )
            continue
        by_params: dict[str, list[float]] = {}
        for r in mine:
            by_params.setdefault(json.dumps(r["params"], sort_keys=True), []).append(r["r2_test"])
        chosen = search.best_params_
        expected = {k: list(v) if isinstance(v, tuple) else v for k, v in chosen.items()}
        defaults = {"fit_intercept": True} if final["method"] == "linear" else {"alphas": [0.1, 1.0, 10.0]}
        chosen_params = {k: v for k, v in final["params"].items() if k != "srtui_scaling"}
        assert {**defaults, **chosen_params} == expected, (final["params"], chosen)
        # the tuning jobs' mean validation R2 are scikit-learn's mean_test_score, configuration by configuration
        means = sorted(float(np.mean(v)) for v in by_params.values())
        assert means == pytest.approx(sorted(search.cv_results_["mean_test_score"]), rel=1e-9, abs=1e-12)
    again = srtui("run", str(suite), "--protocol", "srbench2025", "--workspace", str(workspace), check=True)
    assert "24 already done" in again.stderr, again.stderr


def test_protocol_from_the_suite_file_and_bad_names_on_the_command_line(workspace: Path, tmp_path: Path) -> None:
    suite = tmp_path / "p.toml"
    suite.write_text(
        'name = "p"\ntasks = ["smoke-linear"]\nmethods = ["ridge", "probe-noop"]\nseeds = [1, 2]\n'
        'protocol = "srbench2025"\n'
    )
    dry = srtui("run", str(suite), "--dry-run", "--workspace", str(workspace), check=True)
    # ridge: 2 configurations x 5 folds per seed, then its final fit; probe-noop has no grid: its
    # one job as it is. The run runs 24 (its "24 already done" above): the finals are counted too
    assert "suite p: 24 jobs, 24 to run, 0 already done (2 of them planned as tuning goes" in dry.stdout, dry.stdout
    assert "  ridge          22 job(s);" in dry.stdout, dry.stdout
    plain = srtui("run", str(suite), "--dry-run", "--protocol", "none", "--workspace", str(workspace), check=True)
    assert "suite p: 4 jobs" in plain.stdout
    for bad, why in (("nope", "unknown protocol"),):
        out = srtui("run", str(suite), "--protocol", bad, "--workspace", str(workspace))
        assert out.returncode != 0 and why in out.stderr and len(out.stderr.strip().splitlines()) == 1
    suite.write_text(suite.read_text().replace('"srbench2025"', "3"))
    out = srtui("run", str(suite), "--dry-run", "--workspace", str(workspace))
    assert out.returncode != 0 and "'protocol' must be a name" in out.stderr


@pytest.mark.slow
def test_a_driver_killed_mid_tuning_resumes_to_the_same_choice(workspace: Path, suite_file) -> None:
    import signal
    import time

    from srtui.engine.protocols import best_configuration

    suite = suite_file(name="killed", methods=("ridge",), seeds=(1, 2))
    driver = start_srtui("run", str(suite), "--protocol", "srbench2025", "--jobs", "2", "--workspace", str(workspace))
    done, deadline = 0, time.monotonic() + 120
    while done < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
        counted = poll_db(workspace, "SELECT count(*) FROM jobs WHERE status = 'ok'")
        done = counted[0][0] if counted else done
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    assert 4 <= done < 20, "the tuning ended before the driver could be killed"
    srtui("run", str(suite), "--protocol", "srbench2025", "--jobs", "2", "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    finals = [r for r in rows if r["suite"] == "killed"]
    tuning = [r for r in rows if r["suite"] == "killed@tuning"]
    assert len(finals) == 2 and len(tuning) == 20 and all(r["status"] == "ok" for r in rows)
    # srbench2025 scales X and y (#40): every job of the run, tuning or final, carries its scaling
    grid = [{"srtui_scaling": "xy"}, {"alphas": [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0], "srtui_scaling": "xy"}]
    for final in finals:
        scores = [
            [r["r2_test"] for r in tuning if r["seed"] == final["seed"] and r["params"] == params] for params in grid
        ]
        assert all(len(row) == 5 for row in scores), [r["params"] for r in tuning]
        assert final["params"] == grid[best_configuration(scores)[0]]
