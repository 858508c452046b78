"""Friedman / critical difference, Wilcoxon with Holm, metric sensitivity: hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from srtui.results.scoring import ScoreError, score
from srtui.results.scoring.tables import normalise


def ordered_runs(n_tasks: int, methods=("A", "B", "C")) -> pd.DataFrame:
    """A is always best, then B, then C, on every dataset."""
    rows = [
        dict(task=f"t{i}", method=m, r2_test=0.9 - 0.1 * k - 0.01 * i, size=10 * (k + 1))
        for i in range(n_tasks)
        for k, m in enumerate(methods)
    ]
    return normalise(pd.DataFrame(rows))


def test_friedman_average_ranks_and_critical_difference():
    s = score("friedman", ordered_runs(3))
    ranks = s.tables["average_ranks"].set_index("method")["average_rank"]
    assert ranks.to_dict() == {"A": 1.0, "B": 2.0, "C": 3.0}
    f = s.tables["friedman"].iloc[0]
    # chi2_F = 12N/(k(k+1)) * sum(R_j^2) - 3N(k+1) = 12*3/12 * 14 - 36 = 6
    assert f["statistic"] == pytest.approx(6.0)
    # Nemenyi CD: q_0.05(k=3) = 2.343 (Demsar 2006), sqrt(k(k+1)/(6N)) = sqrt(12/18)
    assert f["critical_difference"] == pytest.approx(2.343 * np.sqrt(12 / 18), abs=2e-3)
    assert set(s.tables) == {"average_ranks", "friedman", "conover_holm", "nemenyi"}


def test_friedman_needs_three_methods():
    with pytest.raises(ScoreError, match="at least 3 methods"):
        score("friedman", ordered_runs(3, methods=("A", "B")))


def test_wilcoxon_holm():
    s = score("wilcoxon", ordered_runs(6))
    pairs = s.tables["pairs"]
    # 6 datasets, every difference of the same sign: exact two-sided p = 2 / 2^6
    assert pairs["p_value"].tolist() == pytest.approx([2 / 64] * 3)
    # Holm with 3 equal p-values: 3p, max(3p, 2p), max(.., p) -> all 3p
    assert pairs["p_holm"].tolist() == pytest.approx([6 / 64] * 3)
    assert not pairs["significant"].any()


def test_sensitivity_kendall_tau():
    runs = ordered_runs(4)
    runs["size"] = runs["size"][::-1].to_numpy()  # now A has the largest models
    s = score("sensitivity", runs, metrics="r2_test,size")
    rk = s.tables["rankings"].set_index("method")
    assert rk["r2_test"].to_dict() == {"A": 3.0, "B": 2.0, "C": 1.0}
    assert rk["size"].to_dict() == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert s.tables["kendall_tau"].iloc[0]["tau"] == pytest.approx(-1.0)
