"""What the figures draw, as plain data (no matplotlib, no pandas in the result).

``Plot`` is a figure kind's data (benchopt's ``Plot`` returning traces is the model): titled axes
with their scales and ticks, and traces (lines or markers, each a method's or a guide's, with a
legend entry and optional words beside its points). Every backend draws a ``Plot``: matplotlib
(``srtui.results.outputs.figures.drawplot``: files for `srtui plot` and the report) and the terminal
(``srtui.app.terminal_plot``: the app's Plots screen), so a plot in the terminal and its PDF show
the same numbers. A kind declares the function that makes its ``Plot`` once, with ``@figure``.

Below, the data the suite figures share, each read once from its rule's ``Score``
(``FigureData.score``): the performance profiles, the Pareto fronts of median ranks and the
energy against training time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from srtui.results.outputs.figures.style import FigureError

if TYPE_CHECKING:
    from srtui.results.outputs.figures import FigureData
    from srtui.results.outputs.figures.ranks import RankBoard

Mode = Literal["lines", "markers", "lines+markers"]
Scale = Literal["linear", "log"]


@dataclass(frozen=True)
class Trace:
    """One series: points joined (``lines``) or not (``markers``). ``method`` gives its look
    (colour, marker: the same in every figure, the report and the app); None is a guide (grey,
    no legend entry unless ``label``). ``text`` writes a word beside each point."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    label: str = ""  # its legend entry ("" none)
    method: str | None = None
    mode: Mode = "markers"
    text: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plot:
    """A figure kind's data, drawn by every backend: one pair of axes and its traces, drawn in
    order (later on top). ``ticks`` replace the numbers of an axis by words (method names on a
    rank axis); ``notes`` are sentences under the legend."""

    traces: tuple[Trace, ...]
    x_label: str
    y_label: str
    title: str = ""
    x_scale: Scale = "linear"
    y_scale: Scale = "linear"
    x_lim: tuple[float, float] | None = None
    y_lim: tuple[float, float] | None = None
    x_ticks: tuple[tuple[float, str], ...] = ()
    y_ticks: tuple[tuple[float, str], ...] = ()
    notes: tuple[str, ...] = ()

    def methods(self) -> tuple[str, ...]:
        """The methods drawn, in the traces' order."""
        return tuple(dict.fromkeys(t.method for t in self.traces if t.method is not None))


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
    one rank above the largest, instead of left out. Read from the rule's board
    (``FigureData.rank_board``: the store's, with numpy, or the Score's)."""
    b = data.rank_board()
    ref = b.reference
    y, sizeless_at = b.y, None
    missing = np.isnan(y) & ~np.isnan(b.x)
    if missing.any():
        sizeless_at = (float(np.nanmax(y)) if (~np.isnan(y)).any() else 0.0) + 1.0
        y = np.where(np.isnan(y), sizeless_at, y)
    drawn = zip(b.methods, b.x.tolist(), y.tolist())
    points = {m: (x, v) for m, x, v in drawn if math.isfinite(x) and math.isfinite(v)}
    kept = [lv for lv in sorted(set(b.front.tolist())) if lv >= 0][:levels]
    fronts = tuple(tuple(m for m in _by_x(b, lv) if m in points) for lv in kept)
    stat = "median" if ref else "mean"
    x_label = f"{stat} rank of test R² over datasets ({'1 = best' if ref else 'higher is better'})"
    y_label = f"{stat} rank of model size ({'1 = smallest' if ref else 'higher is smaller'})"
    return Fronts(points, fronts, x_label, y_label, sizeless_at, ref)


def _by_x(b: RankBoard, level: int) -> list[str]:
    """The methods of one front by their R² rank, as pandas' ``sort_values`` orders them (its
    quicksort over the board's order, NaN last)."""
    from srtui.results.outputs.figures.ranks import nargsort

    at = np.flatnonzero(b.front == level)
    return [b.methods[i] for i in at[nargsort(b.x[at])]]


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
