"""SRBench 2022 stage 0: a method qualifies by ranking better than the LinearRegression baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.base import (
    Score,
    ScoreError,
    aggregate,
    attempted,
    failures,
    rank_per_task,
    require,
    rule,
    shown,
)

BASELINES = ("linear", "LinearRegression")
#: stage0.ipynb fills every (dataset, seed, method) without a result with the worst rank + 1
MISSING_RANKED_WORST = "stage0.ipynb ranks a run without a result as a failure (worst rank + 1), so they count so here"


def _baseline(runs: pd.DataFrame, baseline: str) -> str:
    methods = set(runs["method"])
    names = BASELINES if baseline == "auto" else (baseline,)
    found = next((b for b in names if b in methods), None)
    if found is None:
        raise ScoreError(
            f"no baseline: no runs of {' or '.join(map(repr, names))}; name the baseline method "
            f"with -o baseline=NAME (methods: {', '.join(sorted(methods))})"
        )
    return found


@rule(
    "srbench2022-qualification",
    {"baseline": ("auto", None), "agg": ("median", ("median", "mean"))},
    release="srbench2022",
)
def qualification(
    runs: pd.DataFrame, profile: Profile = Profile.REFERENCE, baseline: str = "auto", agg: str = "median"
) -> Score:
    """Stage 0: a method qualifies when it ranks better on test R2 than the baseline
    (LinearRegression; srtui's `linear`, or -o baseline=NAME).

    reference (stage0.ipynb): per (dataset, seed) rank test R2 rounded to 3 decimals (1 = best, ties
    averaged); a missing or failed run gets the worst rank seen anywhere + 1; per run the rank minus
    the baseline's; median over seeds, mean over datasets; qualified when that mean is below 0.
    corrected: the median (agg) test R2 per dataset with failures worst (runs never attempted or
    pending left out), dense ranks (higher is
    better), mean over datasets; qualified when the mean rank is at least the baseline's."""
    require(runs, "r2_test", rule="srbench2022-qualification")
    base = _baseline(runs, baseline)
    if profile == Profile.REFERENCE:
        board, per_task = _reference(runs, base)
    else:
        board, per_task = _corrected(runs, base, agg)
    options = {"profile": profile, "baseline": base} | ({"agg": agg} if profile == Profile.CORRECTED else {})
    result = Score("srbench2022-qualification", options, {"leaderboard": board, "per_task": per_task})
    if profile == Profile.REFERENCE:
        result.missing_as_failures = MISSING_RANKED_WORST
    return result


def _reference(runs: pd.DataFrame, base: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ok = runs[(runs["status"] == "ok") & runs["r2_test"].notna()].drop_duplicates(["task", "seed", "method"])
    rank = ok["r2_test"].round(3).groupby([ok["task"], ok["seed"]]).rank(ascending=False)
    worst = (rank.max() if len(rank) else 0.0) + 1
    grid = pd.MultiIndex.from_product(
        [runs["task"].unique(), runs["seed"].unique(), runs["method"].unique()], names=["task", "seed", "method"]
    )
    trial = pd.Series(rank.to_numpy(), index=pd.MultiIndex.from_frame(ok[["task", "seed", "method"]]))
    trial = trial.reindex(grid).fillna(worst).rename("rank")
    base_rank = trial.xs(base, level="method")
    diff = trial - base_rank.reindex(trial.droplevel("method").index).to_numpy()
    per = pd.DataFrame({"rank": trial, "rank_diff": diff}).groupby(level=["method", "task"]).median()
    board = pd.DataFrame(
        {
            "mean_rank_diff": per["rank_diff"].groupby(level="method").mean(),
            "median_r2_test": ok.groupby("method")["r2_test"].median(),
            "datasets": ok.groupby("method")["task"].nunique(),
            "failed_runs": failures(runs, "r2_test"),
        }
    )
    board["datasets"] = board["datasets"].fillna(0).astype(int)
    board["qualified"] = np.where(board.index == base, "baseline", np.where(board["mean_rank_diff"] < 0, "yes", "no"))
    board = board.sort_values("mean_rank_diff").rename_axis("method").reset_index()
    per_task = per.rename(columns={"rank": "median_rank", "rank_diff": "median_rank_diff"}).reset_index()
    return board, per_task[["task", "method", "median_rank", "median_rank_diff"]]


def _corrected(runs: pd.DataFrame, base: str, agg: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = attempted(runs)
    r2 = aggregate(runs, "r2_test", agg)
    ranks = rank_per_task(r2)
    mean_rank = ranks.groupby(level="method").mean()
    board = pd.DataFrame(
        {
            "mean_rank": mean_rank,
            f"{agg}_r2_test": shown(r2).groupby(level="method").median(),
            "datasets": r2.groupby(level="method").size(),
            "failed_runs": failures(runs, "r2_test"),
        }
    )
    board["qualified"] = np.where(
        board.index == base, "baseline", np.where(board["mean_rank"] >= mean_rank[base], "yes", "no")
    )
    board = board.sort_values("mean_rank", ascending=False).rename_axis("method").reset_index()
    per_task = pd.DataFrame({"r2_test": shown(r2), "rank": ranks}).reset_index()
    return board, per_task
