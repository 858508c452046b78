"""What every scoring rule shares: the registry, the result type, options, aggregation, ranking.

A rule is one function registered with ``@rule(name, options, release=...)`` in one module of this
package (every module here is imported by ``srtui.results.scoring``): its docstring is its documentation.
A rule of a published release gets the option ``profile``: ``reference`` (default) reproduces the
publication's code, quirks included; ``corrected`` is srtui's variant, whose conventions are:

- ranks are dense and **higher is better**: on each dataset the best value gets the highest rank,
  equal values share a rank, the next value gets the next integer;
- a failed run (status not ``ok``, or a missing metric) counts as the worst possible value: a
  failure can only take the worst rank, never a better one; a run never attempted (a (task,
  method, seed) that another method has but this one lacks) or still pending is left out of the
  row, counted in its ``missing``/``pending`` columns and named in a note
  (``srtui.results.scoring.coverage``);
- values equal within float noise (``TIE_RTOL``) are equal: they share a rank;
- runs of one (task, method) are aggregated with the median (option: mean); when a run failed the
  aggregate is computed with the failure as -inf (so a median over mostly failed runs is a failure).

The reference helpers at the end (``drop_failed``, ``n_minus_dense_rank``, ``scipy_hmean``) are the
published code's own steps, shared by the reference profiles.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import RETRY_AUTOMATIC
from srtui.results.metrics.profiles import PROFILES, Profile


class ScoreError(SrtuiError, ValueError):
    """A rule cannot be applied to these runs (or an unknown rule/option); one line for the CLI."""


@dataclass
class Score:
    rule: str
    options: dict[str, Any]  # every option the rule applied, ``profile`` included when it has one
    tables: dict[str, pd.DataFrame]  # the first one is the leaderboard
    notes: list[str] = field(default_factory=list)
    #: one line per difference from a published protocol, shown under the table (srtui.results.scoring.published)
    warnings: list[str] = field(default_factory=list)
    #: the published sources of some rows: "published: <release>" -> its citation
    sources: dict[str, str] = field(default_factory=dict)
    #: set by a reference profile whose publication counted a missing run as a failure: how it did
    #: (the coverage note quotes it, srtui.results.scoring.coverage)
    missing_as_failures: str | None = None

    @property
    def profile(self) -> Profile | None:
        value = self.options.get("profile")
        return None if value is None else Profile(value)

    @property
    def main(self) -> pd.DataFrame:
        return next(iter(self.tables.values()))


@dataclass(frozen=True)
class Rule:
    name: str
    doc: str
    fn: Callable[..., Score]
    options: dict[str, tuple[Any, tuple[Any, ...] | None]]  # name -> (default, allowed or None)
    release: str | None = None  # the publication whose metric definitions the rule reads
    needs_trust: bool = False  # takes expert trust ratings (``trust=``)

    @property
    def summary(self) -> str:
        return " ".join((self.doc or "").split("\n\n")[0].split())

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        unknown = set(given) - set(self.options)
        if unknown:
            raise ScoreError(
                f"rule {self.name!r} has no option(s) {', '.join(sorted(unknown))} "
                f"(options: {', '.join(self.options) or 'none'})"
            )
        opts = {}
        for key, (default, allowed) in self.options.items():
            value = given.get(key, default)
            if allowed is not None and value not in allowed:
                raise ScoreError(
                    f"option {key}={value!r} of rule {self.name!r} must be one of {', '.join(map(str, allowed))}"
                )
            opts[key] = type(default)(value) if isinstance(default, Profile) else value
        return opts


RULES: dict[str, Rule] = {}


def rule(
    name: str,
    options: dict[str, tuple[Any, tuple[Any, ...] | None]] | None = None,
    release: str | None = None,
    needs_trust: bool = False,
) -> Callable[[Callable[..., Score]], Callable[..., Score]]:
    """Register the decorated function as the scoring rule ``name``. A rule of a ``release`` gets the
    option ``profile`` (reference, corrected); the function's docstring documents the rule."""
    opts = dict(options or {})
    if release is not None:
        opts = {"profile": (Profile.REFERENCE, PROFILES), **opts}

    def register(fn: Callable[..., Score]) -> Callable[..., Score]:
        if name in RULES:
            raise ValueError(f"scoring rule {name!r} registered twice")
        RULES[name] = Rule(name, fn.__doc__ or "", fn, opts, release, needs_trust)
        return fn

    return register


def metric_column(runs: pd.DataFrame, release: str, name: str, profile: Profile = Profile.REFERENCE) -> str:
    """The runs table's column holding metric ``name`` as ``release`` defines it: ``release.name``
    (``release.name:corrected`` first under profile corrected), else the plain ``name`` (a
    ``--from-csv`` file); a column without a single value counts as absent."""
    corrected = [f"{release}.{Profile.CORRECTED.metric(name)}"] if profile == Profile.CORRECTED else []
    candidates = [*corrected, f"{release}.{name}", name]
    for col in candidates:
        if col in runs.columns and runs[col].notna().any():
            return col
    return next((c for c in candidates if c in runs.columns), name)


AGG = {"median": np.median, "mean": np.mean}


def require(runs: pd.DataFrame, *cols: str, rule: str) -> None:
    missing = [c for c in cols if c not in runs.columns]
    if missing:
        raise ScoreError(
            f"rule {rule!r} needs column(s) {', '.join(missing)} in the "
            "runs table (a workspace: metrics not computed yet? run `srtui rescore`; a CSV: "
            "`srtui export --format csv` writes the metrics, `srtui results` does not)"
        )
    if runs.empty:
        raise ScoreError(f"rule {rule!r}: no runs to score")


#: statuses of runs that were never attempted (``complete`` adds them) or are not finished yet:
#: pending, running, or to be run again (interrupted, lost: the job never got a fair chance)
MISSING, PENDING = ("missing",), ("pending", "running", *sorted(RETRY_AUTOMATIC))
NOT_RUN = MISSING + PENDING
#: values this close (relative) are equal for every rank: the same predictions give R2 values
#: 2e-16 apart, and such noise must not rank two methods apart
TIE_RTOL = 1e-12


RUN_KEYS = ["task", "method", "seed"]


def complete(runs: pd.DataFrame) -> pd.DataFrame:
    """Add a run of status ``missing`` for every (task, method, seed) some method ran on a task and
    this one lacks (the published codes that count a missing run as a failure). The rows come
    per task (sorted), then method (as they first appear), then seed (as it first appears on the
    task); the key columns hold Python objects (a column left empty is float: keys meet as objects)."""
    seeds = runs.groupby("task")["seed"].unique()
    methods = pd.Index(runs["method"].unique())
    have = runs.drop_duplicates(RUN_KEYS)
    if len(seeds):
        # the grid built from the runs' own arrays and joined on their own dtypes: a report of
        # 100,000 runs completes its runs a few times per suite, and object keys cost 60 ms each
        sizes = np.fromiter((len(ss) for ss in seeds), dtype=np.intp, count=len(seeds))
        grid = pd.DataFrame(
            {
                "task": seeds.index.repeat(sizes * len(methods)),
                "method": methods.take(np.concatenate([np.repeat(np.arange(len(methods)), n) for n in sizes])),
                "seed": np.concatenate([np.tile(np.asarray(ss), len(methods)) for ss in seeds]),
            }
        )
        out = grid.merge(have, on=RUN_KEYS, how="left", indicator=True).astype(dict.fromkeys(RUN_KEYS, object))
    else:
        keys = dict.fromkeys(RUN_KEYS, object)
        grid = pd.DataFrame(columns=RUN_KEYS).astype(keys)
        out = grid.merge(have.astype(keys), on=RUN_KEYS, how="left", indicator=True)
    out.loc[out["_merge"] == "left_only", "status"] = "missing"
    return out.drop(columns="_merge")


def attempted(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that were attempted and ended: neither missing nor pending (nor running)."""
    return runs[~runs["status"].isin(NOT_RUN)]


def failed(runs: pd.DataFrame, col: str) -> pd.Series:
    return (runs["status"] != "ok") | runs[col].isna()


def snap_ties(values: pd.Series | np.ndarray, rtol: float = TIE_RTOL) -> np.ndarray:
    """``values`` with each sorted value within ``rtol`` (relative) of its group's first value set to
    that value, so that float noise ties under any ranking; NaN and +-inf are kept."""
    v = np.asarray(values, dtype=float).copy()
    order = np.argsort(v, kind="stable")
    finite = order[np.isfinite(v[order])]
    for prev, cur in itertools.pairwise(finite):
        a, b = v[prev], v[cur]
        if b - a <= rtol * max(abs(a), abs(b)):
            v[cur] = a  # ``a`` is the group's first value: a slow drift starts a new group
    return v


def aggregate(runs: pd.DataFrame, col: str, how: str = "median", higher_better: bool = True) -> pd.Series:
    """Per (task, method): the aggregate of ``col`` over runs, failures as the worst value (+-inf)."""
    worst = -np.inf if higher_better else np.inf
    vals = runs[col].astype(float).where(~failed(runs, col), worst)
    grouped = vals.groupby([runs["task"], runs["method"]])
    return (grouped.median() if how == "median" else grouped.mean()).astype(float)


def dense_rank(values: pd.Series, higher_better: bool = True) -> pd.Series:
    """Dense ranks, higher is better; NaN and the failure value rank worst (1) together."""
    v = pd.Series(snap_ties(values), index=values.index)
    v = v if higher_better else -v
    return v.fillna(-np.inf).rank(method="dense", ascending=True).astype(int)


def rank_per_task(agg: pd.Series, higher_better: bool = True) -> pd.Series:
    """Dense ranks of the methods within each task of a (task, method)-indexed Series (values equal
    within float noise share a rank)."""
    v = agg.astype(float).groupby(level="task", group_keys=False).transform(lambda s: snap_ties(s.to_numpy()))
    v = (v if higher_better else -v).fillna(-np.inf)
    return v.groupby(level="task").rank(method="dense", ascending=True).astype(int)


def _row_hmean(values: np.ndarray) -> np.ndarray:
    """scipy.stats.hmean of each row (scipy.stats takes 1.5 s to import): a 0 gives 0, a NaN NaN."""
    with np.errstate(divide="ignore"):
        out = values.shape[1] / np.sum(1.0 / values, axis=1)
    return np.where(np.isnan(values).any(axis=1), np.nan, out)


def hmean(*ranks: pd.Series) -> pd.Series:
    frame = pd.concat(ranks, axis=1).astype(float)
    return pd.Series(_row_hmean(frame.to_numpy()), index=frame.index)


def shown(s: pd.Series) -> pd.Series:
    """A value for display: the failure value (+-inf) is shown as missing."""
    return s.replace([np.inf, -np.inf], np.nan)


def failures(runs: pd.DataFrame, col: str) -> pd.Series:
    """Failed runs per method: only runs that were attempted (a missing or pending run is none)."""
    return (failed(runs, col) & ~runs["status"].isin(NOT_RUN)).groupby(runs["method"]).sum().astype(int)


# --- the published code's own steps (reference profiles) -------------------------------------


def drop_failed(runs: pd.DataFrame, col: str = "r2_test") -> pd.DataFrame:
    """SRBench writes no result file for a failed run: a run that is not ok, or has no ``col``, is
    simply absent (the published code averages the runs that finished)."""
    return runs[(runs["status"] == "ok") & runs[col].notna()]


def n_minus_dense_rank(values: pd.Series, groups: pd.Series | pd.Index | list[str], n: int) -> pd.Series:
    """The 2022 competition's ranks: ``n - rank(descending, method='dense')`` per group, so the best
    gets n - 1 and, with n distinct values, the worst gets 0; NaN stays NaN."""
    return n - values.groupby(groups).rank(ascending=False, method="dense")


def scipy_hmean(frame: pd.DataFrame) -> pd.Series:
    """scipy's harmonic mean of each row, as the competition computed it: a 0 rank gives 0, a NaN
    gives NaN."""
    return pd.Series(_row_hmean(frame.astype(float).to_numpy()), index=frame.index)
