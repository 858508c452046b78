"""SRBench 2022 stage 1, the synthetic track: accuracy, simplicity and each dataset's property."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from srtui.engine.spec import MODEL_CAP
from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.base import (
    Score,
    ScoreError,
    aggregate,
    attempted,
    drop_failed,
    failures,
    hmean,
    metric_column,
    n_minus_dense_rank,
    rank_per_task,
    require,
    rule,
    scipy_hmean,
    shown,
)
from srtui.results.scoring.rules.srbench2022 import PROPERTY_COLUMNS, REFERENCE_PROPERTY, RELEASE, task_column


@rule("srbench2022-synthetic", {"agg": ("median", ("median", "mean"))}, release=RELEASE)
def synthetic(runs: pd.DataFrame, profile: Profile = Profile.REFERENCE, agg: str = "median") -> Score:
    """Per dataset: ranks of accuracy (test R2 to 3 decimals), simplicity and the dataset's property;
    dataset score = harmonic mean of the three ranks; final score = mean over datasets.

    reference (stage1.ipynb): failed runs are dropped and the finished ones averaged (mean);
    the mean R2 is rounded to 3 decimals; ranks are n_methods - dense_rank(descending) (best
    n-1, worst possibly 0, and a 0 rank makes the harmonic mean 0); a missing rank counts as
    n_methods; the property of exact-rediscovery tasks is the solution rate, of feature-absence
    tasks feature absence, of every other task (noise, extrapolation) plain test R2; a method
    that failed a whole dataset is averaged over the datasets it has.
    corrected: the median (agg) over runs with failures as the worst value; each run's R2
    rounded; dense ranks 1.. (higher is better); the property columns of srtui (noise
    robustness relative to the noiseless twin, extrapolation R2)."""
    require(runs, "r2_test", rule="srbench2022-synthetic")
    runs = runs.copy()
    runs["property"] = task_column(runs, "property", "accuracy")
    if "difficulty" in runs.columns:
        runs["difficulty"] = task_column(runs, "difficulty")
    simp = metric_column(runs, RELEASE, "simplicity", profile)
    require(runs, simp, rule="srbench2022-synthetic")
    options: dict[str, Any]
    notes: list[str] = []
    if profile == Profile.REFERENCE:
        per_task, board = _reference(runs, simp)
        options = {"profile": profile}
        notes = _flag_hidden_models(runs, simp, per_task, board)
    else:
        per_task, board = _corrected(runs, simp, agg)
        options = {"profile": profile, "agg": agg}
    tables = {"leaderboard": board, "per_task": per_task}
    if "difficulty" in runs.columns and runs["difficulty"].notna().any():
        per_task["difficulty"] = per_task["task"].map(runs.groupby("task")["difficulty"].first())
        tables["per_difficulty"] = (
            per_task.groupby(["difficulty", "method"])["score"].mean().unstack("difficulty").reset_index()
        )
    return Score("srbench2022-synthetic", options | {"simplicity": simp}, tables, notes=notes)


def _reference(runs: pd.DataFrame, simp: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ok = drop_failed(runs).drop_duplicates(["task", "seed", "method"])
    if ok.empty:
        raise ScoreError("rule 'srbench2022-synthetic': no finished runs to score")
    ok = ok.assign(_simplicity=_minmax(ok[simp]), _property=_reference_property(ok))
    means = ok.groupby(["task", "method"])[["r2_test", "_simplicity", "_property"]].mean()
    means["r2_test"] = means["r2_test"].round(3)
    n = ok["method"].nunique()
    task = means.index.get_level_values("task")
    ranks = pd.DataFrame({c: n_minus_dense_rank(means[c], task, n) for c in means.columns})
    score = scipy_hmean(ranks.fillna(n))  # nanhmean: a missing rank counts as the number of methods
    per_task = pd.DataFrame(
        {
            "property": task.map(ok.groupby("task")["property"].first().to_dict()),
            "accuracy": means["r2_test"],
            "simplicity": means["_simplicity"],
            "property_value": means["_property"],
            "rank_accuracy": ranks["r2_test"],
            "rank_simplicity": ranks["_simplicity"],
            "rank_property": ranks["_property"],
            "score": score,
            "runs": ok.groupby(["task", "method"]).size(),
        }
    ).reset_index()
    board = per_task.groupby("method").agg(score=("score", "mean"), datasets=("task", "nunique"))
    board["failed_runs"] = failures(runs, "r2_test").reindex(board.index).fillna(0).astype(int)
    return per_task, board.sort_values("score", ascending=False).reset_index()


HIDDEN_NOTE = (
    "hidden model: this row's rank improved because its model was missing or over the size cap "
    "(the reference code counts a missing simplicity rank as the best); profile=corrected counts it as the worst"
)


def _flag_hidden_models(runs: pd.DataFrame, simp: str, per_task: pd.DataFrame, board: pd.DataFrame) -> list[str]:
    """Mark (column ``hidden_model``) every leaderboard row placed higher than it would be had its
    missing simplicity ranks, where its model was missing or over the size cap, counted as the
    worst instead of as the number of methods; the note naming profile=corrected if any is."""
    if "model" not in runs.columns or board.empty:
        return []
    model = runs["model"].astype("string")
    hidden_run = model.isna() | (model.str.strip() == "") | (model.str.len() >= MODEL_CAP)
    hidden = set(map(tuple, runs.loc[hidden_run & runs[simp].isna(), ["task", "method"]].itertuples(index=False)))
    keys = list(zip(per_task["task"], per_task["method"]))
    credited = per_task["rank_simplicity"].isna() & pd.Series([k in hidden for k in keys], index=per_task.index)
    if not credited.any():
        return []
    ranks = per_task[["rank_accuracy", "rank_simplicity", "rank_property"]].copy()
    ranks.loc[credited, "rank_simplicity"] = 0.0  # the reference's worst rank
    n = per_task["method"].nunique()
    honest = per_task.assign(score=scipy_hmean(ranks.fillna(n))).groupby("method")["score"].mean()
    place = board["score"].rank(ascending=False, method="min")
    honest_place = board["method"].map(honest).rank(ascending=False, method="min")
    flagged = board["method"].isin(per_task.loc[credited, "method"]) & (place < honest_place)
    if not flagged.any():
        return []
    board["hidden_model"] = flagged.map({True: "*", False: ""})
    return [f"* {HIDDEN_NOTE}"]


def _minmax(values: pd.Series) -> pd.Series:
    """stage1 normalises simplicity to [0, 1] over all results (all NaN when every value is equal)."""
    v = values.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (v - v.min()) / (v.max() - v.min())


def _reference_property(ok: pd.DataFrame) -> pd.Series:
    out = ok["r2_test"].astype(float).copy()
    for prop, name in REFERENCE_PROPERTY.items():
        rows = ok["property"] == prop
        if rows.any():
            col = metric_column(ok, RELEASE, name, Profile.REFERENCE)
            if col not in ok.columns:
                raise ScoreError(
                    f"tasks with property {prop!r} need column {col!r} (or {RELEASE}.{col}) in the runs table"
                )
            out[rows] = ok.loc[rows, col].astype(float)
    return out


def _corrected_property(runs: pd.DataFrame, agg: str) -> pd.Series:
    """Per (task, method) the aggregate of the column of the task's property (NaN: none)."""
    parts = []
    for prop, frame in runs.groupby(runs["property"].fillna("accuracy")):
        name = PROPERTY_COLUMNS.get(prop)
        if name is None:
            continue
        col = metric_column(frame, RELEASE, name, Profile.CORRECTED)
        if col not in frame.columns:
            raise ScoreError(f"tasks with property {prop!r} need column {col!r} in the runs table")
        parts.append(aggregate(frame, col, agg))
    return pd.concat(parts) if parts else pd.Series(dtype=float)


def _corrected(runs: pd.DataFrame, simp: str, agg: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = attempted(runs)
    runs["property"] = task_column(runs, "property", "accuracy")
    runs["r2_test_3"] = runs["r2_test"].round(3)
    acc = aggregate(runs, "r2_test_3", agg)
    simplicity = aggregate(runs, simp, agg)
    prop = _corrected_property(runs, agg).reindex(acc.index)
    has_prop = np.asarray(
        acc.index.get_level_values("task").map(
            runs.groupby("task")["property"].first().map(lambda p: p in PROPERTY_COLUMNS).to_dict()
        ),
        np.bool_,
    )
    r_acc, r_simp = rank_per_task(acc), rank_per_task(simplicity)
    r_prop = rank_per_task(prop.fillna(-np.inf)).where(has_prop)
    scores = pd.Series(
        np.where(has_prop, hmean(r_acc, r_simp, r_prop.fillna(1)), hmean(r_acc, r_simp)), index=acc.index
    )
    per_task = pd.DataFrame(
        {
            "accuracy": shown(acc),
            "simplicity": shown(simplicity),
            "property_value": shown(prop),
            "rank_accuracy": r_acc,
            "rank_simplicity": r_simp,
            "rank_property": r_prop,
            "score": scores,
        }
    ).reset_index()
    per_task.insert(2, "property", per_task["task"].map(runs.groupby("task")["property"].first()))
    board = per_task.groupby("method").agg(score=("score", "mean"), datasets=("task", "nunique"))
    board["failed_runs"] = failures(runs, "r2_test")
    return per_task, board.sort_values("score", ascending=False).reset_index()
