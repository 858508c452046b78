"""A halving fold's data file is named by the rows it holds, not by its size alone: the subsample
of a round depends on the draws before it (the search's schedule), so two methods of one run
whose schedules share a size (AdaBoost's 39, 117, 351 rows and RandomForest's 13, 39, 117 on
SRBench 2021's 556_analcatdata_apnea2) draw different rows of that size and must not share a file."""

from __future__ import annotations

import numpy as np

from srtui.engine.protocols import halving_folds
from srtui.runs.tuning import fold_fingerprint


def test_two_schedules_sharing_a_size_get_their_own_fold_files() -> None:
    seed, n_rows = 23654, 356
    first_round = halving_folds(n_rows, 5, seed, [39, 117, 351])[0]
    second_round = halving_folds(n_rows, 5, seed, [13, 39, 117])[1]
    for k in range(5):
        (a_train, a_valid), (b_train, b_valid) = first_round[k], second_round[k]
        assert len(a_train) == len(b_train) and not np.array_equal(a_train, b_train)
        fp_a = fold_fingerprint("data", "halving", 5, seed, k, 39, (a_train, a_valid))
        fp_b = fold_fingerprint("data", "halving", 5, seed, k, 39, (b_train, b_valid))
        assert fp_a != fp_b
        assert fp_a == fold_fingerprint("data", "halving", 5, seed, k, 39, (a_train.copy(), a_valid.copy()))
