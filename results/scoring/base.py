"""What every scoring rule shares: the result type, options, aggregation and ranking.

Conventions (all rules):

- ranks are dense and **higher is better**: on each dataset the best value gets the highest rank,
  equal values share a rank, the next value gets the next integer;
- a failed run (status not ``ok``, or a missing metric) counts as the worst possible value, and a
  (task, method, seed) that another method has but this one lacks counts as a failed run: a
  failure can only take the worst rank, never a better one;
- runs of one (task, method) are aggregated with the median (option: mean); when a run failed the
  aggregate is computed with the failure as -inf (so a median over mostly failed runs is a failure).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats as sstats


class ScoreError(ValueError):
    """A rule cannot be applied to these runs (or an unknown rule/option); one line for the CLI."""


@dataclass
class Score:
    rule: str
    options: dict[str, Any]
    tables: dict[str, pd.DataFrame]  # the first one is the leaderboard
    notes: list[str] = field(default_factory=list)

    @property
    def main(self) -> pd.DataFrame:
        return next(iter(self.tables.values()))


@dataclass(frozen=True)
class Rule:
    name: str
    doc: str
    fn: Callable[..., Score]
    options: dict[str, tuple[Any, tuple[Any, ...] | None]]  # name -> (default, allowed or None)

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        unknown = set(given) - set(self.options)
        if unknown:
            raise ScoreError(f"rule {self.name!r} has no option(s) {', '.join(sorted(unknown))} "
                             f"(options: {', '.join(self.options) or 'none'})")
        opts = {}
        for key, (default, allowed) in self.options.items():
            value = given.get(key, default)
            if allowed is not None and value not in allowed:
                raise ScoreError(f"option {key}={value!r} of rule {self.name!r} must be one of {', '.join(map(str, allowed))}")
            opts[key] = value
        return opts


AGG = {"median": np.median, "mean": np.mean}


def require(runs: pd.DataFrame, *cols: str, rule: str) -> None:
    missing = [c for c in cols if c not in runs.columns]
    if missing:
        raise ScoreError(f"rule {rule!r} needs column(s) {', '.join(missing)} in the runs table (metrics not computed yet? run `srtui rescore`)")
    if runs.empty:
        raise ScoreError(f"rule {rule!r}: no runs to score")


def complete(runs: pd.DataFrame) -> pd.DataFrame:
    """Add a failed run for every (task, method, seed) some method ran on a task and this one lacks."""
    seeds = runs.groupby("task")["seed"].unique()
    methods = runs["method"].unique()
    grid = pd.DataFrame(
        [(t, m, s) for t, ss in seeds.items() for m in methods for s in ss], columns=["task", "method", "seed"]
    )
    have = runs.drop_duplicates(["task", "method", "seed"])
    out = grid.merge(have, on=["task", "method", "seed"], how="left", indicator=True)
    out.loc[out["_merge"] == "left_only", "status"] = "missing"
    return out.drop(columns="_merge")


def failed(runs: pd.DataFrame, col: str) -> pd.Series:
    return (runs["status"] != "ok") | runs[col].isna()


def aggregate(runs: pd.DataFrame, col: str, how: str = "median", higher_better: bool = True) -> pd.Series:
    """Per (task, method): the aggregate of ``col`` over runs, failures as the worst value (+-inf)."""
    worst = -np.inf if higher_better else np.inf
    vals = runs[col].astype(float).where(~failed(runs, col), worst)
    f = AGG[how]
    return vals.groupby([runs["task"], runs["method"]]).agg(lambda v: float(f(v.to_numpy())))


def dense_rank(values: pd.Series, higher_better: bool = True) -> pd.Series:
    """Dense ranks, higher is better; NaN and the failure value rank worst (1) together."""
    v = values.astype(float)
    v = v if higher_better else -v
    return v.fillna(-np.inf).rank(method="dense", ascending=True).astype(int)


def rank_per_task(agg: pd.Series, higher_better: bool = True) -> pd.Series:
    """Dense ranks of the methods within each task of a (task, method)-indexed Series."""
    return agg.groupby(level="task", group_keys=False).apply(lambda s: dense_rank(s, higher_better))


def hmean(*ranks: pd.Series) -> pd.Series:
    frame = pd.concat(ranks, axis=1).astype(float)
    return pd.Series(sstats.hmean(frame.to_numpy(), axis=1), index=frame.index)


def shown(s: pd.Series) -> pd.Series:
    """A value for display: the failure value (+-inf) is shown as missing."""
    return s.replace([np.inf, -np.inf], np.nan)


def failures(runs: pd.DataFrame, col: str) -> pd.Series:
    return failed(runs, col).groupby(runs["method"]).sum().astype(int)
