"""The corrected profiles (srtui's conventions) against hand-computed ranks and scores: ties,
missing and failed runs. The reference profiles are in test_scoring_reference.py."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from srtui.results.scoring import ScoreError, load_expert_scores, score
from srtui.results.scoring.base import dense_rank
from srtui.results.scoring.rules.srbench2021 import pareto_ranks
from srtui.results.scoring.tables import normalise


def frame(rows, **defaults):
    return normalise(pd.DataFrame([{**defaults, **r} for r in rows]))


def test_dense_rank_ties_and_failures_rank_worst():
    s = pd.Series([0.9, 0.8, 0.9, np.nan, -np.inf])
    assert list(dense_rank(s)) == [3, 2, 3, 1, 1]
    assert list(dense_rank(pd.Series([5.0, 3.0, 3.0]), higher_better=False)) == [1, 2, 2]


def qual_runs():
    rows = []
    for m, a, b in (("linear", 0.5, 0.6), ("good", 0.9, None), ("bad", 0.4, 0.5)):
        rows.append(dict(task="A", method=m, r2_test=a))
        if b is not None:  # "good" has no run at all on B
            rows.append(dict(task="B", method=m, r2_test=b))
    # "great": three seeds on A, median 0.95; one seed on B
    rows += [dict(task="A", method="great", seed=s, r2_test=v) for s, v in ((0, 0.95), (1, 0.2), (2, 0.96))]
    rows.append(dict(task="B", method="great", r2_test=0.9))
    return frame(rows, seed=0)


def test_qualification_hand_computed():
    # runs never attempted are left out (great's seeds 1, 2 on A; good's B), counted as missing:
    # A: bad 0.4 -> 1, linear 0.5 -> 2, good 0.9 -> 3, great median 0.95 -> 4
    # B: bad 0.5 -> 1, linear 0.6 -> 2, great 0.9 -> 3 (good: no run, no rank)
    s = score("srbench2022-qualification", qual_runs(), profile="corrected")
    board = s.main.set_index("method")
    assert board["mean_rank"].to_dict() == {"great": 3.5, "good": 3.0, "linear": 2.0, "bad": 1.0}
    assert board["qualified"].to_dict() == {"great": "yes", "good": "yes", "linear": "baseline", "bad": "no"}
    assert board["failed_runs"].to_dict() == dict.fromkeys(board.index, 0)
    assert board["missing"].to_dict() == {"great": 0, "good": 3, "linear": 2, "bad": 2}
    assert s.notes[0].startswith("7 run(s) never attempted") and "not counted as failures" in s.notes[0]


def test_qualification_single_seed_and_mean_option():
    runs = qual_runs()
    runs = runs[runs["seed"] == 0]
    # A: bad 0.4 -> 1, linear 0.5 -> 2, good 0.9 -> 3, great 0.95 -> 4; B as above (good left out)
    board = score("srbench2022-qualification", runs, profile="corrected").main.set_index("method")
    assert board["mean_rank"].to_dict() == {"great": 3.5, "linear": 2.0, "good": 3.0, "bad": 1.0}
    assert board.loc["good", "qualified"] == "yes" and board.loc["good", "missing"] == 1
    with pytest.raises(ScoreError, match="-o baseline="):
        score("srbench2022-qualification", runs, baseline="LinearRegression", profile="corrected")
    with pytest.raises(ScoreError, match="must be one of"):
        score("srbench2022-qualification", runs, agg="max", profile="corrected")


def test_the_profile_option_is_a_profile_and_refuses_other_names():
    from srtui.results.metrics.profiles import Profile

    runs = qual_runs()
    for given, profile in (("corrected", Profile.CORRECTED), (Profile.REFERENCE, Profile.REFERENCE)):
        s = score("srbench2022-qualification", runs, profile=given)
        assert s.options["profile"] is profile and s.profile is profile
    assert score("srbench2022-qualification", runs).profile is Profile.REFERENCE  # the default
    with pytest.raises(ScoreError, match=r"option profile='fixed' .* must be one of reference, corrected"):
        score("srbench2022-qualification", runs, profile="fixed")
    assert Profile.CORRECTED.metric("size") == "size:corrected" and Profile.REFERENCE.metric("size") == "size"


def synth_runs():
    return frame(
        [
            # T1, exact rediscovery, easy: accuracy tie at 3 decimals (0.9991 vs 0.9994)
            dict(
                task="T1",
                method="m1",
                r2_test=0.9991,
                simplicity=-1.0,
                symbolic_solution=1,
                property="exact_rediscovery",
                difficulty="easy",
            ),
            dict(
                task="T1",
                method="m2",
                r2_test=0.9994,
                simplicity=-2.0,
                symbolic_solution=0,
                property="exact_rediscovery",
                difficulty="easy",
            ),
            # T2, feature absence, hard: m2's run failed
            dict(
                task="T2",
                method="m1",
                r2_test=0.5,
                simplicity=-1.5,
                feature_absence=0.5,
                property="feature_absence",
                difficulty="hard",
            ),
            dict(
                task="T2",
                method="m2",
                r2_test=0.99,
                simplicity=-0.5,
                feature_absence=1.0,
                property="feature_absence",
                difficulty="hard",
                status="error",
            ),
        ],
        seed=0,
    )


def test_synthetic_hand_computed():
    s = score("srbench2022-synthetic", synth_runs(), profile="corrected")
    per = s.tables["per_task"].set_index(["task", "method"])
    # T1: ranks acc (1, 1) tie; simplicity m1 2, m2 1; property m1 2, m2 1
    assert list(per.loc[("T1", "m1"), ["rank_accuracy", "rank_simplicity", "rank_property"]]) == [1, 2, 2]
    assert per.loc[("T1", "m1"), "score"] == pytest.approx(3 / (1 + 1 / 2 + 1 / 2))  # 1.5
    assert per.loc[("T1", "m2"), "score"] == pytest.approx(1.0)
    # T2: the failed m2 takes the worst rank everywhere: m1 2, 2, 2 -> 2; m2 1, 1, 1 -> 1
    assert per.loc[("T2", "m1"), "score"] == pytest.approx(2.0)
    assert per.loc[("T2", "m2"), "score"] == pytest.approx(1.0)
    board = s.main.set_index("method")
    assert board.loc["m1", "score"] == pytest.approx(1.75) and board.loc["m2", "score"] == pytest.approx(1.0)
    assert board.loc["m2", "failed_runs"] == 1
    diff = s.tables["per_difficulty"].set_index("method")
    assert diff.loc["m1", "easy"] == pytest.approx(1.5) and diff.loc["m1", "hard"] == pytest.approx(2.0)


def _expert_file() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    path = base / "srbench2022" / "expert_scores.json"
    return path if path.is_file() else None


@pytest.mark.skipif(_expert_file() is None, reason="shared data srbench2022/expert_scores.json not found")
def test_realworld_with_the_competition_expert_ratings():
    path = _expert_file()
    assert path is not None  # the skipif above
    trust = load_expert_scores(path)
    assert set(trust["task"]) == {"cases", "hosp", "deaths"} and len(trust) == 27
    # equal accuracy and simplicity: every method ranks 1 on both, so only trust separates them
    runs = frame(
        [
            dict(task=f"srbench2022-realworld-{t}", method=m, r2_test=0.8, simplicity=-1.5)
            for t in ("cases", "hosp", "deaths")
            for m in trust["method"].unique()
        ],
        seed=0,
    )
    board = score("srbench2022-realworld", runs, trust=trust, profile="corrected").main.set_index("method")
    # each task's ratings use all of 1..5, so the dense trust rank equals the rating:
    # operon 5, 4, 4 (cases, hosp, deaths); uDSR 4, 5, 4; LassoCV 1, 1, 1; score = hmean(1, 1, r)
    h = lambda r: 3 / (2 + 1 / r)  # noqa: E731
    assert board.loc["operon", "score"] == pytest.approx((h(5) + h(4) + h(4)) / 3)
    assert board.loc["uDSR", "score"] == pytest.approx((h(4) + h(5) + h(4)) / 3)
    assert board.loc["LassoCV", "score"] == pytest.approx(1.0)
    assert board.index[-1] == "LassoCV"


def test_realworld_representative_run():
    trust = pd.DataFrame({"task": ["t", "t"], "method": ["A", "B"], "trust": [3, 3]})
    runs = frame(
        [
            dict(task="t", method="A", seed=1, r2_test=0.1, simplicity=-3.0),
            dict(task="t", method="A", seed=2, r2_test=0.5, simplicity=-1.0),
            dict(task="t", method="A", seed=3, r2_test=0.9, simplicity=-2.0),
            dict(task="t", method="B", seed=1, r2_test=0.6, simplicity=-2.0),
        ]
    )
    # median: A's representative is seed 2 (0.5, -1.0); B's only run; seeds 2, 3 of B are missing
    # but the representative is chosen among B's runs that exist
    per = score("srbench2022-realworld", runs, trust=trust, profile="corrected").tables["per_task"].set_index("method")
    assert per.loc["A", "seed"] == 2
    assert list(per.loc["A", ["rank_r2", "rank_simplicity", "rank_trust"]]) == [1, 2, 1]
    assert per.loc["A", "score"] == pytest.approx(3 / (1 + 0.5 + 1))
    per = (
        score("srbench2022-realworld", runs, trust=trust, representative="best", profile="corrected")
        .tables["per_task"]
        .set_index("method")
    )
    assert per.loc["A", "seed"] == 3 and per.loc["A", "rank_r2"] == 2 and per.loc["B", "score"] == pytest.approx(1.0)
    with pytest.raises(ScoreError, match="trust"):
        score("srbench2022-realworld", runs, profile="corrected")


def test_pareto_ranks():
    pts = pd.DataFrame({"a": [3.0, 2.0, 1.0, 3.0], "b": [1.0, 2.0, 1.0, 1.0]})
    assert list(pareto_ranks(pts, {"a": True, "b": True})) == [1, 1, 2, 1]


def test_srbench2021_ranks_pareto_and_solution_rate():
    runs = frame(
        [
            dict(task="A", method="small", r2_test=0.5, size=3, symbolic_solution=1, noise=0.0),
            dict(task="A", method="big", r2_test=0.9, size=30, symbolic_solution=0, noise=0.0),
            dict(task="A", method="worse", r2_test=0.4, size=40, symbolic_solution=0, noise=0.0),
            dict(task="B", method="small", r2_test=0.6, size=5, symbolic_solution=0, noise=0.1),
            dict(task="B", method="big", r2_test=0.95, size=50, symbolic_solution=1, noise=0.1),
            dict(task="B", method="worse", r2_test=0.3, size=60, symbolic_solution=1, noise=0.1, status="timeout"),
        ],
        seed=0,
    )
    s = score("srbench2021", runs, profile="corrected")
    b = s.main.set_index("method")
    # R2 ranks: A small 2 big 3 worse 1; B small 2 big 3 worse (failed) 1
    assert b["rank_r2"].to_dict() == {"small": 2.0, "big": 3.0, "worse": 1.0}
    # size ranks (small is better): A 3, 2, 1; B small 3, big 2, worse failed 1
    assert b["rank_size"].to_dict() == {"small": 3.0, "big": 2.0, "worse": 1.0}
    assert b["pareto_rank"].to_dict() == {"small": 1, "big": 1, "worse": 2}
    rate = score("srbench-groundtruth", runs, profile="corrected").main.set_index(["method", "noise"])
    # worse's solution on B came from a timed-out run: it does not count
    assert rate.loc[("worse", 0.1), "symbolic_solution_rate"] == 0.0
    assert rate.loc[("big", 0.1), "symbolic_solution_rate"] == 100.0
    assert rate.loc[("small", 0.0), "symbolic_solution_rate"] == 100.0
    # reference: the failed run has no result file, so worse has no row at noise 0.1
    ref = score("srbench-groundtruth", runs).main.set_index(["method", "noise"])
    assert ("worse", 0.1) not in ref.index and ref.loc[("big", 0.1), "accuracy_solution_rate"] == 0.0


def test_srbench2025_profiles_fronts_and_deprecation():
    runs = frame(
        [
            dict(task="A", method="m1", seed=0, r2_test=0.5, size=5, truth_size=7),
            dict(task="A", method="m1", seed=1, r2_test=0.7, size=5, truth_size=7),
            dict(task="A", method="m2", seed=0, r2_test=0.9, size=9, truth_size=7),
            dict(task="A", method="m2", seed=1, r2_test=-2.0, size=9, truth_size=7),
            dict(task="A", method="m3", seed=0, r2_test=0.4, size=20, truth_size=7),
            dict(task="A", method="m3", seed=1, r2_test=0.4, size=20, truth_size=7),
        ]
    )
    s = score("srbench2025", runs, profile="corrected")
    b = s.main.set_index("method")
    # max aggregation: m1 0.7, m2 0.9, m3 0.4; AUC of P[R2 >= x] on [0,1] = clipped value
    assert b["auc"].to_dict() == pytest.approx({"m1": 0.7, "m2": 0.9, "m3": 0.4})
    per = s.tables["auc_per_dataset"].set_index("method")["auc"]
    assert per["m2"] == pytest.approx((0.9 + 0.0) / 2) and per["m1"] == pytest.approx(0.6)
    front = s.tables["pareto"].set_index("method")
    # medians: m1 (0.6, 5), m2 (-0.55, 9), m3 (0.4, 20): only m1 is on the front
    assert bool(front.loc["m1", "on_front"]) and not bool(front.loc["m3", "on_front"])
    assert front.loc["(ground truth)", "size"] == 7
    dep = s.tables["deprecation"].set_index("method")["deprecated"]
    assert dep.to_dict() == {"m1": False, "m2": True, "m3": True}


def test_missing_columns_are_one_line_errors():
    with pytest.raises(ScoreError, match="simplicity"):
        score("srbench2022-synthetic", frame([dict(task="a", method="m", r2_test=1.0)]), profile="corrected")
    with pytest.raises(ScoreError, match="unknown scoring rule"):
        score("nope", frame([dict(task="a", method="m", r2_test=1.0)]))


def test_match_trust_without_ratings_is_empty() -> None:
    """No ratings yet (a review session unblinded before anyone rated): an empty table, not the
    KeyError a list mask of no rows gave (it selected columns; `srtui review report` crashed)."""
    from srtui.results.scoring.rules.srbench2022 import match_trust

    found = match_trust(pd.DataFrame(columns=["task", "method", "trust"]), ["demo-epidemic-cases"])
    assert found.empty and list(found.columns) == ["task", "method", "trust", "expert_task"]
