"""Statistics over methods x datasets: Friedman with Conover/Nemenyi post-hoc and the critical
difference (for a CD diagram), pairwise Wilcoxon signed-rank with Holm correction, and metric
sensitivity (the ranking under each metric and Kendall's tau between the rankings).

Blocks are datasets, groups are methods; each cell is the per-dataset aggregate of the metric
over runs, failures as the worst value (see ``srtui.results.scoring.base``). Average ranks here follow
the CD-diagram convention: 1 is the best.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from srtui.results.scoring.base import (
    Score,
    ScoreError,
    aggregate,
    attempted,
    rank_per_task,
    require,
    rule,
    snap_ties,
)

AGG = ("median", "mean")


def higher_better(metric: str) -> bool:
    """The ranking direction of a runs-table column: as a declared expression metric's (under any
    release or variant name, results/metrics/declared/) or accuracy metric's
    (srtui.results.metrics.accuracy) declaration says; higher for any other column."""
    from srtui.results.metrics import accuracy, declare

    lower = declare.lower_is_better(metric)
    if lower is None:
        lower = accuracy.lower_is_better(metric)
    return not lower


def matrix(runs: pd.DataFrame, metric: str, agg: str = "median") -> pd.DataFrame:
    """datasets x methods of per-dataset aggregates; failures become the worst finite value, values
    equal within float noise become equal (``snap_ties``). A dataset some method never attempted
    is left out (named in ``attrs["left_out"]``): the tests compare complete blocks only."""
    require(runs, metric, rule="statistics")
    up = higher_better(metric)
    m = aggregate(attempted(runs), metric, agg, higher_better=up).unstack("method")
    left_out = [str(t) for t in m.index[m.isna().any(axis=1)]]
    m = m.dropna()
    m = pd.DataFrame([snap_ties(row) for row in m.to_numpy()], index=m.index, columns=m.columns)
    finite = m.to_numpy()[np.isfinite(m.to_numpy())]
    if finite.size == 0:
        raise ScoreError(f"no finite values of {metric!r} to compare")
    # ties at the worst: a failure is worse than every real value, and all failures are equal
    worst = finite.min() - 1.0 if up else finite.max() + 1.0
    m = m.replace([np.inf, -np.inf], worst)
    m.attrs["left_out"] = left_out
    return m


def left_out_note(m: pd.DataFrame) -> list[str]:
    """The note naming the datasets ``matrix`` left out (some method never attempted them)."""
    names = m.attrs.get("left_out") or []
    if not names:
        return []
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return [f"{len(names)} dataset(s) left out, not every method has a finished or failed run there: {shown}"]


@rule("friedman", {"metric": ("r2_test", None), "agg": ("median", AGG), "alpha": (0.05, None)})
def friedman(runs: pd.DataFrame, metric: str = "r2_test", agg: str = "median", alpha: float = 0.05) -> Score:
    """Friedman test over datasets, average ranks (1 = best), the Nemenyi critical difference,
    Conover (Holm-adjusted) and Nemenyi post-hoc p-values."""
    from scipy import stats as sstats  # slow to import: only here

    m = matrix(runs, metric, agg)
    k, n = m.shape[1], m.shape[0]
    if k < 3 or n < 2:
        raise ScoreError(f"Friedman needs at least 3 methods and 2 datasets (have {k} and {n})")
    data = m.to_numpy() if higher_better(metric) else -m.to_numpy()
    stat, p = sstats.friedmanchisquare(*data.T)
    avg = pd.DataFrame(sstats.rankdata(-data, axis=1), columns=m.columns).mean()  # ties averaged
    q = sstats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    cd = float(q * np.sqrt(k * (k + 1) / (6.0 * n)))
    board = pd.DataFrame({"average_rank": avg}).sort_values("average_rank").rename_axis("method").reset_index()
    import scikit_posthocs as sph  # slow to import: only here

    conover = sph.posthoc_conover_friedman(pd.DataFrame(data, columns=m.columns), p_adjust="holm")
    nemenyi = sph.posthoc_nemenyi_friedman(pd.DataFrame(data, columns=m.columns))
    summary = pd.DataFrame(
        {
            "statistic": [float(stat)],
            "p_value": [float(p)],
            "methods": [k],
            "datasets": [n],
            "critical_difference": [cd],
            "alpha": [alpha],
        }
    )
    return Score(
        "friedman",
        {"metric": metric, "agg": agg, "alpha": alpha},
        {
            "average_ranks": board,
            "friedman": summary,
            "conover_holm": conover.rename_axis("method").reset_index(),
            "nemenyi": nemenyi.rename_axis("method").reset_index(),
        },
        notes=left_out_note(m),
    )


@rule("wilcoxon", {"metric": ("r2_test", None), "agg": ("median", AGG), "alpha": (0.05, None)})
def wilcoxon(runs: pd.DataFrame, metric: str = "r2_test", agg: str = "median", alpha: float = 0.05) -> Score:
    """Paired two-sided Wilcoxon signed-rank test of every pair of methods over datasets, Holm-corrected."""
    from scipy import stats as sstats  # slow to import: only here

    m = matrix(runs, metric, agg)
    if m.shape[1] < 2 or m.shape[0] < 2:
        raise ScoreError("Wilcoxon needs at least 2 methods and 2 datasets")
    rows = []
    for a, b in itertools.combinations(m.columns, 2):
        d = m[a] - m[b]
        if np.allclose(d, 0):
            rows.append((a, b, np.nan, 1.0, float(d.median())))
            continue
        res = sstats.wilcoxon(m[a], m[b], zero_method="wilcox")
        rows.append((a, b, float(res.statistic), float(res.pvalue), float(d.median())))
    from statsmodels.stats.multitest import multipletests  # slow to import: only here

    table = pd.DataFrame(rows, columns=["method_a", "method_b", "statistic", "p_value", "median_difference"])
    reject, p_holm, _, _ = multipletests(table["p_value"], alpha=alpha, method="holm")
    table["p_holm"], table["significant"] = p_holm, reject
    return Score("wilcoxon", {"metric": metric, "agg": agg, "alpha": alpha}, {"pairs": table}, left_out_note(m))


DEFAULT_METRICS = ("r2_test", "simplicity", "symbolic_solution", "ted_norm", "feature_absence", "nmse_test")


@rule("sensitivity", {"metrics": (",".join(DEFAULT_METRICS), None), "agg": ("median", AGG)})
def sensitivity(runs: pd.DataFrame, metrics: str = ",".join(DEFAULT_METRICS), agg: str = "median") -> Score:
    """Mean dense rank per method (higher is better) under each metric, and Kendall's tau between
    every two of those rankings: how much the leaderboard depends on the metric chosen."""
    from scipy import stats as sstats  # slow to import: only here

    names = [x.strip() for x in str(metrics).split(",") if x.strip()]
    names = [x for x in names if x in runs.columns and runs[x].notna().any()]
    if len(names) < 2:
        raise ScoreError("metric sensitivity needs at least 2 metrics with values in the runs table")
    runs = attempted(runs)
    ranking = pd.DataFrame(
        {
            x: rank_per_task(aggregate(runs, x, agg, higher_better(x)), higher_better(x)).groupby(level="method").mean()
            for x in names
        }
    )
    taus = []
    for a, b in itertools.combinations(names, 2):
        tau, p = sstats.kendalltau(ranking[a], ranking[b])
        taus.append((a, b, float(tau), float(p)))
    return Score(
        "sensitivity",
        {"metrics": ",".join(names), "agg": agg},
        {
            "rankings": ranking.rename_axis("method").reset_index(),
            "kendall_tau": pd.DataFrame(taus, columns=["metric_a", "metric_b", "tau", "p_value"]),
        },
    )
