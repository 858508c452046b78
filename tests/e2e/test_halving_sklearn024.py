"""srbench2021's halving search makes scikit-learn 0.24.1's choices (SRBench 2021's environment):
NaN fold scores (R2 of one validation row) make NaN means, ``_top_k`` keeps the tail of numpy
1.20's argsort (NaNs last, ties in introsort's order), the best is ``np.argmax`` (the first NaN).

Golden values: the all-NaN survivors of 64 candidates were measured with numpy 1.20-1.23 and
scikit-learn 0.24.1 (issue #41). The parametrised test runs the real HalvingGridSearchCV of
0.24.1 in the environment ``srtui methods install sgd-sklearn024`` builds (skipped, saying so,
when it is not built) on the training-row counts of the smallest shared PMLB datasets under 2021's split,
with the grid sizes of 2021's KernelRidge (64), RandomForest (27), MLP (27) and AdaBoost (12), on
one of 2021's seeds, and compares every iteration's candidates, in order, and the choice.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from srtui.engine import legacy_sort
from srtui.engine.protocols import (
    SKLEARN_0_24,
    fold_score,
    get_protocol,
    halving_best,
    halving_folds,
    halving_keep,
    halving_schedule,
    mean_scores,
)

NAN = math.nan
#: 0.24.1's survivors of 64 all-NaN means (numpy 1.20-1.23), in order; numpy 2.x keeps others
ALL_NAN_64 = [*range(10, 30), 62, 63]


def test_numpy_1_20_argsort_keeps_what_0_24_1_kept_of_64_nan_means() -> None:
    assert halving_keep(list(range(64)), [NAN] * 64, rule=SKLEARN_0_24) == ALL_NAN_64
    assert legacy_sort.argsort([0.5, 0.5, 0.1, 0.5]) == [2, 0, 1, 3]
    assert legacy_sort.argsort([]) == [] and legacy_sort.argsort([NAN]) == [0]


def test_0_24_1_ranks_a_nan_mean_best_and_today_s_last() -> None:
    assert halving_keep([0, 1, 2], [NAN, 0.2, 0.1], rule=SKLEARN_0_24) == [0]
    assert halving_keep([0, 1, 2], [NAN, 0.2, 0.1]) == [1]  # srbench2021-corrected: today's scikit-learn
    assert halving_best([7, 8, 9], [0.3, NAN, 0.5], SKLEARN_0_24) == 8  # np.argmax: the first NaN
    assert halving_best([7, 8, 9], [0.3, NAN, 0.5]) == 9
    assert math.isnan(mean_scores([[fold_score(True, None, 1, SKLEARN_0_24), 1.0]], 0.0)[0])
    assert mean_scores([[fold_score(True, None, 1), 1.0]], 0.0) == [0.5]  # counted as error_score
    assert fold_score(True, None, 5, SKLEARN_0_24) is None  # non-finite predictions: the scorer raised
    assert get_protocol("srbench2021").halving_rule == SKLEARN_0_24
    assert get_protocol("srbench2021-corrected").halving_rule != SKLEARN_0_24


#: run by the environment's interpreter: 0.24.1's HalvingGridSearchCV as evaluate_model.py sets it
#: up, on an estimator whose predictions tie in groups of candidates; prints every iteration's
#: candidates, fold scores, and the choice
GOLDEN = r"""
import json, sys
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.experimental import enable_halving_search_cv  # noqa
from sklearn.model_selection import HalvingGridSearchCV, KFold
import warnings
warnings.simplefilter("ignore")
n_rows, n_candidates, seed = map(int, sys.argv[1:4])

class Tied(BaseEstimator, RegressorMixin):
    def __init__(self, c=0):
        self.c = c
    def fit(self, X, y):
        return self
    def predict(self, X):
        return X[:, 1] + (self.c % 5) * 0.1 * np.sin(X[:, 0])

rng = np.random.RandomState(0)
X = np.c_[np.arange(n_rows), rng.normal(size=n_rows)]
y = X[:, 1] + 0.3 * rng.normal(size=n_rows)
np.random.seed(seed)
s = HalvingGridSearchCV(Tied(), {"c": list(range(n_candidates))}, cv=KFold(5, shuffle=True, random_state=seed),
                        scoring="r2", error_score=0.0).fit(X, y)
r = s.cv_results_
its, iters, cands = [], np.asarray(r["iter"]), np.asarray(r["param_c"])  # 0.24.1 keeps lists
for it in range(int(iters.max()) + 1):
    w = np.flatnonzero(iters == it)
    its.append({"candidates": [int(c) for c in cands[w]],
                "folds": [[float(r["split%d_test_score" % k][j]) for k in range(5)] for j in w]})
print(json.dumps({"iterations": its, "best": int(s.best_params_["c"]), "resources": list(map(int, s.n_resources_))}))
"""


def _sklearn_024() -> Path:
    from srtui.engine.methods import registry

    env = registry.load("sgd-sklearn024").environment  # scikit-learn 0.24.1's
    assert env is not None
    if not env.ready():
        pytest.skip(f"needs scikit-learn 0.24.1's environment at {env.folder} (srtui methods install sgd-sklearn024)")
    return env.python


#: training rows under 2021's 75/25 split of the smallest shared PMLB datasets (579_fri_c0_250_5:
#: 187, 556/557_analcatdata_apnea: 356, the 500-row fri_c*: 375, 666_rmftsa_ladata: 381, the
#: 1000-row fri_c*: 750), and the grid sizes of 2021's KernelRidge (64), RandomForest and MLP
#: (27), AdaBoost (12)
CASES = [(187, 64), (187, 27), (187, 12), (356, 27), (375, 64), (381, 64), (381, 27), (750, 64)]


@pytest.mark.parametrize("n_rows,n_candidates", CASES)
def test_halving_choices_are_scikit_learn_0_24_1_s(n_rows: int, n_candidates: int) -> None:
    python, seed = _sklearn_024(), 15795
    out = subprocess.run(
        [str(python), "-c", GOLDEN, str(n_rows), str(n_candidates), str(seed)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    theirs = json.loads(out.stdout)
    schedule = halving_schedule(n_candidates, n_rows, 5)
    assert schedule == theirs["resources"]
    folds = halving_folds(n_rows, 5, seed, schedule)
    candidates = list(range(n_candidates))
    for it, (cut, their) in enumerate(zip(folds, theirs["iterations"])):
        assert candidates == their["candidates"], it  # the same survivors, in the same order
        scores = [
            [
                fold_score(True, None if math.isnan(s) else s, len(valid), SKLEARN_0_24)
                for s, (_, valid) in zip(row, cut)
            ]
            for row in their["folds"]
        ]
        for row, their_row in zip(scores, their["folds"]):  # NaN exactly where a fold has one validation row
            assert [s is not None and math.isnan(s) for s in row] == [math.isnan(s) for s in their_row]
        means = mean_scores(scores, 0.0)
        if it == len(schedule) - 1:
            assert halving_best(candidates, means, SKLEARN_0_24) == theirs["best"]
        candidates = halving_keep(candidates, means, rule=SKLEARN_0_24)
    if (n_rows, n_candidates) == (187, 64):  # the all-NaN first iteration of 579_fri_c0_250_5
        assert all(math.isnan(s) for row in theirs["iterations"][0]["folds"] for s in row[2:])
        assert theirs["iterations"][1]["candidates"] == ALL_NAN_64


def test_numpy_argsort_of_the_environment_is_the_written_out_one() -> None:
    """Random float64 arrays with ties and NaNs, 0 to 300 long: the environment's numpy (1.23.5)
    argsorts each as srtui.engine.legacy_sort does."""
    python = _sklearn_024()
    rng = np.random.RandomState(41)
    arrays = []
    for n in [*range(40), 64, 100, 127, 300]:
        values = rng.choice([0.1, 0.2, 0.3, NAN, -1.0], size=n) if n % 2 else rng.normal(size=n).round(1)
        values[rng.rand(n) < 0.2] = NAN
        arrays.append([None if math.isnan(v) else float(v) for v in values])
    code = (
        "import json, sys, numpy as np; a = json.load(sys.stdin); "
        "print(json.dumps([np.argsort(np.array([np.nan if v is None else v for v in x], dtype=float)).tolist() "
        "for x in a]))"
    )
    out = subprocess.run(
        [str(python), "-c", code], input=json.dumps(arrays), capture_output=True, text=True, check=True
    )
    theirs = json.loads(out.stdout)
    for values, order in zip(arrays, theirs):
        assert legacy_sort.argsort([NAN if v is None else v for v in values]) == order, values


def test_results_tuning_says_nan_where_0_24_1_had_nan() -> None:
    from srtui.results.store.tuning import JobScore, summary_text
    from srtui.runs.tuning_search import _candidate

    nan_folds: list[float | None] = [0.5, 0.4, NAN, NAN, NAN]
    candidate = _candidate({"alpha": 1}, mean_scores([nan_folds], 0.0)[0], nan_folds, [JobScore("ok", 0.5)] * 5)
    assert candidate["mean_r2"] is None and candidate["mean_nan"] and candidate["nan_folds"] == [3, 4, 5]
    summary = {"protocol": "srbench2021", "search": "halving", "chosen": {"alpha": 1}}
    text = summary_text(summary | {"iterations": [{"rows": 10, "candidates": [candidate]}]})
    assert '{"alpha": 1} mean R2 nan (R2 nan on fold 3, 4, 5: one validation row)' in text
