"""The SRBench 2022 competition's rules (de Franca et al., "SRBench++", 2023)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from results.scoring.base import (
    Score,
    ScoreError,
    aggregate,
    complete,
    failures,
    hmean,
    rank_per_task,
    require,
    shown,
)

#: the column holding each task property's value (SRBench 2022 synthetic track)
PROPERTY_COLUMNS = {
    "exact_rediscovery": "symbolic_solution",
    "feature_absence": "feature_absence",
    "extrapolation": "r2_extrapolation",
    "noise_robustness": "noise_robustness",
}


def qualification(runs: pd.DataFrame, agg: str = "median", baseline: str = "linear") -> Score:
    """Median test R2 per dataset, dense ranks per dataset, mean rank per method; a method whose
    mean rank is below the baseline's (LinearRegression) is disqualified."""
    require(runs, "r2_test", rule="srbench2022-qualification")
    runs = complete(runs)
    if baseline not in set(runs["method"]):
        raise ScoreError(f"baseline method {baseline!r} has no runs (methods: {', '.join(sorted(runs['method'].unique()))})")
    r2 = aggregate(runs, "r2_test", agg)
    ranks = rank_per_task(r2)
    mean_rank = ranks.groupby(level="method").mean()
    base = mean_rank[baseline]
    board = pd.DataFrame({
        "mean_rank": mean_rank,
        f"{agg}_r2_test": shown(r2).groupby(level="method").median(),
        "datasets": r2.groupby(level="method").size(),
        "failed_runs": failures(runs, "r2_test"),
    })
    board["qualified"] = np.where(board.index == baseline, "baseline",
                                  np.where(board["mean_rank"] >= base, "yes", "no"))
    board = board.sort_values("mean_rank", ascending=False).rename_axis("method").reset_index()
    per_task = pd.DataFrame({"r2_test": shown(r2), "rank": ranks}).reset_index()
    return Score("srbench2022-qualification", {"agg": agg, "baseline": baseline},
                 {"leaderboard": board, "per_task": per_task})


def _property_values(runs: pd.DataFrame, agg: str) -> pd.Series:
    """Per (task, method) the aggregate of the column of the task's property (NaN: none)."""
    parts = []
    for prop, frame in runs.groupby(runs["property"].fillna("accuracy")):
        col = PROPERTY_COLUMNS.get(prop)
        if col is None:
            continue
        if col not in frame.columns:
            raise ScoreError(f"tasks with property {prop!r} need column {col!r} in the runs table")
        parts.append(aggregate(frame, col, agg))
    return pd.concat(parts) if parts else pd.Series(dtype=float)


def synthetic(runs: pd.DataFrame, agg: str = "median") -> Score:
    """Per dataset: dense ranks of accuracy (test R2 to 3 decimals), simplicity and the task's
    property; dataset score = harmonic mean of those ranks; final = mean over datasets."""
    require(runs, "r2_test_3", "simplicity", rule="srbench2022-synthetic")
    runs = complete(runs)
    if "property" not in runs.columns:
        runs["property"] = "accuracy"
    runs["property"] = runs.groupby("task")["property"].transform(lambda s: s.ffill().bfill()).fillna("accuracy")
    if "difficulty" in runs.columns:
        runs["difficulty"] = runs.groupby("task")["difficulty"].transform(lambda s: s.ffill().bfill())
    acc = aggregate(runs, "r2_test_3", agg)
    simp = aggregate(runs, "simplicity", agg)
    prop = _property_values(runs, agg).reindex(acc.index)
    has_prop = acc.index.get_level_values("task").map(
        runs.groupby("task")["property"].first().map(lambda p: p in PROPERTY_COLUMNS))
    r_acc, r_simp = rank_per_task(acc), rank_per_task(simp)
    r_prop = rank_per_task(prop.fillna(-np.inf)).where(np.asarray(has_prop, bool))
    scores = pd.Series(np.where(
        np.asarray(has_prop, bool), hmean(r_acc, r_simp, r_prop.fillna(1)), hmean(r_acc, r_simp)), index=acc.index)
    per_task = pd.DataFrame({
        "accuracy": shown(acc), "simplicity": shown(simp), "property_value": shown(prop),
        "rank_accuracy": r_acc, "rank_simplicity": r_simp, "rank_property": r_prop, "score": scores,
    }).reset_index()
    per_task["property"] = per_task["task"].map(runs.groupby("task")["property"].first())
    board = per_task.groupby("method").agg(score=("score", "mean"), datasets=("task", "nunique"))
    board["failed_runs"] = failures(runs, "r2_test_3")
    board = board.sort_values("score", ascending=False).reset_index()
    tables = {"leaderboard": board, "per_task": per_task}
    if "difficulty" in runs.columns and runs["difficulty"].notna().any():
        per_task["difficulty"] = per_task["task"].map(runs.groupby("task")["difficulty"].first())
        tables["per_difficulty"] = (per_task.groupby(["difficulty", "method"])["score"].mean()
                                    .unstack("difficulty").reset_index())
    return Score("srbench2022-synthetic", {"agg": agg}, tables)


def load_expert_scores(path: str | Path) -> pd.DataFrame:
    """The SRBench 2022 expert's ratings file -> DataFrame(task, method, trust)."""
    try:
        data = json.loads(Path(path).read_text())
        rows = [(t, m, float(v)) for t, by_m in data["ratings"].items() for m, v in by_m.items()]
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise ScoreError(f"cannot read expert trust ratings from {path}: {exc}") from None
    return pd.DataFrame(rows, columns=["task", "method", "trust"])


def _match_trust(trust: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """Trust ratings name tasks as the competition did ('cases'); match our names by suffix."""
    out = []
    for t in tasks:
        hit = trust[trust["task"] == t]
        if hit.empty:
            hit = trust[[t.endswith(("-" + x, "_" + x)) for x in trust["task"]]]
        out.append(hit.assign(task=t))
    return pd.concat(out) if out else trust.iloc[:0]


def _representative(frame: pd.DataFrame, how: str) -> pd.Series | None:
    ok = frame[(frame["status"] == "ok") & frame["r2_test"].notna()]
    if ok.empty:
        return None
    ok = ok.sort_values("seed")
    if how == "best":
        return ok.loc[ok["r2_test"].idxmax()]
    med = float(np.median(ok["r2_test"]))
    return ok.loc[(ok["r2_test"] - med).abs().idxmin()]  # first (lowest seed) among equals


def realworld(runs: pd.DataFrame, trust: pd.DataFrame | None = None, representative: str = "median") -> Score:
    """Per task, one representative run per method (closest to the median test R2, or the best);
    dense ranks of its R2, its simplicity and the expert's trust; harmonic mean; mean over tasks."""
    require(runs, "r2_test", "simplicity", rule="srbench2022-realworld")
    if trust is None:
        raise ScoreError("rule 'srbench2022-realworld' needs expert trust ratings (task, method, trust)")
    runs = complete(runs)
    reps = []
    for (task, method), frame in runs.groupby(["task", "method"]):
        rep = _representative(frame, representative)
        reps.append({"task": task, "method": method,
                     "r2_test": np.nan if rep is None else rep["r2_test"],
                     "simplicity": np.nan if rep is None else rep["simplicity"],
                     "seed": np.nan if rep is None else rep["seed"]})
    rep = pd.DataFrame(reps)
    t = _match_trust(trust, sorted(rep["task"].unique()))
    rep = rep.merge(t, on=["task", "method"], how="left")
    idx = ["task", "method"]
    rep = rep.set_index(idx)
    r_r2 = rank_per_task(rep["r2_test"])
    r_simp = rank_per_task(rep["simplicity"])
    r_trust = rank_per_task(rep["trust"])
    rep["rank_r2"], rep["rank_simplicity"], rep["rank_trust"] = r_r2, r_simp, r_trust
    rep["score"] = hmean(r_r2, r_simp, r_trust)
    per_task = rep.reset_index()
    board = per_task.groupby("method").agg(score=("score", "mean"), tasks=("task", "nunique"),
                                           trust=("trust", "mean"))
    board["failed_runs"] = failures(runs, "r2_test")
    board = board.sort_values("score", ascending=False).reset_index()
    return Score("srbench2022-realworld", {"representative": representative}, {"leaderboard": board, "per_task": per_task})
