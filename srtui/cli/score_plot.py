"""`srtui score RULE --format plot`: the rule's figure drawn in the terminal (plotext, no colour).

- srbench2021: the paper's Figure 2, each method a point (``●`` this workspace, ``·`` published)
  with its key letter at (median size rank, median R2 rank), the legend under the figure naming
  it with its front and its source; methods in one character cell share it.
- srbench-groundtruth: symbolic solution rate per method, one bar row per noise level shown.
- srbench2025: median energy against median training time (Figure 1, log axes, letters and a
  legend as above) when the runs have energy figures, else the performance profiles.
Method names reach the terminal through srtui.engine.textsafe only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import visible

if TYPE_CHECKING:
    import pandas as pd

    from srtui.results.scoring.base import Score

WIDTH, HEIGHT = 100, 30
LABEL_CHARS = 16


class PlotError(SrtuiError, ValueError):
    """A rule without a figure; one line for the CLI."""


def _source(row: object) -> str:
    return visible(str(getattr(row, "get", lambda k, d: d)("source", "")), one_line=True)


def _marker(source: object) -> str:
    return "·" if _published(source) else "●"


def _published(source: object) -> bool:
    return isinstance(source, str) and source.startswith("published:")


def _name(method: object) -> str:
    return visible(str(method), one_line=True)[:LABEL_CHARS]


KEYS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _points(plt: object, rows: list[tuple[object, float, float, str, object]]) -> list[str]:
    """Each method a point, ``●`` from this workspace or ``·`` published, with its key letter
    beside it; the legend lines under the figure name the keys (names written into a terminal plot
    overwrite each other). Methods in one character cell share it: ``●ab`` draws both a and b."""
    legend = []
    xs, ys = [r[1] for r in rows], [r[2] for r in rows]
    cells: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for i, (method, x, y, extra, source) in enumerate(rows):
        key = KEYS[i % len(KEYS)]
        glyph = _marker(source)
        cells.setdefault(_cell(x, y, xs, ys), []).append((key, glyph))
        legend.append(f"  {glyph} {key}  {visible(str(method), one_line=True)}  {extra}")
    for (i, j), members in cells.items():
        x, y = rows[[_cell(r[1], r[2], xs, ys) for r in rows].index((i, j))][1:3]
        glyph = "●" if any(g == "●" for _, g in members) else "·"
        keys = "".join(k for k, _ in members)
        plt.scatter([x], [y], marker=glyph)  # type: ignore[attr-defined]
        # the keys on the side with room: right of a point in the left half, left of it in the right
        right = i > (WIDTH - 10) // 2
        plt.text(keys + glyph if right else glyph + keys, x, y, alignment="right" if right else "left")  # type: ignore[attr-defined]
    return legend


def _cell(x: float, y: float, xs: list[float], ys: list[float]) -> tuple[int, int]:
    """The character cell of (x, y) in the plot's area (about WIDTH - 10 by HEIGHT - 6 cells)."""

    def at(v: float, values: list[float], n: int) -> int:
        lo, hi = min(values), max(values)
        return 0 if hi <= lo else round((v - lo) / (hi - lo) * (n - 1))

    return at(x, xs, WIDTH - 10), at(y, ys, HEIGHT - 6)


def _fronts(plt: object, board: pd.DataFrame) -> tuple[str, list[str], str]:
    front = "pareto_front" if "pareto_front" in board.columns else "pareto_rank"
    x = "median_rank_size" if "median_rank_size" in board.columns else "rank_size"
    y = "median_rank_r2" if "median_rank_r2" in board.columns else "rank_r2"
    # a member without a size rank (a black box such as rf) one rank past the largest, as the figure
    board = board.assign(**{x: board[x].fillna(board[x].max() + 1 if board[x].notna().any() else 1.0)})
    board = board[board[y].notna()]
    rows = [
        (r["method"], float(r[x]), float(r[y]), f"front {int(r[front])}  {_source(r)}", r.get("source"))
        for _, r in board.iterrows()
    ]
    legend = _points(plt, rows)
    plt.xlabel(f"x: {x} (model size)")  # type: ignore[attr-defined]
    title = (
        f"Pareto fronts of the methods ({front}); each letter is a method, named below (● this workspace, · published)"
    )
    return title, legend, f"{y} (test R2)"


def _groundtruth(plt: object, board: pd.DataFrame) -> tuple[str, list[str], str]:
    noise = sorted(board["noise"].unique())[0]
    shown = board[board["noise"] == noise].sort_values("symbolic_solution_rate")
    labels = [
        _name(m) + ("" if _marker(s) == "dot" else " ●") for m, s in zip(shown["method"], shown.get("source", ""))
    ]
    plt.bar(labels, list(shown["symbolic_solution_rate"].astype(float)), orientation="horizontal")  # type: ignore[attr-defined]
    return f"symbolic solution rate (%) at noise {noise:g}; ● this workspace", [], ""


def _energy(plt: object, cost: pd.DataFrame) -> tuple[str, list[str], str]:
    cost = cost[(cost["median_fit_s"] > 0) & (cost["median_energy_kwh"] > 0)]
    rows = [
        (
            r["method"],
            math.log10(float(r["median_fit_s"])),
            math.log10(float(r["median_energy_kwh"])),
            f"{float(r['median_energy_kwh']):.3g} kWh, {float(r['median_fit_s']):.3g} s  {_source(r)}",
            r.get("source"),
        )
        for _, r in cost.iterrows()
    ]
    legend = _points(plt, rows)
    plt.xlabel("x: log10 median training time (s)")  # type: ignore[attr-defined]
    title = "median energy vs median training time (SRBench 2.0's Figure 1; ● this workspace, · published)"
    return title, legend, "log10 median energy (kWh)"


def _profiles(plt: object, board: pd.DataFrame) -> tuple[str, list[str], str]:
    cols = [c for c in board.columns if str(c).startswith("P[R2>=")]
    xs = [float(str(c)[len("P[R2>=") : -1]) for c in cols]
    for _, row in board.iterrows():
        marker = _marker(row.get("source"))
        plt.plot(xs, [float(row[c]) for c in cols], marker=marker, label=_name(row["method"]))  # type: ignore[attr-defined]
    plt.xlabel("x: R2 threshold")  # type: ignore[attr-defined]
    return "performance profiles P[R2 >= x]; · published, ● this workspace", [], "share of datasets"


def render_plot(score: Score) -> str:
    """The rule's figure as plain text (no escape sequences), its title on the first line."""
    import plotext as plt

    board = score.main
    plt.clear_figure()
    plt.plotsize(WIDTH, HEIGHT)
    plt.theme("clear")
    check_figure(score.rule)
    if score.rule == "srbench2021":
        title, legend, ylabel = _fronts(plt, board)
    elif score.rule == "srbench-groundtruth":
        title, legend, ylabel = _groundtruth(plt, board)
    elif "energy_time" in score.tables and len(score.tables["energy_time"]):
        title, legend, ylabel = _energy(plt, score.tables["energy_time"])
    else:
        title, legend, ylabel = _profiles(plt, board)
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    # the y axis's label on a line of its own above the plot (plotext writes both under it)
    above = f"y: {ylabel}\n" if ylabel else ""
    return f"{score.rule}: {title}\n{above}{text}\n" + "".join(f"{line}\n" for line in legend)


FIGURES = ("srbench2021", "srbench-groundtruth", "srbench2025")


def check_figure(rule: str) -> None:
    if rule not in FIGURES:
        raise PlotError(f"rule {rule!r} has no figure (figures: {', '.join(FIGURES)})")


def render(result: Score, fmt: str, raw: bool) -> str:
    """The score as text in ``fmt``; ``plot`` draws the rule's figure, its warning lines under it."""
    from srtui.results.outputs.export import render_score

    if fmt != "plot":
        return render_score(result, fmt, raw=raw)
    return render_plot(result) + "".join(f"warning: {visible(w, one_line=True)}\n" for w in result.warnings)
