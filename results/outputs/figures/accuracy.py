"""The figures of accuracy, size and cost: SRBench 2021's Pareto plot of median ranks (Figure 2),
its point plots of R2, size and training time with 95 % intervals, its solution rates by noise
and data group (Figure 3), and SRBench 2.0's performance profiles and energy vs time (Figure 1).
Each draws the tables of one scoring rule (see ``srtui.results.outputs.figures``)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.results.outputs.figures import figure
from srtui.results.outputs.figures.plotdata import Fronts, Plot, Trace, energy_data, fronts_data, profiles_data
from srtui.results.outputs.figures.style import DASHES, FigureError, annotate_points, label, log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from srtui.results.outputs.figures import FigureData

R2 = "R\u00b2"  # mathtext is off: the superscript is a character
SPLIT_WORDS = {"train": "training", "test": "test"}


def metric_name(metric: str) -> str:
    """A stored accuracy name in words, from its declaration (srtui.results.metrics.accuracy): a split
    metric's label after its split ("test R²"), else the name made safe."""
    from srtui.results.metrics.accuracy import by_stored_name

    declared = by_stored_name().get(metric)
    if declared is None:
        return label(metric)
    if declared.scope == "split":
        split = metric.rpartition("_")[2]
        return f"{SPLIT_WORDS.get(split, split)} {declared.label}"
    return declared.label


N_BOOT = 1000
FRONT_LEVELS = 6  # fronts drawn, as blackbox_results.ipynb draws


def bootstrap_ci(values: np.ndarray, stat: str = "median", level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the median (or mean) of ``values``, over datasets, as
    seaborn's pointplot draws it in SRBench's notebooks (1000 resamples; a fixed seed)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return (float(v[0]), float(v[0])) if len(v) else (np.nan, np.nan)
    rng = np.random.default_rng(0)
    samples = v[rng.integers(0, len(v), size=(N_BOOT, len(v)))]
    stats = np.median(samples, axis=1) if stat == "median" else samples.mean(axis=1)
    lo, hi = np.percentile(stats, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def _method_legend(fig: Figure, data: FigureData, methods: list[str], ncol: int | None = None) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [], [], color=data.look(m).color, marker=data.look(m).marker, linestyle=data.look(m).dash, label=label(m)
        )
        for m in methods
    ]
    cols = ncol or max(1, min(len(methods), int(fig.get_figwidth() // 1.15)))
    fig.legend(handles=handles, loc="outside lower center", ncols=cols, handlelength=2.2)


# --- pareto ---------------------------------------------------------------------------------


def pareto_figure(data: FigureData, width: float) -> Figure:
    """srbench2021's leaderboard: each method at (its R2 rank, its size rank) with 95 % intervals
    over datasets, the Pareto fronts joined and listed below the axes (plotdata.fronts_data)."""
    f = fronts_data(data, FRONT_LEVELS)
    per = data.rank_board().per_task
    fig = new_figure(width, width * 0.78 + 0.14 * len(f.points) / max(1.0, width / 3.5))
    ax = fig.add_subplot()
    stat = "median" if f.reference else "mean"
    if f.sizeless_at is not None:  # a black box on a dotted line that says so, not left out
        ax.axhline(f.sizeless_at, color="#999999", linestyle=":", linewidth=0.7, zorder=0)
        ax.annotate("no model size (black box)", (0, f.sizeless_at), xycoords=("axes fraction", "data"),
                    fontsize="x-small", xytext=(2, 2), textcoords="offset points", color="#555555")  # fmt: skip
    for m, (x, y) in f.points.items():
        look = data.look(m)
        x_lo, x_hi = bootstrap_ci(per[m][0], stat)
        y_lo, y_hi = bootstrap_ci(per[m][1], stat)
        ax.plot([x_lo, x_hi], [y] * 2, color=look.color, alpha=0.45, linewidth=0.8, zorder=2)
        ax.plot([x] * 2, [y_lo, y_hi], color=look.color, alpha=0.45, linewidth=0.8, zorder=2)
        ax.plot(x, y, marker=look.marker, color=look.color, markeredgecolor="white", zorder=4)
    _fronts(fig, ax, f, width)
    ax.set_xlabel(f.x_label)
    ax.set_ylabel(f.y_label)
    if f.reference:
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    annotate_points(ax, [(x, y, m) for m, (x, y) in f.points.items()])  # last: placed on the final axes
    return fig


@figure(
    "pareto",
    "srbench2021",
    "each method at (median rank of test R², median rank of model size) over datasets, 95 % bootstrap "
    'intervals of both ranks, the Pareto fronts joined and listed under the axes ("front 0: ...")',
    draw=pareto_figure,
    axes=("median rank of test R²", "median rank of model size", "front "),
    publication="2021, Figure 2 (`blackbox_results.ipynb`)",
    order=1,
)
def pareto(data: FigureData) -> Plot:
    """The ranks and the first front joined by a line (the publication drawing joins
    ``FRONT_LEVELS`` and adds the intervals): the front's methods drawn last, on top."""
    f = fronts_data(data, 1)
    front = f.fronts[0] if f.fronts else ()
    traces = []
    if len(front) > 1:  # the line first: the markers are drawn over it
        traces.append(Trace(*_xy([f.points[m] for m in front]), mode="lines"))
    for m, (x, y) in sorted(f.points.items(), key=lambda kv: kv[0] in front):
        traces.append(Trace((x,), (y,), f"{m} (front)" if m in front else m, m))
    notes = () if f.sizeless_at is None else (f"no model size (black box): drawn at {f.sizeless_at:g}",)
    title = "Pareto front (srbench2021; the line joins the first front)"
    return Plot(tuple(traces), f.x_label, f.y_label, title, notes=notes)


def _xy(points: list[tuple[float, float]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return tuple(p[0] for p in points), tuple(p[1] for p in points)


def _fronts(fig: Figure, ax: Axes, f: Fronts, width: float) -> None:
    from matplotlib.lines import Line2D

    handles = []
    chars = int(width * 17)
    for i, front in enumerate(f.fronts):
        dash: Any = DASHES[i % len(DASHES)]
        ax.plot(*zip(*(f.points[m] for m in front)), dash, color="#555555", alpha=0.6, linewidth=0.9, zorder=1)
        names = ", ".join(label(m, 20) for m in front)
        text = textwrap.fill(f"front {i}: {names}", chars, subsequent_indent="    ")
        handles.append(Line2D([], [], linestyle=dash, color="#555555", label=text))
    if handles:
        fig.legend(handles=handles, loc="outside lower left", ncols=1, handlelength=2.5, alignment="left")


# --- points ---------------------------------------------------------------------------------


def points_figure(data: FigureData, width: float) -> Figure:
    """Per method the median over datasets (of each dataset's median run) of test R2, model size
    and training time, with 95 % bootstrap intervals; srbench2021's per_task table."""
    values = data.rank_board().values
    panels = [("r2", f"test {R2}", False), ("size", "model size (nodes)", True)]
    panels += [("time", "training time (s)", True)] if any("time" in v for v in values.values()) else []
    order, medians = by_median_r2(values)
    fig = new_figure(width, 0.9 + 0.16 * len(order))
    axes = fig.subplots(1, len(panels), sharey=True)
    for ax, (col, title, log) in zip(np.atleast_1d(axes), panels):
        for i, m in enumerate(order):
            v = values[m][col]
            v = v[np.isfinite(v) & ((v > 0) if log else True)]
            if not len(v):
                continue
            lo, hi = bootstrap_ci(v)
            look = data.look(m)
            ax.plot([lo, hi], [i, i], color=look.color, linewidth=1.0)
            ax.plot(np.median(v), i, marker=look.marker, color=look.color, markeredgecolor="white", markeredgewidth=0.5)
        # one column wide, three panels leave each under an inch: the unit goes on a line of its own
        ax.set_xlabel(title if width >= 5 else title.replace(" (", "\n("))
        if log:
            log_axis(ax.xaxis)
        ax.grid(axis="y", visible=False)
    first = np.atleast_1d(axes)[0]
    first.set_yticks(range(len(order)), [label(m) for m in order])
    first.set_ylim(len(order) - 0.5, -0.5)
    lo_r2 = _least(medians)
    if np.isfinite(lo_r2) and lo_r2 > -0.25:
        first.set_xlim(left=-0.25, right=1.02)
    return fig


def by_median_r2(values: dict[str, dict[str, np.ndarray]]) -> tuple[list[str], np.ndarray]:
    """The methods by their median test R² over datasets, best first (NaN last), as pandas'
    ``groupby("method").median().sort_values(ascending=False)`` orders them, and those medians."""
    from srtui.results.outputs.figures.ranks import nargsort

    methods = sorted(values)
    medians = np.array([_median(values[m]["r2"]) for m in methods])
    order = nargsort(medians, ascending=False)
    return [methods[i] for i in order], medians[order]


def _median(v: np.ndarray) -> float:
    kept = v[~np.isnan(v)]
    return float(np.median(kept)) if len(kept) else np.nan


def _least(v: np.ndarray) -> float:
    """pandas' ``min``: NaN left out, NaN of none."""
    kept = v[~np.isnan(v)]
    return float(kept.min()) if len(kept) else np.nan


@figure(
    "points",
    "srbench2021",
    "per method the median over datasets of test R², model size and training time (log), with 95 % bootstrap intervals",
    axes=("test R²", "model size (nodes)", "training time (s)"),
    draw=points_figure,
    source="`srbench2021` (table `per_task`)",
    publication="2021 (`blackbox_results.ipynb` point plots)",
    order=2,
)
def points(data: FigureData) -> Plot:
    """Its first panel: each method's median test R² over datasets with its 95 % interval, best
    at the top (the publication drawing adds model size and training time beside it)."""
    values = data.rank_board().values
    order, medians = by_median_r2(values)
    n, traces = len(order), []
    for i, m in enumerate(order):
        v = values[m]["r2"]
        v = v[np.isfinite(v)]
        if len(v):
            (lo, hi), y = bootstrap_ci(v), float(n - 1 - i)
            traces.append(Trace((lo, hi), (y, y), method=str(m), mode="lines"))
            traces.append(Trace((float(np.median(v)),), (y,), f"{m} ({float(np.median(v)):.3g})", str(m)))
    ticks = tuple((float(n - 1 - i), str(m)) for i, m in enumerate(order))
    lo_r2 = _least(medians)
    x_lim = (-0.25, 1.02) if np.isfinite(lo_r2) and lo_r2 > -0.25 else None
    title = "median over datasets, 95 % interval (the file adds size and time)"
    return Plot(tuple(traces), f"test {R2}", "method", title, x_lim=x_lim, y_lim=(-0.5, n - 0.5), y_ticks=ticks)


# --- solution rate --------------------------------------------------------------------------


@figure(
    "solution-rate",
    "srbench-groundtruth",
    "symbolic and accuracy solution rates against target noise, one panel per data group (Feynman, Strogatz)",
    axes=("target noise", "symbolic solution rate", "accuracy solution rate"),
    terminal="a grid of panels, one per data group and rate",
    source="`srbench-groundtruth` (table `per_data_group`)",
    publication="2021, Figure 3 (`groundtruth_results.ipynb`)",
    order=3,
)
def solution_rate(data: FigureData, width: float) -> Figure:
    """srbench-groundtruth's per_data_group table: symbolic and accuracy solution rates (%) per
    method against the target noise, one column of panels per data group."""
    s = data.score("srbench-groundtruth")
    t = s.tables["per_data_group"]
    rates = [
        (c, name)
        for c, name in (
            ("symbolic_solution_rate", "symbolic solution rate (%)"),
            ("accuracy_solution_rate", f"accuracy solution rate (%, {R2} > 0.999)"),
        )
        if t[c].notna().any()
    ]
    if not rates or rates[0][0] != "symbolic_solution_rate":  # an accuracy rate alone is no solution rate
        raise FigureError(
            "figure 'solution-rate': no run has a symbolic solution figure: the tasks have no ground truth "
            "(black-box), or their metrics are not computed yet (srtui rescore)"
        )
    groups = sorted(t["data_group"].astype(str).unique())
    noises = sorted(t["noise"].astype(float).unique())
    methods = sorted(t["method"].unique(), key=lambda m: -t.loc[t["method"] == m, rates[0][0]].mean())
    fig = new_figure(width, 1.4 * len(rates) + 0.9)
    axes = np.atleast_2d(fig.subplots(len(rates), len(groups), sharex=True, sharey=True, squeeze=False))
    for r, (col, name) in enumerate(rates):
        for g, group in enumerate(groups):
            ax = axes[r, g]
            sub = t[t["data_group"].astype(str) == group]
            for k, m in enumerate(methods):
                rows = sub[sub["method"] == m].sort_values("noise")
                # a small sideways step per method: equal rates draw side by side, none hides another
                step = (k - (len(methods) - 1) / 2) * min(0.06, 0.3 / len(methods))
                xs = [noises.index(float(n)) + step for n in rows["noise"]]
                look = data.look(m)
                ax.plot(xs, rows[col], look.dash, marker=look.marker, color=look.color, markeredgecolor="white")
            ax.set_xticks(range(len(noises)), [f"{n:g}" for n in noises])
            ax.set_ylim(-3, 103)
            if r == 0:
                ax.set_title(label(group))
            if g == 0:
                ax.set_ylabel(textwrap.fill(name, 18 if width < 5 else 28))  # two panels' labels never meet
            if r == len(rates) - 1:
                ax.set_xlabel("target noise")
    _method_legend(fig, data, methods)
    return fig


# --- performance profiles -------------------------------------------------------------------


def profiles_figure(data: FigureData, width: float) -> Figure:
    """srbench2025's leaderboard: P[R2 >= x] over datasets on a 51-point grid, the area under
    each curve (AUC) in the legend (plotdata.profiles_data)."""
    from matplotlib.lines import Line2D

    p = profiles_data(data)
    fig = new_figure(width, width * 0.62 + 0.12 * len(p.curves) / max(1.0, width / 3.5))
    ax = fig.add_subplot()
    handles = []
    for m, curve in p.curves.items():
        look = data.look(m)
        ax.plot(p.thresholds, curve, look.dash, color=look.color, marker=look.marker, markevery=10, markersize=4)
        name = f"{label(m)} (AUC {p.auc[m]:.3f})"
        handles.append(Line2D([], [], color=look.color, marker=look.marker, linestyle=look.dash, label=name))
    ax.set_xlabel(f"test {R2} threshold x")
    ax.set_ylabel(textwrap.fill(f"share of datasets with {R2} \u2265 x", 18 if width < 5 else 60))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    fig.legend(handles=handles, loc="outside lower center", ncols=max(1, min(len(handles), int(width // 2.2))))
    return fig


@figure(
    "profiles",
    "srbench2025",
    "P[R² ≥ x] over datasets on a 51-point grid, the AUC of each method in the legend",
    draw=profiles_figure,
    axes=("test R² threshold x", "share of datasets with R²", "AUC"),
    publication="2.0 (`perfprof_plots.ipynb`)",
    order=4,
)
def profiles(data: FigureData) -> Plot:
    """Each method's curve, its area in the legend, the rule's notes (the reference AUC's tail)."""
    p = profiles_data(data)
    traces = tuple(
        Trace(p.thresholds, curve, f"{m} (AUC {p.auc[m]:.3f})", m, "lines+markers") for m, curve in p.curves.items()
    )
    title = f"performance profile (srbench2025, {p.profile})"
    return Plot(traces, f"test {R2} threshold x", f"share of datasets with {R2} \u2265 x", title,
                x_lim=(0, 1), y_lim=(0, 1.05), notes=p.notes)  # fmt: skip


# --- energy ---------------------------------------------------------------------------------


def energy_figure(data: FigureData, width: float) -> Figure:
    """srbench2025's energy_time table: each method's median energy of a run against its median
    training time, both axes logarithmic (plotdata.energy_data)."""
    points = energy_data(data)
    if not points:
        raise FigureError("figure 'energy': no method has a positive training time and energy")
    fig = new_figure(width, width * 0.7)
    ax = fig.add_subplot()
    for p in points:
        look = data.look(p.method)
        ax.plot(p.fit_s, p.energy_kwh, marker=look.marker, color=look.color, markeredgecolor="white", linestyle="")
    log_axis(ax.xaxis)
    log_axis(ax.yaxis)
    ax.set_xlabel("median training time per run (s)")
    ax.set_ylabel("median energy per run (kWh)")
    ax.margins(0.15)
    annotate_points(ax, [(p.fit_s, p.energy_kwh, p.method) for p in points])  # last: on the final axes
    return fig


@figure(
    "energy",
    "srbench2025",
    "median energy per run against median training time, both axes log",
    draw=energy_figure,
    axes=("median training time per run (s)", "median energy per run (kWh)"),
    source="`srbench2025` (table `energy_time`)",
    publication="2.0, Figure 1 (`power_consumption.ipynb`)",
    order=5,
)
def energy(data: FigureData) -> Plot:
    """One point per method, named beside it; its energy in joules and how it was measured
    (RAPL or estimated) in the legend."""
    points = energy_data(data)
    if not points:
        raise FigureError("figure 'energy': no method has a positive training time and energy")
    traces = tuple(
        Trace((p.fit_s,), (p.energy_kwh,), f"{p.method} {p.energy_j:.3g} J ({p.how})", p.method, text=(p.method,))
        for p in points
    )
    title = "energy vs time (srbench2025)"
    return Plot(traces, "median training time per run (s)", "median energy per run (kWh)", title, "log", "log")
