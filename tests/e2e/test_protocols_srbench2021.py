"""The srbench2021 protocol's gaps, closed: a method folder is tuned (its hyper_params read before
any of its code runs), a suite without seeds runs SRBench 2021's ten, linear is not tuned
(fit_intercept (True,)), the training cap draws as evaluate_model.py does and the halving
subsamples continue numpy's global stream after it, and a folder's folds are not scaled twice."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from srtui.engine.methods import registry
from srtui.engine.methods.srbench_dir import SRBenchMethod
from srtui.engine.methods.srbench_eval import OPTIONS_KEY
from srtui.engine.protocols import (
    capped_rows,
    configurations,
    get_protocol,
    halving_folds,
    kfold,
    train_test_split_rows,
)
from srtui.engine.scaling import SCALING_KEY
from srtui.engine.workspace import Workspace
from srtui.runs.options import RunRequest
from srtui.runs.planning import plan_run

SEEDS_2021 = [23654, 15795, 860, 5390, 29802, 21575, 11964, 11284, 22118, 6265]


def _plan(tmp_path: Path, folder: Path, protocol: str, seeds: str = ""):
    suite = tmp_path / "s.toml"
    suite.write_text(f'name = "s"\ntasks = ["smoke-linear"]\nmethods = ["dummy"]\n{seeds}\n')
    req = RunRequest(suite=str(suite), methods=[folder.name], method_dirs=[folder], protocol=protocol)
    return plan_run(Workspace(tmp_path / "ws"), req, write_data=False)


def test_a_method_folder_is_tuned_over_its_whole_grid_under_2021_and_four_under_2025(
    tmp_path: Path, srbench_folder
) -> None:
    folder = srbench_folder("sklearn_sgd")  # SRBench's SGDRegressor: 4 alphas x 3 penalties
    assert len(SRBenchMethod(folder).hyper_params) == 12  # read from regressor.py, which has not run
    plan = _plan(tmp_path, folder, "srbench2021")
    # no seeds in the suite: SRBench 2021's ten; 12 candidates x 5 folds each in the first iteration
    assert sorted({s.seed for s in plan.specs}) == sorted(SEEDS_2021) and len(plan.specs) == 10 * 12 * 5
    for spec in plan.specs:  # the protocol scales once, over the training set; the folder does not again
        assert spec.params[SCALING_KEY] == "xy" and spec.params[OPTIONS_KEY] == {"scaling": "none"}
    grid = _plan(tmp_path, folder, "srbench2025", "seeds = [1]")
    assert len(grid.specs) == (1 + 4) * 5  # SRBench 2.0: the defaults and at most 4 configurations


def test_a_folder_s_literal_eval_kwargs_choose_the_protocol_s_scaling(tmp_path: Path) -> None:
    folder = tmp_path / "noscale"
    folder.mkdir()
    (folder / "regressor.py").write_text(
        "from sklearn.linear_model import Ridge\nest = Ridge()\nmodel = None\n"
        "hyper_params = [{'alpha': (0.1, 1.0)}]\neval_kwargs = dict(scale_x=False, scale_y=True)\n"
        "raise SystemExit('the driver must not run this file')\n"
    )
    plan = _plan(tmp_path, folder, "srbench2021", "seeds = [1]")
    assert len(plan.specs) == 2 * 5
    assert all(s.params[SCALING_KEY] == "y" and s.params[OPTIONS_KEY] == {"scaling": "none"} for s in plan.specs)


def test_linear_is_not_tuned_as_in_srbench_s_linear_regression_folders() -> None:
    linear = registry.load("linear")
    assert configurations(linear.default_params, linear.hyper_params, {}) == [{}]
    sgd = registry.load("sgd")
    assert len(configurations(sgd.default_params, sgd.hyper_params, {})) == 13  # defaults + the grid (2.0)
    assert configurations(sgd.default_params, sgd.hyper_params, {}, with_defaults=False) == sgd.hyper_params  # 2021
    assert get_protocol("srbench2021").seeds == tuple(SEEDS_2021)


def test_the_training_cap_and_the_halving_subsamples_draw_from_numpy_s_global_stream_in_2021_s_order() -> None:
    seed, n_total = 860, 12_000
    train, _ = train_test_split_rows(n_total, 0.75, seed)
    rng = np.random.RandomState(seed)
    capped = capped_rows(len(train), n_total, 10_000, rng)
    resources = [2000, 6000]
    folds = halving_folds(10_000, 5, seed, resources, rng)
    # evaluate_model.py: np.random.seed(seed); ...; np.random.choice(np.arange(len(X_train)), size=10000);
    # then HalvingGridSearchCV(random_state=None) subsamples each fold from the same global generator
    np.random.seed(seed)
    expected = np.random.choice(np.arange(len(train)), size=10_000)
    assert capped is not None and np.array_equal(capped, expected) and len(set(capped.tolist())) < 10_000
    for it, n in enumerate(resources):
        for k, (tr, va) in enumerate(kfold(10_000, 5, seed)):
            for ours, rows in ((folds[it][k][0], tr), (folds[it][k][1], va)):
                order = np.arange(len(rows))
                np.random.shuffle(order)
                assert np.array_equal(ours, rows[order[: int(n / 10_000 * len(rows))]])
    assert capped_rows(len(train), 10_000, 10_000, rng) is None  # at most the cap: every row, once


def test_a_method_s_own_draws_from_the_global_generator_are_replayed_between_halving_iterations() -> None:
    """scikit-learn 0.24's SGDRegressor draws one randint per fit from numpy's global generator,
    which moves HalvingGridSearchCV's later subsamples: srtui's folds replay those draws."""
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, KFold

    seen: list[tuple[int, tuple[int, ...]]] = []

    class Drawing(RegressorMixin, BaseEstimator):
        def __init__(self, a: int = 0) -> None:
            self.a = a

        def fit(self, X: np.ndarray, y: np.ndarray) -> Drawing:
            np.random.randint(1, 2**31 - 1)  # as 0.24's make_dataset
            seen.append((self.a, tuple(int(v) for v in X[:, 0])))
            return self

        def predict(self, X: np.ndarray) -> np.ndarray:
            return X[:, 0] * (self.a + 1) / 1000.0

    seed, n = 29802, 300
    X = np.column_stack([np.arange(n), np.ones(n)]).astype(float)
    y = np.arange(n) / 100.0
    np.random.seed(seed)
    search = HalvingGridSearchCV(
        Drawing(), {"a": list(range(9))}, cv=KFold(5, shuffle=True, random_state=seed), scoring="r2", refit=False
    ).fit(X, y)
    draws = (("randint", (1, 2**31 - 1)),)
    ours = halving_folds(n, 5, seed, list(search.n_resources_), None, draws, 9)
    plain = halving_folds(n, 5, seed, list(search.n_resources_))
    per_fit = len(seen) // len(set(seen))  # (a, rows) pairs are unique
    assert per_fit == 1
    start = 0
    for it, n_cand in enumerate(search.n_candidates_):
        fits = seen[start : start + n_cand * 5]
        start += n_cand * 5
        rows = [rows for _, rows in fits[:5]]  # the first candidate's five folds, in order
        assert rows == [tuple(int(v) for v in tr) for tr, _ in ours[it]]
        if it > 0:
            assert rows != [tuple(int(v) for v in tr) for tr, _ in plain[it]]  # the replay matters
