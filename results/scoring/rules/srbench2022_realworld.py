"""SRBench 2022 stage 2, the real-world track: accuracy, simplicity and the expert's trust."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.base import (
    Score,
    ScoreError,
    attempted,
    failures,
    hmean,
    metric_column,
    n_minus_dense_rank,
    rank_per_task,
    require,
    rule,
    scipy_hmean,
)
from srtui.results.scoring.rules.srbench2022 import RELEASE, match_trust


@rule("srbench2022-realworld", {"representative": ("median", ("median", "best"))}, release=RELEASE, needs_trust=True)
def realworld(
    runs: pd.DataFrame,
    trust: pd.DataFrame | None = None,
    profile: Profile = Profile.REFERENCE,
    representative: str = "median",
) -> Score:
    """Per task one representative run per method (the finished run closest to the median test R2,
    or -o representative=best); ranks of its test R2, its simplicity and the expert's trust
    rating; task score = harmonic mean of the three ranks; final score = mean over tasks.

    reference (stage2_final_ratings.ipynb): failed runs are dropped; the representative's
    simplicity is min-max normalised over all representatives; methods without a rating are
    dropped; per (method, rated task) the max of each value over the representatives; R2 rounded
    to 3 decimals; ranks n_methods - dense_rank(descending) (a 0 rank gives a 0 score).
    corrected: dense ranks 1.. (higher is better), a method whose runs on a task all failed ranks
    worst there (one never run there is left out), a missing rating ranks worst."""
    require(runs, "r2_test", rule="srbench2022-realworld")
    if trust is None:
        raise ScoreError(
            "rule 'srbench2022-realworld' needs expert trust ratings (task, method, trust): "
            "give --trust FILE or --review SESSION"
        )
    simp = metric_column(runs, RELEASE, "simplicity", profile)
    require(runs, simp, rule="srbench2022-realworld")
    # corrected: a method whose runs on a task all failed is there, without a representative
    reps = _representatives(runs if profile == Profile.REFERENCE else attempted(runs), simp, representative)
    rated = match_trust(trust, sorted(reps["task"].unique()))
    per_task = _reference(reps, rated) if profile == Profile.REFERENCE else _corrected(reps, rated)
    board = per_task.groupby("method").agg(score=("score", "mean"), tasks=("task", "nunique"), trust=("trust", "mean"))
    board["failed_runs"] = failures(runs, "r2_test").reindex(board.index).fillna(0).astype(int)
    board = board.sort_values("score", ascending=False).reset_index()
    return Score(
        "srbench2022-realworld",
        {"profile": profile, "representative": representative, "simplicity": simp},
        {"leaderboard": board, "per_task": per_task},
    )


def _representatives(runs: pd.DataFrame, simp: str, how: str) -> pd.DataFrame:
    """``srbench2022.representative`` of every (task, method) at once: the finished run closest to
    the median test R2 (or the best), the lowest seed among equals; NaN where none finished."""
    ok = runs[(runs["status"] == "ok") & runs["r2_test"].notna()]
    keys = [ok["task"], ok["method"]]
    if how == "best":
        order = -ok["r2_test"].astype(float)
    else:
        med = ok["r2_test"].groupby(keys).transform("median")
        order = (ok["r2_test"] - med).abs()
    picked = (
        ok.assign(_order=order)
        .sort_values(["task", "method", "_order", "seed"], kind="stable")
        .drop_duplicates(["task", "method"])
    )
    reps = picked[["task", "method", "seed", "r2_test", simp]].rename(columns={simp: "simplicity"})
    pairs = runs[["task", "method"]].drop_duplicates()
    return pairs.merge(reps, on=["task", "method"], how="left").sort_values(["task", "method"]).reset_index(drop=True)


def _reference(reps: pd.DataFrame, rated: pd.DataFrame) -> pd.DataFrame:
    reps = reps[reps["seed"].notna()].copy()  # no finished run: no representative, no row
    s = reps["simplicity"].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps["simplicity"] = (s - s.min()) / (s.max() - s.min())
    final = reps.merge(rated, on=["task", "method"], how="inner")  # unrated methods drop out
    if final.empty:
        raise ScoreError("rule 'srbench2022-realworld': no (task, method) with both a finished run and a trust rating")
    summed = final.groupby(["expert_task", "method"])[["r2_test", "simplicity", "trust"]].max()
    summed["r2_test"] = summed["r2_test"].round(3)
    n = final["method"].nunique()
    task = summed.index.get_level_values("expert_task")
    ranks = pd.DataFrame(
        {f"rank_{c}": n_minus_dense_rank(summed[c], task, n) for c in ("r2_test", "simplicity", "trust")}
    )
    per_task = summed.join(ranks)
    per_task["score"] = scipy_hmean(ranks)
    per_task["seed"] = final.groupby(["expert_task", "method"])["seed"].first()
    per_task = (
        per_task.rename(columns={"rank_r2_test": "rank_r2"}).reset_index().rename(columns={"expert_task": "task"})
    )
    return per_task[
        [
            "task",
            "method",
            "seed",
            "r2_test",
            "simplicity",
            "trust",
            "rank_r2",
            "rank_simplicity",
            "rank_trust",
            "score",
        ]
    ]


def _corrected(reps: pd.DataFrame, rated: pd.DataFrame) -> pd.DataFrame:
    rep = reps.merge(rated[["task", "method", "trust"]], on=["task", "method"], how="left").set_index(
        ["task", "method"]
    )
    r_r2, r_simp, r_trust = rank_per_task(rep["r2_test"]), rank_per_task(rep["simplicity"]), rank_per_task(rep["trust"])
    rep["rank_r2"], rep["rank_simplicity"], rep["rank_trust"] = r_r2, r_simp, r_trust
    rep["score"] = hmean(r_r2, r_simp, r_trust)
    return rep.reset_index()
