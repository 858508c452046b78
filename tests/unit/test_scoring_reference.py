"""The reference profiles (the published notebooks' code) against tables worked out by hand:
ties, a missing run, a failed run, a method failing a whole dataset, a 0 rank in a harmonic mean.

Each was also run side by side with the notebooks' cells (stage0/1/2 of the 2022 competition,
the 2021 black-box notebook, the 2.0 performance-profile notebook) on simulated tables."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from srtui.results.scoring import ScoreError, load_expert_scores, score
from srtui.results.scoring.rules.srbench2021 import published_fronts
from srtui.results.scoring.tables import normalise


def frame(rows, **defaults):
    return normalise(pd.DataFrame([{**defaults, **r} for r in rows]))


def hm(*ranks):
    return 0.0 if 0 in ranks else len(ranks) / sum(1 / r for r in ranks)


def test_qualification_reference_rounds_ranks_per_trial_and_fills_missing_with_worst():
    rows = []
    for task, seed, vals in (
        ("A", 0, dict(LR=0.5, good=0.9, tie=0.50001)),  # gone: no run
        ("A", 1, dict(LR=0.5, good=0.8, tie=0.5, gone=0.1)),
        ("B", 0, dict(LR=0.6, good=0.7, tie=0.6)),  # gone: failed below
        ("B", 1, dict(LR=0.6, tie=0.6, gone=0.2)),
    ):  # good: no run
        rows += [dict(task=task, seed=seed, method=m, r2_test=v) for m, v in vals.items()]
    rows.append(dict(task="B", seed=0, method="gone", r2_test=0.99, status="error"))
    runs = frame(rows)
    s = score("srbench2022-qualification", runs, baseline="LR")
    # per-trial ranks (1 = best, ties averaged, R2 to 3 decimals; tie = LR on every trial):
    # A0 good 1, LR tie 2.5; A1 good 1, LR tie 2.5, gone 4; B0 as A0; B1 LR tie 1.5, gone 3.
    # worst rank seen = 4, so a missing/failed run ranks 5.
    # good - LR: A -1.5, -1.5 -> -1.5; B -1.5, 5 - 1.5 -> median 1.0; mean -0.25 -> qualifies
    # gone - LR: A 2.5, 1.5 -> 2; B 2.5, 1.5 -> 2; mean 2
    board = s.main.set_index("method")
    assert board["mean_rank_diff"].to_dict() == pytest.approx({"good": -0.25, "LR": 0.0, "tie": 0.0, "gone": 2.0})
    assert board["qualified"].to_dict() == {"good": "yes", "LR": "baseline", "tie": "no", "gone": "no"}
    # stage0.ipynb ranks a missing run as a failure; the columns keep the two apart, a note says so
    assert board.loc["gone", "failed_runs"] == 1 and board.loc["good", "failed_runs"] == 0
    assert board.loc["gone", "missing"] == 1 and board.loc["good", "missing"] == 1
    assert "stage0.ipynb ranks a run without a result as a failure" in s.notes[0]
    per = s.tables["per_task"].set_index(["task", "method"])
    assert per.loc[("B", "good"), "median_rank"] == pytest.approx(3.0)  # median(1, 5)
    # corrected: 0.50001 beats LR unrounded and the tie qualifies
    corr = score("srbench2022-qualification", runs, baseline="LR", profile="corrected").main.set_index("method")
    assert corr.loc["tie", "qualified"] == "yes"


def test_qualification_without_a_baseline_names_the_option():
    runs = frame([dict(task="A", method="x", r2_test=0.5), dict(task="A", method="y", r2_test=0.6)])
    with pytest.raises(ScoreError, match=r"-o baseline=NAME \(methods: x, y\)"):
        score("srbench2022-qualification", runs)


def synthetic_runs():
    rows = [
        # T1 exact rediscovery: a and b tie at 3 decimals; b's second run failed (dropped)
        dict(task="T1", method="a", seed=0, r2_test=0.9991, simplicity=-1.0, symbolic_solution=1),
        dict(task="T1", method="a", seed=1, r2_test=0.9993, simplicity=-1.0, symbolic_solution=0),
        dict(task="T1", method="b", seed=0, r2_test=0.9994, simplicity=-2.0, symbolic_solution=1),
        dict(task="T1", method="b", seed=1, r2_test=0.99, simplicity=-1.0, symbolic_solution=1, status="error"),
        dict(task="T1", method="c", seed=0, r2_test=0.5, simplicity=-3.0, symbolic_solution=0),
        dict(task="T1", method="c", seed=1, r2_test=0.7, simplicity=-3.0, symbolic_solution=0),
        # T2 noise: a has no run for seed 1; c failed the whole dataset
        dict(task="T2", method="a", seed=0, r2_test=0.8, simplicity=-2.0, noise_robustness=0.9),
        dict(task="T2", method="b", seed=0, r2_test=0.8004, simplicity=-2.0, noise_robustness=0.95),
        dict(task="T2", method="b", seed=1, r2_test=0.8004, simplicity=-2.0, noise_robustness=0.95),
        dict(task="T2", method="c", seed=0, r2_test=np.nan, simplicity=np.nan, status="timeout"),
        dict(task="T2", method="c", seed=1, r2_test=np.nan, simplicity=np.nan, status="timeout"),
    ]
    df = frame(rows)
    df["property"] = df["task"].map({"T1": "exact_rediscovery", "T2": "noise_robustness"})
    return df


def test_synthetic_reference_hand_computed():
    s = score("srbench2022-synthetic", synthetic_runs())
    per = s.tables["per_task"].set_index(["task", "method"])
    cols = ["rank_accuracy", "rank_simplicity", "rank_property"]
    # n = 3 methods; rank = 3 - dense rank (descending). T1 means: a (0.999, -1, 0.5),
    # b (0.999, -2, 1), c (0.6, -3, 0)
    assert list(per.loc[("T1", "a"), cols]) == [2, 2, 1]
    assert list(per.loc[("T1", "b"), cols]) == [2, 1, 2]
    assert list(per.loc[("T1", "c"), cols]) == [1, 0, 0]
    # T2: the property is plain (unrounded) R2: a 0.8 < b 0.8004, while accuracy ties at 0.8
    assert list(per.loc[("T2", "a"), cols]) == [2, 2, 1]
    assert list(per.loc[("T2", "b"), cols]) == [2, 2, 2]
    assert ("T2", "c") not in per.index
    assert per.loc[("T1", "c"), "score"] == 0.0  # a 0 rank inside the harmonic mean
    board = s.main.set_index("method")
    assert board["score"].to_dict() == pytest.approx(
        {"a": (hm(2, 2, 1) + hm(2, 2, 1)) / 2, "b": (hm(2, 1, 2) + hm(2, 2, 2)) / 2, "c": 0.0}
    )
    assert board["datasets"].to_dict() == {"a": 2, "b": 2, "c": 1}  # c is averaged over T1 only


def test_synthetic_corrected_hand_computed():
    s = score("srbench2022-synthetic", synthetic_runs(), profile="corrected")
    per = s.tables["per_task"].set_index(["task", "method"])
    cols = ["rank_accuracy", "rank_simplicity", "rank_property"]
    # medians with failures as -inf: T1 b fails (median of 0.999 and -inf); dense ranks 1..
    assert list(per.loc[("T1", "a"), cols]) == [3, 3, 3]
    assert list(per.loc[("T1", "b"), cols]) == [1, 1, 1]
    assert list(per.loc[("T1", "c"), cols]) == [2, 2, 2]
    # T2: a's seed 1 was never attempted: left out (a's median is its one run), c failed every run;
    # accuracy a 0.8 = b 0.8 at 3 decimals; property (noise robustness) a 0.9 < b 0.95
    assert list(per.loc[("T2", "a"), cols]) == [2, 2, 2]
    assert list(per.loc[("T2", "b"), cols]) == [2, 2, 3]
    assert list(per.loc[("T2", "c"), cols]) == [1, 1, 1]
    board = s.main.set_index("method")
    assert board["score"].to_dict() == pytest.approx({"a": 2.5, "b": (1 + hm(2, 2, 3)) / 2, "c": 1.5})
    assert board["failed_runs"].to_dict() == {"a": 0, "b": 1, "c": 2}
    assert board["missing"].to_dict() == {"a": 1, "b": 0, "c": 0}


def test_synthetic_reference_missing_rank_counts_as_the_number_of_methods():
    runs = frame(
        [
            dict(task="F", method="x", r2_test=0.9, simplicity=-1.0, feature_absence=np.nan),
            dict(task="F", method="y", r2_test=0.8, simplicity=-2.0, feature_absence=0.5),
        ],
        seed=0,
        property="feature_absence",
    )
    per = score("srbench2022-synthetic", runs).tables["per_task"].set_index("method")
    # x: ranks 1, 1 and a NaN property rank, which nanhmean turns into 2 (the number of methods)
    assert per.loc["x", "score"] == pytest.approx(hm(1, 1, 2)) and per.loc["y", "score"] == 0.0


def _expert_file() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    path = base / "srbench2022" / "expert_scores.json"
    return path if path.is_file() else None


R2 = dict(
    operon=0.95,
    QLattice=0.9,
    uDSR=0.9004,
    Bingo=0.85,
    **{"PS-Tree": 0.8},
    geneticengine=0.75,
    pysr=0.7,
    E2ET=0.6,
    LassoCV=0.5,
    eql=0.99,
)
SIMPLICITY = dict(
    LassoCV=-1.0,
    operon=-1.2,
    pysr=-1.4,
    QLattice=-1.6,
    Bingo=-1.8,
    uDSR=-2.0,
    geneticengine=-2.2,
    **{"PS-Tree": -2.4},
    E2ET=-2.6,
    eql=-0.5,
)
# hand-worked ranks (n = 9 rated methods; eql has no rating and drops out): rank = 9 - dense rank.
# R2 to 3 decimals: uDSR ties QLattice at 0.9. Simplicity: 9 distinct values, E2ET gets 0.
R2_RANK = dict(operon=8, QLattice=7, uDSR=7, Bingo=6, **{"PS-Tree": 5}, geneticengine=4, pysr=3, E2ET=2, LassoCV=1)
SIMP_RANK = dict(LassoCV=8, operon=7, pysr=6, QLattice=5, Bingo=4, uDSR=3, geneticengine=2, **{"PS-Tree": 1}, E2ET=0)
TRUST_RANK = {  # from the ratings 1..5 of expert_scores.json: 5 -> 8, 4 -> 7, 3 -> 6, 2 -> 5, 1 -> 4
    "cases": dict(operon=8, QLattice=7, uDSR=7, Bingo=6, **{"PS-Tree": 6}, geneticengine=6, pysr=6, E2ET=5, LassoCV=4),
    "hosp": dict(QLattice=8, geneticengine=8, uDSR=8, Bingo=7, operon=7, pysr=7, **{"PS-Tree": 6}, E2ET=5, LassoCV=4),
    "deaths": dict(QLattice=8, Bingo=7, geneticengine=7, operon=7, uDSR=7, **{"PS-Tree": 6}, pysr=6, E2ET=5, LassoCV=4),
}


@pytest.mark.skipif(_expert_file() is None, reason="shared data srbench2022/expert_scores.json not found")
def test_realworld_reference_step_by_step_with_the_competition_ratings():
    path = _expert_file()
    assert path is not None  # the skipif above
    trust = load_expert_scores(path)
    rows = [
        dict(task=f"srbench2022-realworld-{t}", method=m, seed=0, r2_test=R2[m], simplicity=SIMPLICITY[m])
        for t in TRUST_RANK
        for m in R2
        if not (t == "cases" and m == "operon")
    ]
    # operon on cases: three runs, median 0.95 -> the representative is seed 1 (not the best, seed 2)
    rows += [
        dict(task="srbench2022-realworld-cases", method="operon", seed=s, r2_test=v, simplicity=c)
        for s, v, c in ((0, 0.2, -3.0), (1, 0.95, -1.2), (2, 0.99, -0.5))
    ]
    # a failed pysr run on cases with a high R2 is dropped (no result file)
    rows.append(
        dict(task="srbench2022-realworld-cases", method="pysr", seed=1, r2_test=0.999, simplicity=-0.1, status="error")
    )
    s = score("srbench2022-realworld", frame(rows), trust=trust)
    per = s.tables["per_task"].set_index(["task", "method"])
    assert set(per.index.get_level_values("method")) == set(R2_RANK)  # eql is not rated
    assert per.loc[("cases", "operon"), "seed"] == 1
    expected: dict[str, list[float]] = {}
    for task, trust_rank in TRUST_RANK.items():
        for m in R2_RANK:
            got = list(per.loc[(task, m), ["rank_r2", "rank_simplicity", "rank_trust"]])
            assert got == [R2_RANK[m], SIMP_RANK[m], trust_rank[m]], (task, m)
            want = hm(R2_RANK[m], SIMP_RANK[m], trust_rank[m])
            assert per.loc[(task, m), "score"] == pytest.approx(want), (task, m)
            expected.setdefault(m, []).append(want)
    board = s.main.set_index("method")["score"]
    assert board.to_dict() == pytest.approx({m: float(np.mean(v)) for m, v in expected.items()})
    assert board["E2ET"] == 0.0 and board.index[0] == "operon"
    # corrected: dense ranks 1.. with eql ranked too (its missing rating ranks worst)
    corr = score("srbench2022-realworld", frame(rows), trust=trust, profile="corrected").tables["per_task"]
    assert "eql" in set(corr["method"]) and corr["rank_r2"].min() == 1


def test_published_fronts_follow_the_notebook_loop():
    # a chain of 7 fronts (minimised): the 7th gets -1 (only 6 levels are drawn)
    chain = np.array([[i, i] for i in range(7)], float)
    assert published_fronts(chain).tolist() == [0, 1, 2, 3, 4, 5, -1]
    # fewer fronts than levels: once all are placed, every point is on the next level's front
    few = np.array([[1, 2], [2, 1], [3, 3]], float)
    assert published_fronts(few).tolist() == [5, 5, 5]


def test_srbench2021_reference_median_ranks_hand_computed():
    runs = frame(
        [
            dict(task="A", method="p", seed=0, r2_test=0.9, size=10),
            dict(task="A", method="p", seed=1, r2_test=0.7, size=30),
            dict(task="A", method="q", seed=0, r2_test=0.8, size=20),
            dict(task="A", method="r", seed=0, r2_test=0.8001, size=5),
            dict(task="B", method="p", seed=0, r2_test=0.5, size=7),
            dict(task="B", method="q", seed=0, r2_test=0.6, size=7),
            dict(task="B", method="r", seed=0, r2_test=0.99, size=50, status="error"),
        ]
    )
    b = score("srbench2021", runs).main.set_index("method")
    # A medians: p (0.8, 20), q (0.8, 20), r (0.8, 5): R2 ties at 3 decimals -> 2, 2, 2; size p q 2.5, r 1
    # B (r failed, no row): R2 q 1, p 2; size tie 1.5, 1.5
    assert b["median_rank_r2"].to_dict() == {"p": 2.0, "q": 1.5, "r": 2.0}
    assert b["median_rank_size"].to_dict() == {"p": 2.0, "q": 2.0, "r": 1.0}
    # r: no seed-1 run on A (p has one) and a failed run on B; it is ranked on A only
    assert b.loc["r", "failed_runs"] == 1 and b.loc["q", "failed_runs"] == 0 and b.loc["r", "datasets"] == 1
    assert b.loc["r", "missing"] == 1 and b.loc["q", "missing"] == 1  # never attempted: no failures


def test_srbench2021_front_0_is_the_non_dominated_set_on_a_blackbox_shaped_table():
    rng = np.random.default_rng(7)
    methods = [f"m{i:02d}" for i in range(21)]
    skill, size = rng.normal(0, 1, 21), rng.lognormal(3, 1, 21)
    rows = [
        dict(
            task=f"d{d}",
            method=m,
            r2_test=float(np.clip(0.7 + 0.1 * skill[i] + rng.normal(0, 0.1), -1, 1)),
            size=float(np.round(size[i] * rng.lognormal(0, 0.3))),
        )
        for d in range(120)
        for i, m in enumerate(methods)
    ]
    b = score("srbench2021", frame(rows, seed=0)).main.set_index("method")
    pts = b[["median_rank_r2", "median_rank_size"]].to_numpy()
    non_dominated = {m for m, p in zip(b.index, pts) if not any(np.all(q <= p) and np.any(q < p) for q in pts)}
    assert set(b.index[b["pareto_front"] == 0]) == non_dominated
    assert b["pareto_front"].max() >= 1


def test_srbench2025_reference_interpolated_profiles_hand_computed():
    runs = frame(
        [
            dict(task="d1", method="m", seed=0, r2_test=0.5),
            dict(task="d2", method="m", seed=0, r2_test=1.0),
            dict(task="d1", method="m", seed=1, r2_test=0.6),
            dict(task="d2", method="m", seed=1, r2_test=-0.3),
            dict(task="d1", method="m", seed=2, r2_test=1.0),
            dict(task="d2", method="m", seed=2, r2_test=1.0),
        ]
    )
    s = score("srbench2025", runs)
    # seed 0: points (0, 1), (0.5, 1), (1, 0.5): area 0.5 + 0.375 = 0.875 (exact step area: 0.75)
    # seed 1: (0, 0.5), (0.6, 0.5), then flat: 0.5; seed 2: (0, 1), (1, 1): 1.0; median 0.875
    assert s.main.set_index("method").loc["m", "auc"] == pytest.approx(0.875)
    per = s.tables["auc_per_dataset"].set_index("task")["auc"]
    # over the 3 seeds: d1 (0, 1), (0.5, 1), (0.6, 2/3), (1, 1/3); d2 (0, 2/3), (1, 2/3)
    assert per["d1"] == pytest.approx(0.5 + 0.1 * (1 + 2 / 3) / 2 + 0.4 * (2 / 3 + 1 / 3) / 2)
    assert per["d2"] == pytest.approx(2 / 3)
    corr = score("srbench2025", runs, profile="corrected").main.set_index("method")
    assert corr.loc["m", "auc"] == pytest.approx(1.0)  # each dataset's best run, exact area


def test_rules_read_their_release_metric_columns():
    from srtui.results.metrics.profiles import Profile
    from srtui.results.scoring.base import metric_column

    runs = frame(
        [dict(task="t", method="a", r2_test=0.9, size=3), dict(task="t", method="b", r2_test=0.8, size=30)], seed=0
    )
    assert metric_column(runs, "srbench2021", "size", Profile.REFERENCE) == "size"  # a --from-csv file
    runs["srbench2021.size"] = [40.0, 2.0]
    runs["srbench2021.size:corrected"] = [1.0, np.nan]
    runs["srbench2022.symbolic_solution:corrected"] = np.nan  # present without a value: absent
    assert metric_column(runs, "srbench2021", "size", Profile.REFERENCE) == "srbench2021.size"
    assert metric_column(runs, "srbench2021", "size", Profile.CORRECTED) == "srbench2021.size:corrected"
    runs["symbolic_solution"] = 1
    assert metric_column(runs, "srbench2022", "symbolic_solution", Profile.CORRECTED) == "symbolic_solution"
    s = score("srbench2021", runs)
    assert s.options["size"] == "srbench2021.size"
    # by the 2021 size, b is the smaller model: rank 1 (best) on size
    assert s.main.set_index("method")["median_rank_size"].to_dict() == {"a": 2.0, "b": 1.0}
