"""srbench2021: halving grid search as iterations of jobs, checked against HalvingGridSearchCV;
scaling with the model mapped back to the task's units; tuning in `srtui results --tuning`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import srtui

from srtui.engine.protocols import (
    halving_best,
    halving_folds,
    halving_keep,
    halving_schedule,
    mean_scores,
    train_test_split_rows,
)


def _recorded_halving(n_rows: int, n_candidates: int, seed: int):
    """A real HalvingGridSearchCV run as SRBench 2021 configures it, with an estimator that
    records the rows it is fitted on; the global numpy seed set as evaluate_model.py sets it."""
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, KFold

    calls: list[tuple[int, np.ndarray]] = []

    class Recorder(BaseEstimator, RegressorMixin):
        def __init__(self, c: int = 0) -> None:
            self.c = c

        def fit(self, X, y):
            calls.append((self.c, X[:, 0].astype(int).copy()))
            return self

        def predict(self, X):
            return X[:, 1] + (self.c % 3) * 0.1 * np.sin(X[:, 0] * (self.c + 1))

    rng = np.random.RandomState(0)
    X = np.c_[np.arange(n_rows), rng.normal(size=n_rows)]
    y = X[:, 1] + 0.3 * rng.normal(size=n_rows)
    np.random.seed(seed)
    search = HalvingGridSearchCV(
        Recorder(),
        {"c": list(range(n_candidates))},
        scoring="r2",
        error_score=0.0,
        cv=KFold(5, shuffle=True, random_state=seed),
        refit=False,
    ).fit(X, y)
    return search, calls, X, y, Recorder


@pytest.mark.parametrize("n_rows,n_candidates,seed", [(101, 7, 3), (75, 4, 11), (300, 9, 2082), (40, 2, 5)])
def test_halving_iterations_are_halving_grid_search_cv_s(n_rows: int, n_candidates: int, seed: int) -> None:
    from sklearn.metrics import r2_score

    search, calls, X, y, Recorder = _recorded_halving(n_rows, n_candidates, seed)
    schedule = halving_schedule(n_candidates, n_rows, 5)
    assert schedule == list(search.n_resources_)
    folds = halving_folds(n_rows, 5, seed, schedule)
    candidates, call = list(range(n_candidates)), 0
    results = search.cv_results_
    for it in range(len(schedule)):
        theirs = results["param_c"][results["iter"] == it].tolist()
        assert theirs == candidates, (it, theirs, candidates)  # same candidates, in the same order
        scores = []
        for c in candidates:
            row = []
            for train, valid in folds[it]:
                assert calls[call][0] == c and np.array_equal(calls[call][1], train)  # same rows, same order
                call += 1
                row.append(r2_score(y[valid], Recorder(c).predict(X[valid])))
            scores.append(row)
        means = mean_scores(scores, 0.0)
        assert means == list(results["mean_test_score"][results["iter"] == it])
        if it == len(schedule) - 1:
            assert halving_best(candidates, means) == search.best_params_["c"]
        candidates = halving_keep(candidates, means)


def test_ties_failures_and_nan_follow_scikit_learn() -> None:
    assert halving_keep([0, 1, 2, 3], [0.5, 0.5, 0.1, 0.5]) == [1, 3]  # argsort order of the tie
    assert halving_keep([0, 1, 2], [float("nan"), 0.2, 0.1]) == [1]
    assert halving_best([4, 2], [0.3, 0.3]) == 4 and halving_best([4, 2], [float("nan")] * 2) == 4
    assert mean_scores([[None, 1.0]], 0.0) == [0.5]  # SRBench 2021's error_score=0.0
    assert np.isnan(mean_scores([[None, 1.0]], None)[0])


@pytest.mark.parametrize("n,seed", [(100, 1), (133, 2082), (7, 5)])
def test_the_2021_split_is_train_test_split_s(n: int, seed: int) -> None:
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(np.arange(n), train_size=0.75, test_size=0.25, random_state=seed)
    ours = train_test_split_rows(n, 0.75, seed)
    assert np.array_equal(ours[0], train) and np.array_equal(ours[1], test)


@pytest.mark.parametrize(
    "text,dialect",
    [
        ("add(mul(X0, 0.5), div(X1, -1.25))", "gplearn"),
        ("1.5 * X1 ^ 2 + sin(X2)", "pyoperon"),
        ("x0*x1 - 3", "python"),
        ("(X_0)(X_1) + |X_0|", "bingo"),
    ],
)
def test_a_scaled_model_is_mapped_back_on_the_parser_s_tree(text: str, dialect: str) -> None:
    from srtui.engine.expression import parse_expression
    from srtui.engine.expression.rescale import in_original_units

    X = np.random.default_rng(0).normal(3, 2, size=(50, 2))
    mu, sd = X.mean(0), X.std(0)
    mapped = in_original_units(text, ["x0", "x1"], dialect, (mu, sd), (2.0, -0.5))
    scaled = parse_expression(text, ["x0", "x1"], dialect).evaluate((X - mu) / sd) * -0.5 + 2.0
    np.testing.assert_allclose(parse_expression(mapped, ["x0", "x1"], dialect).evaluate(X), scaled, rtol=1e-12)
    assert "X0" not in mapped and "X_0" not in mapped  # over the task's feature names


RIDGE_GRID = [{"alphas": [10.0]}, {"alphas": [100.0]}, {"alphas": [1000.0]}]


def _suite(tmp_path: Path, name: str, methods: list[str], protocol: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    grid = ", ".join("{{ alphas = {} }}".format(json.dumps(g["alphas"])) for g in RIDGE_GRID)
    path.write_text(
        f'name = "{name}"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = {json.dumps(methods)}\n'
        f'seeds = [3]\nprotocol = "{protocol}"\n{extra}\n[tuning.grids]\nridge = [{grid}]\n'
    )
    return path


def _halving_reference(method: str, X: np.ndarray, y: np.ndarray, seed: int):
    """SRBench 2021's search for a sklearn baseline: X and y standardised over the whole training
    set, then HalvingGridSearchCV as evaluate_model.py builds it, after np.random.seed(seed)."""
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.linear_model import LinearRegression, RidgeCV
    from sklearn.model_selection import HalvingGridSearchCV, KFold
    from sklearn.preprocessing import StandardScaler

    Xs = StandardScaler().fit_transform(X)
    ys = StandardScaler().fit_transform(y.reshape(-1, 1)).ravel()
    grid: list[dict[str, list[Any]]]
    if method == "linear":  # SRBench 2021's LinearRegression.py: fit_intercept (True,)
        est, grid = LinearRegression(), [{"fit_intercept": [True]}]
    else:
        # 2021 searches the grid only (HalvingGridSearchCV(est, param_grid=hyper_params)): no defaults
        est, grid = RidgeCV(), [{"alphas": [g["alphas"]]} for g in RIDGE_GRID]
    np.random.seed(seed)
    return HalvingGridSearchCV(
        est, grid, cv=KFold(5, shuffle=True, random_state=seed), scoring="r2", error_score=0.0, refit=False
    ).fit(Xs, ys)


@pytest.mark.slow
def test_a_2021_run_makes_halving_grid_search_cv_s_choices(workspace: Path, tmp_path: Path) -> None:
    suite = _suite(tmp_path, "h21", ["linear", "ridge"], "srbench2021")
    srtui("run", str(suite), "--jobs", "2", "--workspace", str(workspace), check=True)
    out = srtui("results", "--format", "json", "--tuning", "--workspace", str(workspace), check=True)
    rows = json.loads(out.stdout)
    finals = [r for r in rows if r["suite"] == "h21"]
    assert len(finals) == 4 and all(r["status"] == "ok" for r in finals)
    # ridge: 3 candidates on 50 rows, then 1 on 150; linear: one candidate, nothing to tune
    assert sum(r["suite"] == "h21@tuning" for r in rows) == 2 * (3 * 5 + 1 * 5)
    for final in finals:
        with np.load(workspace / "cache" / "data" / f"{final['data_fingerprint']}.npz") as z:
            n = len(z["y_train"]) + len(z["y_test"])
            assert len(z["y_test"]) == -(-n // 4) and len(z["y_train"]) == n * 3 // 4  # 75/25 per seed
            search = _halving_reference(final["method"], z["X_train"], z["y_train"], 3)
        assert final["params"].pop("srtui_scaling") == "xy"  # 2021's evaluate_model scales X and y
        if final["method"] == "linear":  # one candidate: HalvingGridSearchCV's refit is the plain fit
            assert not final.get("tuning") and final["params"] == {} and len(search.n_resources_) == 1
            continue
        summary = final["tuning"]
        assert [it["rows"] for it in summary["iterations"]] == list(search.n_resources_)
        defaults = {"fit_intercept": True} if final["method"] == "linear" else {"alphas": [0.1, 1.0, 10.0]}

        def key(params: dict) -> str:
            full = {**defaults, **{k: v for k, v in params.items() if k != "srtui_scaling"}}  # noqa: B023 - called inside this iteration only
            return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in full.items()}, sort_keys=True)

        res = search.cv_results_

        def at(i: int) -> dict[str, float]:
            where = np.flatnonzero(res["iter"] == i)  # noqa: B023 - called inside this iteration only
            return {key(res["params"][j]): float(res["mean_test_score"][j]) for j in where}  # noqa: B023 - called inside this iteration only

        for i, it in enumerate(summary["iterations"]):
            theirs = at(i)
            ours = {key(c["params"]): c["mean_r2"] for c in it["candidates"]}
            assert set(ours) == set(theirs)  # the same candidates kept
            for k in ours:
                assert ours[k] == pytest.approx(theirs[k], rel=1e-9, abs=1e-12)
        last = at(int(res["iter"].max()))
        chosen, best = key(final["params"]), key(search.best_params_)
        # the same choice; on a tie within float noise (a noiseless task), one of the tied best
        assert chosen == best or abs(last[chosen] - last[best]) < 1e-9, (chosen, best, last)
        assert final["model"] and final["fidelity_r2"] > 0.999  # the model mapped back to the raw units
        assert final["method_notes"]["model_as_printed"] != final["model"]
    csv = srtui("results", "--tuning", "--suite", "h21", "--workspace", str(workspace), check=True).stdout
    assert "srbench2021 halving: chosen" in csv and "iteration 2 (150 rows)" in csv


def test_the_driver_s_standard_scaler_is_scikit_learn_s_bit_for_bit() -> None:
    from sklearn.preprocessing import StandardScaler

    from srtui.engine.scaling import standard_scaler

    rng = np.random.default_rng(0)
    for i in range(200):
        n, d = int(rng.integers(2, 300)), int(rng.integers(1, 5))
        A = rng.normal(rng.uniform(-1e3, 1e3), rng.uniform(1e-3, 1e3), size=(n, d))
        if i % 5 == 0:
            A[:, 0] = 3.7  # a constant column: scale 1
        if i % 7 == 0:
            A = np.round(A)
        theirs = StandardScaler().fit(A)
        mean, scale = standard_scaler(A)
        assert np.array_equal(mean, theirs.mean_) and np.array_equal(scale, theirs.scale_), i
