"""SRBench 2.0 (2025): performance profiles of test R2 with their area, Pareto fronts, deprecation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.base import (
    Score,
    aggregate,
    attempted,
    complete,
    failures,
    metric_column,
    require,
    rule,
    shown,
)
from srtui.results.scoring.resources import method_medians
from srtui.results.scoring.rules.srbench2021 import pareto_ranks

RELEASE = "srbench2025"
#: the reference's shares are over every dataset some method finished (``n_datasets``)
MISSING_DIVIDED_IN = (
    "perfprof_plots.ipynb divides each curve by every dataset, so a dataset without a result of the method "
    "counts as failed"
)
PUBLISHED_GRID = np.linspace(0, 1, 51)  # perfprof_plots.ipynb's base_fpr


def published_curve(values: np.ndarray, n_problems: int, grid: np.ndarray = PUBLISHED_GRID) -> np.ndarray:
    """perfprof_plots.ipynb's curve of one set of results (each R2 >= 0, one per problem): points
    (0, share >= 0) and (k, share >= k) for each distinct k > 0, interpolated linearly on the grid
    and held flat after the last point (np.interp), shares over all ``n_problems``."""
    v = np.sort(np.asarray(values, float))
    xs, counts = np.unique(v, return_counts=True)
    left = len(v) - np.concatenate([[0], np.cumsum(counts)[:-1]])  # results >= each distinct value
    keep = xs != 0
    px = np.concatenate([[0.0], xs[keep]])
    py = np.concatenate([[len(v)], left[keep]]) / n_problems
    shares: np.ndarray = np.interp(grid, px, py)
    return shares


def published_auc(values: np.ndarray, n_problems: int) -> float:
    y = published_curve(values, n_problems)
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(PUBLISHED_GRID)))  # sklearn.metrics.auc


def profile_auc(values: np.ndarray) -> float:
    """Area under x -> P[R2 >= x] on [0, 1], exactly: the mean of R2 clipped to [0, 1]."""
    v = np.nan_to_num(np.asarray(values, float), nan=0.0, neginf=0.0, posinf=1.0)
    return float(np.mean(np.clip(v, 0.0, 1.0))) if len(v) else np.nan


def performance_profiles(runs: pd.DataFrame, xs: np.ndarray, profile: Profile = Profile.REFERENCE) -> pd.DataFrame:
    """P[R2 >= x] of each method (rows) at each ``x`` (columns ``P[R2>=x]``), exactly as the
    rule's leaderboard has them under ``profile``: the one performance profile of srtui (the
    app's plots draw it too). ``runs`` is a runs table (srtui.results.scoring.tables)."""
    require(runs, "r2_test", rule="srbench2025")
    reference = profile == Profile.REFERENCE
    board, _ = (_reference if reference else _corrected)(
        (complete if reference else attempted)(runs), np.asarray(xs, float)
    )
    return board[[f"P[R2>={x:g}]" for x in xs]]


@rule("srbench2025", {"grid": (11, None)}, release=RELEASE)
def srbench2025(runs: pd.DataFrame, profile: Profile = Profile.REFERENCE, grid: int = 11) -> Score:
    """Performance profiles P[R2 >= x] over datasets with their area (AUC) per method, the AUC per
    (dataset, method) over runs, Pareto fronts of median size vs median R2 per dataset with the
    ground truth marked, and the methods on no front (up for deprecation).

    reference (perfprof_plots.ipynb): a missing R2 is -1 and results below 0 are left out; per
    method and seed the curve through (k, share of datasets with R2 >= k), interpolated linearly on
    51 points and flat after the last point; AUC by the trapezoid rule; median over seeds. Per
    (dataset, method) the same over seeds (shares of all seeds).
    corrected: the exact area of the step function (the mean of R2 clipped to [0, 1]) of each
    dataset's best run, failures as 0.

    Both profiles add the cost of the methods (the paper's Figure 1): per method the median
    energy (kWh and J) and the median training time (fit_s) of its single runs (table
    energy_time, from srtui.results.scoring.resources; runs without an energy figure are left out)."""
    require(runs, "r2_test", rule="srbench2025")
    size = metric_column(runs, RELEASE, "size", profile)
    cost, notes = _energy_time(runs)
    xs = np.linspace(0, 1, int(grid))
    if profile == Profile.REFERENCE:
        runs = complete(runs)
        board, per_dataset = _reference(runs, xs)
        notes += _flat_tail_note(runs, per_dataset)
    else:
        runs = attempted(runs)
        board, per_dataset = _corrected(runs, xs)
    board["failed_runs"] = failures(runs, "r2_test").reindex(board.index).fillna(0).astype(int)
    tables = {
        "leaderboard": board.sort_values("auc", ascending=False).rename_axis("method").reset_index(),
        "auc_per_dataset": per_dataset,
    }
    if size in runs.columns:
        tables.update(_fronts(runs, size))
    if cost is not None:
        tables["energy_time"] = cost
    result = Score("srbench2025", {"profile": profile, "grid": int(grid), "size": size}, tables, notes)
    if profile == Profile.REFERENCE:
        result.missing_as_failures = MISSING_DIVIDED_IN
    return result


def _energy_time(runs: pd.DataFrame) -> tuple[pd.DataFrame | None, list[str]]:
    """The Figure 1 table, or a note saying why there is none (a CSV of runs made elsewhere)."""
    if "energy_j" not in runs.columns or not runs["energy_j"].notna().any():
        return None, ["no run has an energy figure: no energy_time table (Figure 1)"]
    measured = runs.reindex(columns=[*runs.columns, *({"energy_method", "fit_s"} - set(runs.columns))])
    return method_medians(measured), []


def _reference(runs: pd.DataFrame, xs: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    done = runs[runs["status"] == "ok"]  # a failed SRBench run has no result row at all
    n_datasets, n_seeds = done["task"].nunique(), done["seed"].nunique()
    r2 = done["r2_test"].astype(float).fillna(-1.0)  # df.fillna(-1); R2 < 0 -> -1
    done = done.assign(r2=r2)[r2 >= 0]
    rows = []
    for method, frame in done.groupby("method"):
        curves = [published_curve(f["r2"].to_numpy(), n_datasets) for _, f in frame.groupby("seed")]
        if not curves:  # no run of it has a seed (a crafted workspace): nothing to draw
            continue
        aucs = [float(np.sum((c[1:] + c[:-1]) / 2 * np.diff(PUBLISHED_GRID))) for c in curves]
        median_curve = np.median(np.vstack(curves), axis=0)
        rows.append(
            {
                "method": method,
                "auc": float(np.median(aucs)),
                "seeds": len(aucs),
                "datasets": int(frame["task"].nunique()),
                **{f"P[R2>={x:g}]": float(np.interp(x, PUBLISHED_GRID, median_curve)) for x in xs},
            }
        )
    board = pd.DataFrame(rows).set_index("method") if rows else pd.DataFrame(columns=["auc"])
    board = board.reindex(runs["method"].unique())  # a method without a result >= 0: no curve, NaN
    per = done.groupby(["task", "method"])["r2"].agg(lambda v: published_auc(v.to_numpy(), n_seeds))
    return board, per.rename("auc").reset_index()


def _flat_tail_note(runs: pd.DataFrame, per_dataset: pd.DataFrame) -> list[str]:
    """One footnote where the reference AUC looks wrong to a reader: the published curve is held
    flat after a method's highest R2 (np.interp), so a dataset's AUC can be 1 at R2 0.94 while a
    better method gets less. Names the largest such gap; empty when no AUC exceeds the exact
    area (the mean R2 clipped to [0, 1]) by more than 0.01. Short: two lines at 80 columns with
    method and task names of up to 24 characters together (the app's Board opens it with n); the
    fidelity table of docs/scoring.md says more."""
    ok = runs[runs["status"] == "ok"]
    if ok.empty or per_dataset.empty:
        return []
    r2 = ok["r2_test"].astype(float)
    exact = r2.clip(0.0, 1.0).fillna(0.0).groupby([ok["task"], ok["method"]]).mean().rename("exact")
    median = r2.groupby([ok["task"], ok["method"]]).median().rename("median_r2")
    table = per_dataset.join(exact, on=["task", "method"]).join(median, on=["task", "method"])
    gap = table["auc"] - table["exact"]
    if not (gap > 0.01).any():
        return []
    worst = table.iloc[int(np.argmax(gap.to_numpy()))]
    return [
        f"{worst['method']} on {worst['task']}: AUC {worst['auc']:.3g} at median R2 {worst['median_r2']:.3g}; "
        "SRBench 2.0 holds a curve flat after its highest R2 (exact: -o profile=corrected)"
    ]


def _corrected(runs: pd.DataFrame, xs: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    vals = runs["r2_test"].astype(float).where((runs["status"] == "ok"), -np.inf).fillna(-np.inf)
    keys = [runs["task"], runs["method"]]
    best = vals.groupby(keys).max()
    by_method = best.groupby(level="method")
    prof = pd.DataFrame({f"P[R2>={x:g}]": (best >= x).groupby(level="method").mean() for x in xs})
    # the exact area under x -> P[R2 >= x] on [0, 1] is the mean of R2 clipped to [0, 1]
    board = pd.DataFrame(
        {
            "auc": best.clip(0.0, 1.0).groupby(level="method").mean(),
            # the same count columns as the reference profile's (a reader compares the two tables)
            "seeds": runs.groupby("method")["seed"].nunique() if "seed" in runs.columns else 1,
            "datasets": by_method.size(),
        }
    ).join(prof)
    per_dataset = vals.clip(0.0, 1.0).groupby(keys).mean().rename("auc").reset_index()
    return board, per_dataset


def _fronts(runs: pd.DataFrame, size: str) -> dict[str, pd.DataFrame]:
    """Per dataset the Pareto front of (median R2, median size); no published code: both profiles."""
    med_r2 = aggregate(runs, "r2_test", "median")
    med_sz = aggregate(runs, size, "median", higher_better=False)
    pts = pd.DataFrame({"r2_test": med_r2, "size": med_sz}).reset_index()
    pts["on_front"] = False
    for _, frame in pts.groupby("task"):
        ok = frame[np.isfinite(frame["r2_test"]) & np.isfinite(frame["size"])]
        if len(ok):
            pts.loc[ok.index, "on_front"] = pareto_ranks(ok, {"r2_test": True, "size": False}) == 1
    if "truth_size" in runs.columns:
        truth = runs.groupby("task")["truth_size"].first().dropna()
        pts = pd.concat(
            [
                pts,
                pd.DataFrame(
                    {
                        "task": truth.index,
                        "method": "(ground truth)",
                        "r2_test": 1.0,
                        "size": truth.values,
                        "on_front": np.nan,
                    }
                ),
            ]
        )
    pts["r2_test"], pts["size"] = shown(pts["r2_test"]), shown(pts["size"])
    methods = pts[pts["method"] != "(ground truth)"]
    fronts = methods.groupby("method")["on_front"].sum().astype(int)
    return {
        "pareto": pts.sort_values(["task", "method"]).reset_index(drop=True),
        "deprecation": pd.DataFrame({"fronts": fronts, "deprecated": fronts == 0}).rename_axis("method").reset_index(),
    }
