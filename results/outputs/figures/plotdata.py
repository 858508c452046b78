"""What the suite figures draw, as plain data (no matplotlib, no pandas in the result): the
performance profiles, the Pareto fronts of median ranks and the energy against training time,
each read once from its rule's ``Score`` (``FigureData.score``). The figures (``accuracy``) draw
them with matplotlib; the app's Plots screen draws the same data with plotext
(``srtui.views.plots``), so a suite's plot in the terminal and its PDF show the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from srtui.results.metrics.profiles import Profile
from srtui.results.outputs.figures.style import FigureError

if TYPE_CHECKING:
    from srtui.results.outputs.figures import FigureData

PROFILE_GRID = 51  # points of the performance profiles (perfprof_plots.ipynb's grid)


@dataclass(frozen=True)
class Profiles:
    """srbench2025's performance profiles: P[R² >= x] per method, best area first."""

    thresholds: tuple[float, ...]
    curves: dict[str, tuple[float, ...]]
    auc: dict[str, float]  # the area under each curve (the figure's legend)
    notes: tuple[str, ...]  # the rule's notes on the profiles (the reference AUC's flat tail)
    profile: str


def profiles_data(data: FigureData) -> Profiles:
    s = data.score("srbench2025", grid=PROFILE_GRID)
    board = s.main.dropna(subset=["auc"])
    cols = [c for c in board.columns if str(c).startswith("P[R2>=")]
    curves = {str(r["method"]): tuple(float(v) for v in r[cols].astype(float)) for _, r in board.iterrows()}
    auc = {str(m): float(a) for m, a in zip(board["method"], board["auc"])}
    notes = tuple(n for n in s.notes if "AUC" in n)  # the energy table's note belongs to the energy figure
    return Profiles(tuple(float(str(c)[6:-1]) for c in cols), curves, auc, notes, str(s.profile))


@dataclass(frozen=True)
class Fronts:
    """srbench2021's Pareto plot: each method at (its R² rank, its size rank) over datasets."""

    points: dict[str, tuple[float, float]]  # method -> (x, y), board order
    fronts: tuple[tuple[str, ...], ...]  # the fronts' methods, best front first, each by x
    x_label: str
    y_label: str
    #: the height at which methods without a size rank (black boxes) are drawn, if any is
    sizeless_at: float | None = None
    reference: bool = True


def fronts_data(data: FigureData, levels: int) -> Fronts:
    """The first ``levels`` fronts; a front member without a size rank (a black box such as rf)
    one rank above the largest, instead of left out."""
    s = data.score("srbench2021")
    board = s.main
    ref = s.profile == Profile.REFERENCE
    xcol, ycol, fcol = (
        ("median_rank_r2", "median_rank_size", "pareto_front") if ref else ("rank_r2", "rank_size", "pareto_rank")
    )
    sizeless_at = None
    missing = board[ycol].isna() & board[xcol].notna()
    if missing.any():
        sizeless_at = (float(np.nanmax(board[ycol])) if board[ycol].notna().any() else 0.0) + 1.0
        board = board.assign(**{ycol: board[ycol].fillna(sizeless_at)})
    points = {
        str(r["method"]): (float(r[xcol]), float(r[ycol]))
        for _, r in board.iterrows()
        if math.isfinite(float(r[xcol])) and math.isfinite(float(r[ycol]))
    }
    kept = [lv for lv in sorted(board[fcol].unique()) if lv >= 0][:levels]
    fronts = tuple(
        tuple(str(m) for m in board[board[fcol] == lv].sort_values(xcol)["method"] if str(m) in points) for lv in kept
    )
    stat = "median" if ref else "mean"
    x_label = f"{stat} rank of test R² over datasets ({'1 = best' if ref else 'higher is better'})"
    y_label = f"{stat} rank of model size ({'1 = smallest' if ref else 'higher is smaller'})"
    return Fronts(points, fronts, x_label, y_label, sizeless_at, ref)


@dataclass(frozen=True)
class EnergyPoint:
    method: str
    fit_s: float  # median training time of a run
    energy_kwh: float  # its median energy
    energy_j: float
    how: str  # rapl, estimate or both


def energy_data(data: FigureData) -> tuple[EnergyPoint, ...]:
    """srbench2025's energy_time table, the methods with a positive time and energy (log axes)."""
    s = data.score("srbench2025", grid=PROFILE_GRID)  # the profiles' Score: computed once for both
    t = s.tables.get("energy_time")
    if t is None:
        raise FigureError("figure 'energy': no run has an energy figure (runs of srtui record one; a CSV has none)")
    return tuple(
        EnergyPoint(str(r["method"]), fit, kwh, float(r["median_energy_j"]), str(r["energy_method"]))
        for _, r in t.iterrows()
        if (fit := float(r["median_fit_s"])) > 0 and (kwh := float(r["median_energy_kwh"])) > 0
    )
