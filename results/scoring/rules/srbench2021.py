"""SRBench 2021 (La Cava et al., NeurIPS 2021): black-box Pareto fronts and ground-truth solution rates."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srtui.results.metrics.fronts import PUBLISHED_LEVELS, few_fronts_note, published_fronts
from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.base import (
    Score,
    aggregate,
    attempted,
    drop_failed,
    failures,
    metric_column,
    rank_per_task,
    require,
    rule,
    shown,
)

RELEASE = "srbench2021"
GROUND_TRUTH_FAMILIES = r"^(feynman|strogatz)[-_]"  # the data groups of the ground-truth problems


def pareto_ranks(points: pd.DataFrame, maximise: dict[str, bool]) -> pd.Series:
    """Non-dominated sorting: 1 for the first front, 2 for the next, ... (NaN rows go last)."""
    v = np.column_stack([points[c].astype(float).to_numpy() * (1 if up else -1) for c, up in maximise.items()])
    v = np.nan_to_num(v, nan=-np.inf)
    # dominates[j, i]: j is at least as good everywhere and better somewhere
    dominates = np.asarray((v[:, None, :] >= v[None, :, :]).all(axis=2) & (v[:, None, :] > v[None, :, :]).any(axis=2))
    out, left, rank = np.zeros(len(v), dtype=int), np.ones(len(v), bool), 1
    while left.any():
        front = left & ~(dominates[left][:, :].any(axis=0))
        out[front] = rank
        left &= ~front
        rank += 1
    return pd.Series(out, index=points.index)


@rule("srbench2021", {"agg": ("median", ("median", "mean"))}, release=RELEASE)
def srbench2021(runs: pd.DataFrame, profile: Profile = Profile.REFERENCE, agg: str = "median") -> Score:
    """Black-box comparison (the paper's Figure 2): per dataset the median over runs of test R2 and
    model size, ranked per dataset; Pareto fronts of the methods on (R2 rank, size rank).

    reference (blackbox_results.ipynb): failed runs are dropped; per dataset rank the medians
    rounded to 3 decimals (1 = best, ties averaged; small size is good); per method the median over
    datasets of those ranks; the published loop of 6 fronts, numbered from 0 (-1: on none); size
    is the model size of SRBench 2021's evaluate_model (``srbench2021.size``).
    corrected: failures count as the worst value (runs never attempted are left out); dense ranks
    (higher is better) averaged over datasets (agg over runs); complete non-dominated sorting, fronts numbered from 1.

    Table per_task: per (method, dataset) the values ranked (test R2, size, and the training
    time ``training_s`` as 2021 measured it, when the runs have one) with their two ranks: what
    `srtui plot points` and the intervals of `srtui plot pareto` draw."""
    require(runs, "r2_test", rule="srbench2021")
    runs = with_training_time(runs)
    size = metric_column(runs, RELEASE, "size", profile)
    require(runs, size, rule="srbench2021")
    if profile == Profile.REFERENCE:
        board, per_task, notes = _reference(runs, size)
        options = {"profile": profile, "size": size}
    else:
        (board, per_task), notes = _corrected(runs, size, agg), []
        options = {"profile": profile, "agg": agg, "size": size}
    tables = {"leaderboard": board, "per_task": per_task}
    return Score("srbench2021", options, tables, notes)


#: a run's training time as 2021 measured it (``with_training_time``)
TRAINING = "training_s"


def with_training_time(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with ``training_s``, row by row: ``search_s`` of a tuned run (its whole search and
    the refit: 2021's ``time_time`` of ``grid_est.fit``, which its published "training time (s)"
    is), else ``fit_s`` (srtui's time of the fit), else ``wall_s`` (a collated table's training
    time); no column when no row has one."""
    cols = [c for c in ("search_s", "fit_s", "wall_s") if c in runs.columns]
    if not cols:
        return runs
    time = pd.to_numeric(runs[cols[0]], errors="coerce")
    for col in cols[1:]:
        time = time.fillna(pd.to_numeric(runs[col], errors="coerce"))
    return runs.assign(**{TRAINING: time}) if time.notna().any() else runs


def time_column(runs: pd.DataFrame) -> str | None:
    """``training_s`` when the runs have one (``with_training_time``), else None."""
    return TRAINING if TRAINING in runs.columns and runs[TRAINING].notna().any() else None


def _reference(runs: pd.DataFrame, size: str) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    ok = drop_failed(runs)
    timed = time_column(ok)
    med = ok.groupby(["method", "task"])[["r2_test", size, *([timed] if timed else [])]].median()
    task = med.index.get_level_values("task")
    r_r2 = med["r2_test"].round(3).groupby(task).rank(ascending=False)
    r_size = med[size].round(3).groupby(task).rank(ascending=True)
    per_task = med.assign(rank_r2=r_r2, rank_size=r_size).reset_index()
    board = pd.DataFrame(
        {
            "median_rank_r2": r_r2.groupby(level="method").median(),
            "median_rank_size": r_size.groupby(level="method").median(),
            "median_r2_test": med["r2_test"].groupby(level="method").median(),
            f"median_{size}": med[size].groupby(level="method").median(),
            "datasets": med.groupby(level="method").size(),
        }
    )
    board["failed_runs"] = failures(runs, "r2_test").reindex(board.index).fillna(0).astype(int)
    board["pareto_front"] = published_fronts(board[["median_rank_r2", "median_rank_size"]].to_numpy())
    notes = few_fronts_note(board["pareto_front"].to_numpy())
    order = board["pareto_front"].where(board["pareto_front"] >= 0, PUBLISHED_LEVELS)
    board = board.assign(_o=order).sort_values(["_o", "median_rank_r2"]).drop(columns="_o")
    return board.rename_axis("method").reset_index(), per_task, notes


def _corrected(runs: pd.DataFrame, size: str, agg: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = attempted(runs)
    r2, sz = aggregate(runs, "r2_test", agg), aggregate(runs, size, agg, higher_better=False)
    timed = time_column(runs)
    per_task = pd.DataFrame(
        {
            "r2_test": shown(r2),
            size: shown(sz),
            **({timed: shown(aggregate(runs, timed, agg, higher_better=False))} if timed else {}),
            "rank_r2": rank_per_task(r2),
            "rank_size": rank_per_task(sz, higher_better=False),
        }
    ).reset_index()
    board = pd.DataFrame(
        {
            f"{agg}_r2_test": shown(r2).groupby(level="method").median(),
            f"{agg}_{size}": shown(sz).groupby(level="method").median(),
            "rank_r2": rank_per_task(r2).groupby(level="method").mean(),
            "rank_size": rank_per_task(sz, higher_better=False).groupby(level="method").mean(),
            "failed_runs": failures(runs, "r2_test"),
        }
    )
    board["pareto_rank"] = pareto_ranks(board, {"rank_r2": True, "rank_size": True})
    board = board.sort_values(["pareto_rank", "rank_r2"], ascending=[True, False]).rename_axis("method").reset_index()
    return board, per_task


@rule("srbench-groundtruth", {}, release=RELEASE)
def groundtruth(runs: pd.DataFrame, profile: Profile = Profile.REFERENCE) -> Score:
    """Ground-truth problems (the paper's Figure 3): per method and noise level the symbolic solution
    rate (%) and the accuracy solution rate (% of runs with test R2 > 0.999), averaged over datasets;
    table per_data_group: the same per data group (Feynman, Strogatz: ``data_groups``).

    reference (genCSVs.py): per (method, dataset, noise) the mean over the finished runs (failed
    runs have no result and are left out), then the mean over datasets; the solution flag is
    SRBench 2021's (``srbench2021.symbolic_solution``). A row of SRBench's published table
    (``accuracy_solution``: a rate per dataset and noise, no R2) counts with its published rates.
    corrected: a failed run counts as unsolved (a run never attempted is left out)."""
    require(runs, "r2_test", rule="srbench-groundtruth")
    sol = metric_column(runs, RELEASE, "symbolic_solution", profile)
    runs, notes = with_truth(runs)
    if profile == Profile.REFERENCE:  # a published rate row (accuracy_solution) has no r2_test of its own
        rated = runs["accuracy_solution"].notna() if "accuracy_solution" in runs.columns else False
        runs = runs[(runs["status"] == "ok") & (runs["r2_test"].notna() | rated)]
    else:
        runs = attempted(runs)
    ok = runs["status"] == "ok"
    accurate = (runs["r2_test"] > 0.999).astype(float)
    if "accuracy_solution" in runs.columns:
        accurate = runs["accuracy_solution"].astype(float).where(runs["accuracy_solution"].notna(), accurate)
    flags = (
        pd.DataFrame(
            {
                "symbolic_solution_rate": (
                    runs[sol].where(ok, 0).fillna(0).astype(float)
                    if sol in runs.columns
                    else pd.Series(np.nan, index=runs.index)
                ),
                "accuracy_solution_rate": accurate.where(ok, 0.0),
            }
        )
        * 100
    )
    noise = runs["noise"].fillna(0.0) if "noise" in runs.columns else pd.Series(0.0, index=runs.index)
    per = flags.groupby([runs["method"], noise.rename("noise"), runs["task"]]).mean()
    board = per.groupby(level=["method", "noise"]).mean()
    board["datasets"] = per.groupby(level=["method", "noise"]).size()
    board = board.reset_index().sort_values(["noise", "symbolic_solution_rate"], ascending=[True, False])
    per = per.reset_index()
    per["data_group"] = per["task"].map(data_groups(runs))
    by_group = per.groupby(["data_group", "method", "noise"])[list(flags.columns)].mean()
    by_group["datasets"] = per.groupby(["data_group", "method", "noise"]).size()
    return Score(
        "srbench-groundtruth",
        {"profile": profile, "symbolic_solution": sol},
        {"leaderboard": board, "per_task": per, "per_data_group": by_group.reset_index()},
        notes,
    )


def with_truth(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The runs of tasks with a ground truth, and a note naming the others: a rate of solutions
    is over tasks that can be solved (a task without a truth is no unsolved task). Without a
    ``ground_truth`` column (SRBench's tables, a CSV) every task is taken to have one."""
    if "ground_truth" not in runs.columns:
        return runs, []
    truth = runs["ground_truth"].astype("string").str.strip()
    has = (truth.notna() & (truth != "")).groupby(runs["task"]).any()
    without = sorted(has.index[~has].astype(str))
    if not without:
        return runs, []
    shown = ", ".join(without[:5]) + (f" and {len(without) - 5} more" if len(without) > 5 else "")
    note = f"{len(without)} task(s) without a ground truth left out of the solution rates: {shown}"
    return runs[runs["task"].isin(has.index[has])], [note]


def data_groups(runs: pd.DataFrame) -> pd.Series:
    """Each task's data group (the paper's Feynman / Strogatz): the ``data_group`` column of
    SRBench's groundtruth.csv, else the SRBench family a task's name starts with (feynman-...,
    strogatz-...), else the task's track, else "all"."""
    names = runs["task"].drop_duplicates()
    family = names.str.extract(GROUND_TRUTH_FAMILIES, expand=False).str.capitalize()
    track = names.map(runs.groupby("task")["track"].first()) if "track" in runs.columns else None
    groups = family.fillna(track if track is not None else "all").fillna("all")
    if "data_group" in runs.columns:
        given = runs.dropna(subset=["data_group"]).groupby("task")["data_group"].first().astype(str)
        groups = names.map(given).fillna(groups)
    return pd.Series(groups.to_numpy(), index=names.to_numpy())
