"""Figures laid out by measurement (issue #46): one look per method across a workspace's suites,
labels placed where they overlap nothing, a heatmap that fills its figure, and a report that
leaves out a figure with nothing to draw, saying why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import srtui
from test_figures import layout_problems

from srtui.engine.workspace import Workspace
from srtui.outputs import figure_data
from srtui.results.outputs.figures import FigureData, draw
from srtui.results.outputs.figures.style import PALETTE
from srtui.results.store.store import Store

BLACKBOX = "paper-blackbox-law"


@pytest.fixture(scope="module")
def two_suites(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Suite a: linear and ridge on smoke-linear; suite b: ridge and probe-noop on a task of the
    user's own without ground truth (black-box)."""
    root = tmp_path_factory.mktemp("layout")
    ws = root / "ws"
    rng = np.random.default_rng(1)
    for part, n in (("train", 60), ("test", 30)):
        x = rng.uniform(-1, 1, size=(n, 2))
        pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "y": 1.0 + x[:, 0] * x[:, 1]}).to_csv(
            root / f"{part}.csv", index=False
        )
    srtui(
        "tasks",
        "add",
        BLACKBOX,
        str(root / "train.csv"),
        "--test",
        str(root / "test.csv"),
        "--target",
        "y",
        "-w",
        str(ws),
        check=True,
    )
    for name, task, methods in (("a", "smoke-linear", '"linear", "ridge"'), ("b", BLACKBOX, '"ridge", "probe-noop"')):
        suite = root / f"{name}.toml"
        suite.write_text(
            f'name = "{name}"\ntasks = ["{task}"]\nmethods = [{methods}]\nseeds = [1, 2]\nscoring = "srbench2021"\n'
        )
        srtui("run", str(suite), "-w", str(ws), "-j", "2", check=True)
    return ws


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_method_looks_the_same_in_every_suite_of_the_workspace(two_suites: Path, tmp_path: Path) -> None:
    store = Store(Workspace(two_suites), readonly=True)
    try:
        a, b = figure_data(store, "a"), figure_data(store, "b")
        assert a.look("ridge") == b.look("ridge")
        assert len({a.look(m) for m in ("linear", "ridge", "probe-noop")}) == 3
    finally:
        store.close()
    # in the files: ridge's colour (the third of the sorted workspace methods) in both suites' figures
    ridge = PALETTE[2].lower()
    for suite in ("a", "b"):
        svg = tmp_path / f"{suite}.svg"
        srtui("plot", "points", "--suite", suite, "--out", str(svg), "-w", str(two_suites), check=True)
        assert ridge in svg.read_text().lower(), suite


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_report_leaves_out_a_figure_with_nothing_to_draw_and_says_why(two_suites: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    srtui("report", "--out", str(out), "-w", str(two_suites), check=True)
    html = out.read_text()
    part_b = html[html.index('id="suite-b"') if 'id="suite-b"' in html else html.rindex(">b<") :]
    assert "solution-rate</strong>: figure &#39;solution-rate&#39;: no run has a symbolic solution figure" in part_b
    assert "no ground truth" in part_b


def _energy_runs() -> pd.DataFrame:
    """Two methods whose points nearly meet (their labels would overlap at one fixed offset)."""
    rows = []
    for method, fit_s, energy_j in (("gplearn", 10.0, 360.0), ("pyoperon", 10.4, 372.0), ("linear", 0.1, 1.0)):
        for seed in (1, 2):
            rows.append(
                dict(task="t", method=method, seed=seed, status="ok", r2_test=0.9, fit_s=fit_s, energy_j=energy_j)
            )
    return pd.DataFrame(rows).assign(energy_method="estimate")


@pytest.mark.parametrize("width", [7.0, 3.5])
def test_energy_labels_of_near_points_do_not_overlap(width: float) -> None:
    fig = draw("energy", FigureData(runs=_energy_runs()), width=width)
    assert layout_problems(fig) == []


def test_wilcoxon_heatmap_fills_the_figure() -> None:
    rng = np.random.default_rng(2)
    runs = pd.DataFrame(
        [
            dict(task=f"t{t}", method=m, seed=1, status="ok", r2_test=float(rng.uniform(0.5, 1)))
            for t in range(6)
            for m in ("ffx", "gplearn", "linear", "poly2", "pyoperon")
        ]
    )
    fig = draw("wilcoxon", FigureData(runs=runs), width=7.0)
    fig.draw_without_rendering()
    heat = fig.axes[0].get_position()
    assert heat.width > 0.6, heat  # of the figure's width; square cells left its left half empty
    assert layout_problems(fig) == []
