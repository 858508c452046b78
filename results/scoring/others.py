"""SRBench 2021 (La Cava et al.) and SRBench 2.0 / 2025 (performance profiles, Pareto fronts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from results.scoring.base import (
    Score,
    aggregate,
    complete,
    failures,
    rank_per_task,
    require,
    shown,
)


def pareto_ranks(points: pd.DataFrame, maximise: dict[str, bool]) -> pd.Series:
    """Non-dominated sorting: 1 for the first front, 2 for the next, ... (NaN rows go last)."""
    cols = list(maximise)
    v = points[cols].astype(float).copy()
    for c, up in maximise.items():
        v[c] = v[c] if up else -v[c]
    v = v.fillna(-np.inf).to_numpy()
    left, rank, out = set(range(len(v))), 1, np.zeros(len(v), dtype=int)
    while left:
        front = {i for i in left
                 if not any(np.all(v[j] >= v[i]) and np.any(v[j] > v[i]) for j in left if j != i)}
        for i in front:
            out[i] = rank
        left -= front
        rank += 1
    return pd.Series(out, index=points.index)


def _size_col(runs: pd.DataFrame, prefer: str) -> str:
    return prefer if prefer in runs.columns else ("size" if "size" in runs.columns else "size_simplified")


def srbench2021(runs: pd.DataFrame, agg: str = "median", size: str = "size_simplified") -> Score:
    """Median test R2 and model size per dataset; mean dense ranks over datasets (higher is
    better: high R2, small size); Pareto ranks of the methods on (R2 rank, size rank); solution
    rate per noise level (share of runs that are symbolic solutions; failures count as unsolved)."""
    require(runs, "r2_test", rule="srbench2021")
    size = _size_col(runs, size)
    require(runs, size, rule="srbench2021")
    runs = complete(runs)
    r2, sz = aggregate(runs, "r2_test", agg), aggregate(runs, size, agg, higher_better=False)
    board = pd.DataFrame({
        f"{agg}_r2_test": shown(r2).groupby(level="method").median(),
        f"{agg}_{size}": shown(sz).groupby(level="method").median(),
        "rank_r2": rank_per_task(r2).groupby(level="method").mean(),
        "rank_size": rank_per_task(sz, higher_better=False).groupby(level="method").mean(),
        "failed_runs": failures(runs, "r2_test"),
    })
    board["pareto_rank"] = pareto_ranks(board, {"rank_r2": True, "rank_size": True})
    board = board.sort_values(["pareto_rank", "rank_r2"], ascending=[True, False]).rename_axis("method").reset_index()
    tables = {"leaderboard": board}
    if "symbolic_solution" in runs.columns and runs["symbolic_solution"].notna().any():
        sol = runs["symbolic_solution"].where(runs["status"] == "ok", 0).fillna(0).astype(float)
        noise = runs["noise"].fillna(0.0) if "noise" in runs.columns else pd.Series(0.0, index=runs.index)
        rate = (sol.groupby([runs["method"], noise.rename("noise")]).mean() * 100).unstack("noise")
        rate.columns = [f"solution_rate_noise_{c:g}" for c in rate.columns]
        tables["solution_rate"] = rate.rename_axis("method").reset_index()
    return Score("srbench2021", {"agg": agg, "size": size}, tables)


def profile_auc(values: np.ndarray) -> float:
    """Area under x -> P[R2 >= x] on [0, 1], exactly: the mean of R2 clipped to [0, 1]."""
    v = np.nan_to_num(np.asarray(values, float), nan=0.0, neginf=0.0, posinf=1.0)
    return float(np.mean(np.clip(v, 0.0, 1.0))) if len(v) else np.nan


def srbench2025(runs: pd.DataFrame, size: str = "size", grid: int = 11) -> Score:
    """Performance profiles P[R2 >= x] with their AUC per method (over datasets, each dataset's
    best run: max aggregation) and per (dataset, method) over runs; Pareto fronts of median size vs
    median R2 per dataset with the ground truth marked; methods on no front are up for deprecation."""
    require(runs, "r2_test", rule="srbench2025")
    size = _size_col(runs, size)
    runs = complete(runs)
    vals = runs["r2_test"].astype(float).where((runs["status"] == "ok"), -np.inf).fillna(-np.inf)
    best = vals.groupby([runs["task"], runs["method"]]).max()
    auc = best.groupby(level="method").agg(profile_auc)
    xs = np.linspace(0, 1, grid)
    prof = pd.DataFrame({f"P[R2>={x:g}]": best.groupby(level="method").agg(lambda v, x=x: float(np.mean(v >= x)))
                         for x in xs})
    board = pd.DataFrame({"auc": auc, "datasets": best.groupby(level="method").size(),
                          "failed_runs": failures(runs, "r2_test")}).join(prof)
    per_dataset = vals.groupby([runs["task"], runs["method"]]).agg(profile_auc).rename("auc").reset_index()
    tables = {"leaderboard": board.sort_values("auc", ascending=False).rename_axis("method").reset_index(),
              "auc_per_dataset": per_dataset}
    if size in runs.columns:
        med_r2 = aggregate(runs, "r2_test", "median")
        med_sz = aggregate(runs, size, "median", higher_better=False)
        pts = pd.DataFrame({"r2_test": med_r2, "size": med_sz}).reset_index()
        pts["on_front"] = False
        for task, frame in pts.groupby("task"):
            ok = frame[np.isfinite(frame["r2_test"]) & np.isfinite(frame["size"])]
            if len(ok):
                pts.loc[ok.index, "on_front"] = pareto_ranks(ok, {"r2_test": True, "size": False}) == 1
        if "truth_size" in runs.columns:
            truth = runs.groupby("task")["truth_size"].first().dropna()
            pts = pd.concat([pts, pd.DataFrame({"task": truth.index, "method": "(ground truth)",
                                                "r2_test": 1.0, "size": truth.values, "on_front": np.nan})])
        pts["r2_test"], pts["size"] = shown(pts["r2_test"]), shown(pts["size"])
        tables["pareto"] = pts.sort_values(["task", "method"]).reset_index(drop=True)
        methods = pts[pts["method"] != "(ground truth)"]
        fronts = methods.groupby("method")["on_front"].sum().astype(int)
        tables["deprecation"] = pd.DataFrame({"fronts": fronts, "deprecated": fronts == 0}).rename_axis("method").reset_index()
    return Score("srbench2025", {"size": size, "grid": grid}, tables)
