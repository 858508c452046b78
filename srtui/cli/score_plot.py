"""`srtui score RULE --format plot`: the rule's figure drawn in the terminal (plotext, no colour).

- srbench2021: the paper's Figure 2, each method a letter at (median size rank, median R2 rank),
  the legend under the figure naming it with its front and its source.
- srbench-groundtruth: symbolic solution rate per method, one bar row per noise level shown.
- srbench2025: median energy against median training time (Figure 1, log axes, letters and a
  legend as above) when the runs have energy figures, else the performance profiles.
Method names reach the terminal through engine.textsafe only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.errors import SrtuiError
from engine.textsafe import visible

if TYPE_CHECKING:
    import pandas as pd

    from results.scoring.base import Score

WIDTH, HEIGHT = 100, 30
LABEL_CHARS = 16


class PlotError(SrtuiError, ValueError):
    """A rule without a figure; one line for the CLI."""


def _marker(source: object) -> str:
    return "·" if _published(source) else "●"


def _published(source: object) -> bool:
    return isinstance(source, str) and source.startswith("published:")


def _name(method: object) -> str:
    return visible(str(method), one_line=True)[:LABEL_CHARS]


KEYS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _points(plt: object, rows: list[tuple[object, float, float, str]]) -> list[str]:
    """Each method a one-letter point; the legend lines under the figure name them (labels written
    into a terminal plot overwrite each other)."""
    legend = []
    for i, (method, x, y, extra) in enumerate(rows):
        key = KEYS[i % len(KEYS)]
        plt.scatter([x], [y], marker=key)  # type: ignore[attr-defined]
        legend.append(f"  {key}  {visible(str(method), one_line=True)}  {extra}")
    return legend


def _fronts(plt: object, board: pd.DataFrame) -> tuple[str, list[str]]:
    front = "pareto_front" if "pareto_front" in board.columns else "pareto_rank"
    x = "median_rank_size" if "median_rank_size" in board.columns else "rank_size"
    y = "median_rank_r2" if "median_rank_r2" in board.columns else "rank_r2"
    rows = [
        (r["method"], float(r[x]), float(r[y]), f"front {int(r[front])}  {visible(str(r.get('source', '')))}")
        for _, r in board.iterrows()
    ]
    legend = _points(plt, rows)
    plt.xlabel(f"{x} (model size)")  # type: ignore[attr-defined]
    plt.ylabel(f"{y} (test R2)")  # type: ignore[attr-defined]
    return f"Pareto fronts of the methods ({front}); each letter is a method, named below", legend


def _groundtruth(plt: object, board: pd.DataFrame) -> tuple[str, list[str]]:
    noise = sorted(board["noise"].unique())[0]
    shown = board[board["noise"] == noise].sort_values("symbolic_solution_rate")
    labels = [
        _name(m) + ("" if _marker(s) == "dot" else " ●") for m, s in zip(shown["method"], shown.get("source", ""))
    ]
    plt.bar(labels, list(shown["symbolic_solution_rate"].astype(float)), orientation="horizontal")  # type: ignore[attr-defined]
    return f"symbolic solution rate (%) at noise {noise:g}; ● this workspace", []


def _energy(plt: object, cost: pd.DataFrame) -> tuple[str, list[str]]:
    cost = cost[(cost["median_fit_s"] > 0) & (cost["median_energy_kwh"] > 0)]
    rows = [
        (
            r["method"],
            math.log10(float(r["median_fit_s"])),
            math.log10(float(r["median_energy_kwh"])),
            f"{float(r['median_energy_kwh']):.3g} kWh, {float(r['median_fit_s']):.3g} s  "
            + visible(str(r.get("source", ""))),
        )
        for _, r in cost.iterrows()
    ]
    legend = _points(plt, rows)
    plt.xlabel("log10 median training time (s)")  # type: ignore[attr-defined]
    plt.ylabel("log10 median energy (kWh)")  # type: ignore[attr-defined]
    return "median energy vs median training time (SRBench 2.0's Figure 1)", legend


def _profiles(plt: object, board: pd.DataFrame) -> tuple[str, list[str]]:
    cols = [c for c in board.columns if str(c).startswith("P[R2>=")]
    xs = [float(str(c)[len("P[R2>=") : -1]) for c in cols]
    for _, row in board.iterrows():
        marker = _marker(row.get("source"))
        plt.plot(xs, [float(row[c]) for c in cols], marker=marker, label=_name(row["method"]))  # type: ignore[attr-defined]
    plt.xlabel("R2 threshold")  # type: ignore[attr-defined]
    plt.ylabel("share of datasets")  # type: ignore[attr-defined]
    return "performance profiles P[R2 >= x]; · published, ● this workspace", []


def render_plot(score: Score) -> str:
    """The rule's figure as plain text (no escape sequences), its title on the first line."""
    import plotext as plt

    board = score.main
    plt.clear_figure()
    plt.plotsize(WIDTH, HEIGHT)
    plt.theme("clear")
    check_figure(score.rule)
    if score.rule == "srbench2021":
        title, legend = _fronts(plt, board)
    elif score.rule == "srbench-groundtruth":
        title, legend = _groundtruth(plt, board)
    elif "energy_time" in score.tables and len(score.tables["energy_time"]):
        title, legend = _energy(plt, score.tables["energy_time"])
    else:
        title, legend = _profiles(plt, board)
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    return f"{score.rule}: {title}\n{text}\n" + "".join(f"{line}\n" for line in legend)


FIGURES = ("srbench2021", "srbench-groundtruth", "srbench2025")


def check_figure(rule: str) -> None:
    if rule not in FIGURES:
        raise PlotError(f"rule {rule!r} has no figure (figures: {', '.join(FIGURES)})")


def render(result: Score, fmt: str, raw: bool) -> str:
    """The score as text in ``fmt``; ``plot`` draws the rule's figure, its warning lines under it."""
    from results.outputs.export import render_score

    if fmt != "plot":
        return render_score(result, fmt, raw=raw)
    return render_plot(result) + "".join(f"warning: {visible(w, one_line=True)}\n" for w in result.warnings)
