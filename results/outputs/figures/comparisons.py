"""The figures that compare methods: SRBench 2.0's critical-difference diagram (Friedman with
Nemenyi), 2021's pairwise Wilcoxon heatmap, the 2022 competition's ranks and harmonic means, and
the experts' trust ratings with their agreement. Each draws one rule's tables (or a review
session's, passed in by the caller: ``results`` does not import ``reviews``)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.results.outputs.figures import figure
from srtui.results.outputs.figures.accuracy import R2, bootstrap_ci, metric_name
from srtui.results.outputs.figures.plotdata import Plot, Trace
from srtui.results.outputs.figures.style import FigureError, label, new_figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from srtui.results.outputs.figures import FigureData

#: what the 2022 competition's rank columns are called in the figure
RANK_NAMES = {
    "rank_accuracy": f"accuracy ({R2})",
    "rank_r2": f"accuracy ({R2})",
    "rank_simplicity": "simplicity",
    "rank_property": "property",
    "rank_trust": "trust",
}


def cd_figure(data: FigureData, width: float) -> Figure:
    """friedman's average ranks (1 = best) and Nemenyi p-values as a critical-difference diagram
    (scikit-posthocs): methods joined by a bar do not differ significantly."""
    import scikit_posthocs as sph

    s = data.score("friedman")
    ranks = s.tables["average_ranks"].set_index("method")["average_rank"]
    summary = s.tables["friedman"].iloc[0]
    sig = s.tables["nemenyi"].set_index("method")
    names = {m: label(m) for m in ranks.index}
    if len(set(names.values())) < len(names):  # two long names cut to one label: keep them apart
        names = {m: f"{label(m, 28)} #{i}" for i, m in enumerate(ranks.index)}
    ranks = ranks.rename(index=names)
    sig = sig.rename(index=names, columns=names)
    metric = metric_name(str(s.options["metric"]))
    title = textwrap.fill(  # 7 pt: about 17 characters an inch
        f"average rank of {metric} over {int(summary['datasets'])} datasets (1 = best); Friedman p = "
        f"{summary['p_value']:.2g}; Nemenyi CD = {summary['critical_difference']:.2f} at \u03b1 = {summary['alpha']:g}",
        int(width * 17),
    )
    lines = title.count("\n") + 1
    height = 0.8 + 0.13 * len(ranks) + 0.15 * (lines - 1)
    fig = new_figure(width, height, layout=None)  # the diagram places its own labels
    # room on each side for the longest label "name (rank)" at 7 pt (about 0.055 in a character)
    side = min(0.42, (0.3 + 0.055 * max(len(n) + 7 for n in names.values())) / width)
    top = (0.3 + 0.12 * lines) / fig.get_figheight()  # the title's lines and the ranks' tick labels
    ax = fig.add_axes((side, 0.04, 1 - 2 * side, min(0.7, 0.96 - top)))
    sph.critical_difference_diagram(
        ranks,
        sig,
        ax=ax,
        alpha=float(summary["alpha"]),
        color_palette={names[m]: data.look(m).color for m in names},
        label_props={"fontsize": 7},
        label_fmt_left="{label} ({rank:.2f})",
        label_fmt_right="({rank:.2f}) {label}",
    )
    ax.set_title(title, fontsize=7)
    return fig


@figure(
    "cd",
    "friedman",
    "critical-difference diagram (scikit-posthocs): average ranks, methods that the Nemenyi test does "
    "not separate joined by a bar",
    draw=cd_figure,
    axes=("average rank of test R²", "Nemenyi CD"),
    publication="2.0 (`fried_nonfried_analysis.ipynb`)",
    order=6,
)
def cd(data: FigureData) -> Plot:
    """The average ranks, best at the top, and the critical difference as a bar from the best:
    methods closer than it are not separated by the Nemenyi test."""
    s = data.score("friedman")
    ranks = s.tables["average_ranks"].sort_values("average_rank")
    summary = s.tables["friedman"].iloc[0]
    n, best, cdv = len(ranks), float(ranks["average_rank"].min()), float(summary["critical_difference"])
    traces = [Trace((best, best + cdv), (n - 0.4, n - 0.4), f"Nemenyi CD = {cdv:.2f} (from the best)", mode="lines")]
    for i, (m, r) in enumerate(zip(ranks["method"], ranks["average_rank"])):
        traces.append(Trace((float(r),), (float(n - 1 - i),), f"{m} ({float(r):.2f})", str(m)))
    ticks = tuple((float(n - 1 - i), str(m)) for i, m in enumerate(ranks["method"]))
    metric = metric_name(str(s.options["metric"]))
    x_label = f"average rank of {metric} over {int(summary['datasets'])} datasets (1 = best)"
    note = f"Friedman p = {float(summary['p_value']):.2g}; Nemenyi at \u03b1 = {float(summary['alpha']):g}"
    return Plot(tuple(traces), x_label, "method", y_lim=(-0.5, n), y_ticks=ticks, notes=(note,))


@figure(
    "wilcoxon",
    "wilcoxon",
    "Holm-adjusted p-values of the pairwise Wilcoxon signed-rank tests as a heatmap, `*` where significant",
    terminal="a heatmap of p-values",
    axes=("pairwise Wilcoxon signed-rank tests", "p, Holm-adjusted"),
    publication="2021 (`statistical_comparisons.ipynb`)",
    order=7,
)
def wilcoxon(data: FigureData, width: float) -> Figure:
    """wilcoxon's pairs: the Holm-adjusted p-value of every pair of methods, significant cells
    marked with a star (the colour map is cividis: ordered in grey too)."""
    import pandas as pd  # a file of this kind only: pandas is no import of `srtui plot pareto` (#56)

    s = data.score("wilcoxon")
    pairs = s.tables["pairs"]
    methods = list(dict.fromkeys([*pairs["method_a"], *pairs["method_b"]]))
    p = pd.DataFrame(np.nan, index=methods, columns=methods)
    star = pd.DataFrame(False, index=methods, columns=methods)
    for _, row in pairs.iterrows():
        for a, b in ((row["method_a"], row["method_b"]), (row["method_b"], row["method_a"])):
            p.loc[a, b], star.loc[a, b] = row["p_holm"], bool(row["significant"])
    n = len(methods)
    # the cells stretch to the figure's width (square cells left a wide figure's left half empty)
    fig = new_figure(width, min(width * 0.8, 1.3 + 0.32 * n))
    ax = fig.add_subplot()
    image = _cells(ax, p.to_numpy(float), vmin=0, vmax=1)
    ax.set_xticks(range(n), [label(m, 20) for m in methods], rotation=60, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n), [label(m, 20) for m in methods])
    ax.grid(False)
    values, stars = p.to_numpy(float), star.to_numpy(bool)
    if n <= 14:
        for i in range(n):
            for j in range(n):
                v = float(values[i, j])
                if np.isfinite(v):
                    ax.text(
                        j,
                        i,
                        f"{v:.2g}{'*' if stars[i, j] else ''}",
                        ha="center",
                        va="center",
                        fontsize=5.5,
                        color="white" if v < 0.5 else "black",
                    )
    metric = metric_name(str(s.options["metric"]))
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label(f"p, Holm-adjusted (*: p < {s.options['alpha']:g})")
    ax.set_title(f"pairwise Wilcoxon signed-rank tests of {metric} over datasets", fontsize=7)
    return fig


def ranks_figure(data: FigureData, width: float) -> Figure:
    """A 2022 competition rule's leaderboard (the score: the mean over datasets of the harmonic
    mean of the ranks) and the mean of each rank over datasets (higher is better)."""
    rule = _track(data)
    s = data.score(rule)
    board, per = s.main, s.tables["per_task"]
    rank_cols = [c for c in RANK_NAMES if c in per.columns and per[c].notna().any()]
    order = board["method"].tolist()
    narrow = width < 5  # one column: the texts wrap and the heatmap's labels stand upright
    fig = new_figure(width, 0.9 + 0.17 * len(order) + (1.0 if narrow else 0.0))
    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1], sharey=True)
    for i, row in board.iterrows():
        look = data.look(row["method"])
        left.barh(i, row["score"], color=look.color, alpha=0.85, height=0.7)
        left.plot(row["score"], i, marker=look.marker, color="black", markersize=3.5)
    left.set_yticks(range(len(order)), [label(m) for m in order])
    left.set_ylim(len(order) - 0.5, -0.5)
    # the rule under the axis, not in a suptitle: the legend `finish` adds above the axes overprinted it
    score_label = textwrap.fill("score: mean over datasets of the harmonic mean of ranks", 30 if narrow else 80)
    left.set_xlabel(f"{score_label}\n{textwrap.fill(f'{rule} (profile {s.profile})', 30 if narrow else 80)}")
    left.grid(axis="y", visible=False)
    means = per.groupby("method")[rank_cols].mean().reindex(order)
    _heat(right, means, [RANK_NAMES[c] for c in rank_cols], rotation=90 if narrow else 30)
    right.set_title(textwrap.fill("mean rank over datasets (higher is better)", 24 if narrow else 80), fontsize=7)
    return fig


@figure(
    "ranks",
    "srbench2022-synthetic",
    "the track score (mean over datasets of the harmonic mean of the ranks) per method and the mean of each rank",
    draw=ranks_figure,
    also=("srbench2022-realworld",),
    axes=("score: mean over datasets of the harmonic mean of ranks", "mean rank over datasets"),
    source="`srbench2022-synthetic` (or `--rule srbench2022-realworld`)",
    publication="2022 (`stage1.ipynb`)",
    order=8,
)
def ranks(data: FigureData) -> Plot:
    """The track's leaderboard: each method's score, in the board's order from the top (the
    publication drawing adds the mean of each rank as a heatmap)."""
    rule = _track(data)
    s = data.score(rule)
    board = s.main.reset_index(drop=True)
    n = len(board)
    scores = zip(board["method"].astype(str), board["score"].astype(float))
    traces = tuple(Trace((v,), (float(n - 1 - i),), f"{m} ({v:.3g})", m) for i, (m, v) in enumerate(scores))
    ticks = tuple((float(n - 1 - i), str(m)) for i, m in enumerate(board["method"]))
    x_label = "score: mean over datasets of the harmonic mean of ranks"
    return Plot(traces, x_label, "method", f"{rule} (profile {s.profile})", y_lim=(-0.5, n - 0.5), y_ticks=ticks)


def _track(data: FigureData) -> str:
    """The 2022 rule the ranks figure draws: --rule, else the track the input has data for."""
    rule = data.rule or ("srbench2022-realworld" if data.trust is not None else "srbench2022-synthetic")
    if not rule.startswith("srbench2022-") or rule == "srbench2022-qualification":
        raise FigureError(f"figure 'ranks' draws srbench2022-synthetic or srbench2022-realworld, not {rule!r}")
    return rule


def _cells(ax: Axes, grid: np.ndarray, vmin: float | None = None, vmax: float | None = None) -> Any:
    """A heatmap as vector cells centred on (column, row) (pcolormesh: sharp in PDF and SVG, and
    no raster to resample), rows from the top; cividis is ordered in grey too."""
    rows, cols = grid.shape
    mesh = ax.pcolormesh(
        np.arange(cols + 1) - 0.5,
        np.arange(rows + 1) - 0.5,
        np.ma.masked_invalid(grid),
        cmap="cividis",
        vmin=vmin,
        vmax=vmax,
    )
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    return mesh


def _heat(ax: Axes, values: pd.DataFrame, columns: list[str], rotation: int = 30) -> None:
    grid = values.to_numpy(float)
    _cells(ax, grid)
    ax.set_xticks(range(len(columns)), columns, rotation=rotation, ha="right", rotation_mode="anchor")
    ax.grid(False)
    finite = grid[np.isfinite(grid)]
    mid = float(np.median(finite)) if finite.size else 0.0
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if np.isfinite(grid[i, j]):
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if grid[i, j] < mid else "black",
                )


@figure(
    "trust",
    "(review)",
    "every rating, the mean and its 95 % interval per method; the experts' agreement (Krippendorff's "
    "alpha, ICC(2,k)) in the title",
    terminal="drawn from a review session's ratings (srtui plot trust --review)",
    axes=("trust rating", "agreement", "Krippendorff"),
    source="a review session (`--review`) or a ratings file (`--trust`)",
    publication="2022 (expert ratings)",
    order=9,
)
def trust(data: FigureData, width: float) -> Figure:
    """Expert trust ratings (1-5) per method: every rating as a dot, the mean with its 95 %
    interval; a review session's agreement (Krippendorff's alpha, ICC(2,k)) in the title."""
    long = _ratings(data)
    order = long.groupby("method")["rating"].mean().sort_values(ascending=False).index.tolist()
    fig = new_figure(width, 1.0 + 0.2 * len(order) + (0.15 if width < 5 else 0.0))
    ax = fig.add_subplot()
    rng = np.random.default_rng(0)
    for i, m in enumerate(order):
        v = long.loc[long["method"] == m, "rating"].astype(float).to_numpy()
        look = data.look(m)
        ax.plot(
            v, i + rng.uniform(-0.18, 0.18, len(v)), "o", color="#888888", alpha=0.5, markersize=2.5, markeredgewidth=0
        )
        lo, hi = bootstrap_ci(v, "mean")
        ax.plot([lo, hi], [i, i], color=look.color, linewidth=1.4)
        ax.plot(v.mean(), i, marker=look.marker, color=look.color, markeredgecolor="white", markersize=6)
    ax.set_yticks(range(len(order)), [label(m) for m in order])
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0.7, 5.3)
    ax.set_xticks([1, 2, 3, 4, 5])
    xlabel = "trust rating (1 = no trust, 5 = full trust); mean and 95 % interval"
    ax.set_xlabel(textwrap.fill(xlabel, int(width * 15)))  # 8 pt: about 15 characters an inch
    ax.grid(axis="y", visible=False)
    ax.set_title(textwrap.fill(_agreement_line(data, long), int(width * 16)), fontsize=7)
    return fig


def _ratings(data: FigureData) -> pd.DataFrame:
    """(expert, task, method, rating): a review session's ratings, else the trust file's."""
    if data.ratings is not None and not data.ratings.empty:
        return data.ratings[["expert", "task", "method", "rating"]]
    if data.trust is not None and not data.trust.empty:
        return data.trust.assign(expert="expert", rating=data.trust["trust"].astype(float))[
            ["expert", "task", "method", "rating"]
        ]
    raise FigureError("figure 'trust' needs ratings: give --review SESSION (unblinded) or --trust FILE")


def _agreement_line(data: FigureData, long: pd.DataFrame) -> str:
    import pandas as pd

    experts = long["expert"].nunique()
    models = long[["task", "method"]].drop_duplicates().shape[0]
    head = f"{experts} expert{'s' if experts != 1 else ''}, {models} models rated"
    if data.agreement is None or experts < 2:
        return f"{head}; agreement needs two or more experts"
    parts = []
    for _, row in data.agreement.iterrows():
        value = row["value"]
        if value is None or not np.isfinite(float(value)):
            parts.append(f"{row['measure']} n/a")
            continue
        ci = ""
        if pd.notna(row.get("ci95_low")) and pd.notna(row.get("ci95_high")):
            ci = f" [{float(row['ci95_low']):.2f}, {float(row['ci95_high']):.2f}]"
        parts.append(f"{row['measure']} = {float(value):.2f}{ci}")
    return f"{head}; agreement: " + "; ".join(parts)
