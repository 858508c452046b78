"""The SRBench 2022 real-world feature pipeline, for any daily count series.

From daily counts (e.g. cases, hosp, deaths) and optional 0/1 policy flags it builds the
competition's forecasting table: per count, outliers beyond 4 sigma replaced by the median of a
one-week window, exponentially weighted smoothing, then for each row date t

- ``value_{c}_{d}`` and ``value_{c}_Delta_{d}`` for each lag day d = 14..27 (smoothed value at
  t - d and its day-on-day change),
- ``value_{c}_tot``: the cumulative raw count up to t - horizon (all that is known when forecasting),
- the policy flags at t - horizon,
- the target ``value_{target}``: the smoothed count at t (a 14-day horizon).

Rows are split in date order into alternating chunks of 5 weeks (train) and 3 weeks (test).
Dates stay with the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.errors import SrtuiError
from srtui.tasks.build import make_task

if TYPE_CHECKING:
    import pandas as pd

    from srtui.tasks.model import Task

LAGS = range(14, 28)
HORIZON = 14
EWM_SPAN = 7
OUTLIER_SIGMA = 4.0
TRAIN_WEEKS, TEST_WEEKS = 5, 3


class PipelineError(SrtuiError, ValueError):
    """Input the pipeline cannot use; one line."""


@dataclass
class FeatureTable:
    dates: np.ndarray  # ISO dates, one per row
    X: pd.DataFrame
    y: np.ndarray
    target: str
    train_index: np.ndarray
    test_index: np.ndarray

    def task(self, name: str, track: str, **fields: Any) -> Task:
        """The forecasting task of this table: its rows, date-ordered chunk split and dates."""
        return make_task(
            name,
            track,
            list(self.X.columns),
            self.target,
            self.X.to_numpy(),
            self.y,
            self.train_index,
            self.test_index,
            dates=self.dates,
            split="alternating chunks in date order: 5 weeks train, 3 weeks test",
            property="trust",
            **fields,
        )


def clean(series: pd.Series) -> pd.Series:
    """Replace points beyond 4 sigma by the centred one-week median, then EW-smooth."""
    values = series.astype(float)
    mean, std = values.mean(), values.std()
    weekly_median = values.rolling(7, center=True, min_periods=1).median()
    if std > 0:
        values = values.where((values - mean).abs() <= OUTLIER_SIGMA * std, weekly_median)
    return values.ewm(span=EWM_SPAN, adjust=False).mean()


def chunk_split(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows in date order: 5 weeks train, 3 weeks test, repeated."""
    week = np.arange(n) // 7
    is_train = week % (TRAIN_WEEKS + TEST_WEEKS) < TRAIN_WEEKS
    idx = np.arange(n)
    return idx[is_train], idx[~is_train]


def forecast_table(counts: pd.DataFrame, target: str, flags: pd.DataFrame | None = None) -> FeatureTable:
    """``counts``: daily counts, DatetimeIndex, one column per series (``target`` among them)."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    if target not in counts.columns:
        raise PipelineError(f"target {target!r} is not one of the count columns {list(counts.columns)}")
    if not isinstance(counts.index, pd.DatetimeIndex):
        raise PipelineError("counts need a DatetimeIndex of days")
    counts = counts.sort_index()
    if counts.index.has_duplicates:
        raise PipelineError("counts have duplicate dates")
    # a missing day counts as no report (daily series from health departments skip empty days)
    counts = counts.asfreq("D").fillna(0.0)
    if len(counts) < max(LAGS) + 2 + 7:
        raise PipelineError(f"need at least {max(LAGS) + 9} days of counts, got {len(counts)}")
    smooth = {c: clean(counts[c]) for c in counts.columns}
    cols: dict[str, pd.Series] = {}
    if flags is not None:
        flags = flags.reindex(counts.index).ffill().fillna(0.0)
        for f in flags.columns:
            cols[f] = flags[f].astype(float).shift(HORIZON)
    for d in LAGS:
        for c in counts.columns:
            cols[f"value_{c}_{d}"] = smooth[c].shift(d)
            cols[f"value_{c}_Delta_{d}"] = smooth[c].diff().shift(d)
    for c in counts.columns:
        cols[f"value_{c}_tot"] = counts[c].astype(float).cumsum().shift(HORIZON)
    table = pd.DataFrame(cols)
    y = smooth[target]
    keep = table.notna().all(axis=1) & y.notna()
    table, y = table[keep], y[keep]
    train, test = chunk_split(len(table))
    return FeatureTable(
        dates=np.array(pd.DatetimeIndex(table.index).strftime("%Y-%m-%d"), dtype=str),
        X=table.reset_index(drop=True),
        y=y.to_numpy(dtype=float),
        target=f"value_{target}",
        train_index=train,
        test_index=test,
    )
