"""The figure registry's contract: every kind drawn by both backends (matplotlib's file parsed,
the terminal's drawing in the app non-empty, or the screen saying why a kind has no terminal
form), and a figure kind declared here, in the test, reaching every consumer: `srtui plot`'s
choices and file, the HTML report and the app's Plots screen. A consumer with a list of kinds of
its own fails here."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from test_tui import current, make_app, sync, wait_for
from test_tui_seed import seed_demo
from textual.widgets import ContentSwitcher
from tmux_app import TmuxApp
from typer.testing import CliRunner

from srtui.app.screens.plots import SuitePlotsScreen
from srtui.engine.spec import TERMINAL
from srtui.results.outputs.figures import FigureData, figure, forget, kinds, render, workspace_data
from srtui.results.outputs.figures.plotdata import Plot, Trace
from srtui.results.store.store import Store

PROBE = "probe-sizes"
TOP_BAR = "1 Monitor  2 Results  3 Board  4 Plots  5 Reviews    F1 help ^p palette ^q quit"
PROBE_AXIS = "probe: median model size"


def probe_sizes(data: FigureData) -> Plot:
    """The throwaway kind: each method's median model size over datasets (srbench2021's table)."""
    s = data.score("srbench2021")
    per = s.tables["per_task"]
    sizes = per.groupby("method")[str(s.options["size"])].median().dropna()
    traces = tuple(Trace((float(v),), (float(i),), f"{m} {v:g}", str(m)) for i, (m, v) in enumerate(sizes.items()))
    ticks = tuple((float(i), str(m)) for i, m in enumerate(sizes.index))
    return Plot(traces, PROBE_AXIS, "method", "probe figure", y_ticks=ticks)


@pytest.fixture
def probe() -> Iterator[str]:
    figure(PROBE, "srbench2021", "probe: each method's median model size", axes=(PROBE_AXIS,), order=0)(probe_sizes)
    try:
        yield PROBE
    finally:
        forget(PROBE)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The app's demo workspace, its runs with a training time and an energy figure each."""
    import sqlite3

    ws = seed_demo(tmp_path_factory.mktemp("kinds") / "ws")
    figures = {"linear": (0.5, 180.0), "ridge": (2.0, 90.0), "probe-noop": (0.05, 9.0)}
    with sqlite3.connect(ws.db_path) as conn:
        for method, (fit_s, joules) in figures.items():
            sql = "UPDATE jobs SET fit_s = ?, energy_j = ?, energy_method = 'estimate' WHERE method = ?"
            conn.execute(sql, (fit_s, joules, method))
    return ws


def svg_texts(path: Path) -> str:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return "\n".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text"))


def demo_data(ws) -> FigureData:
    """The demo suite's finished runs, with two experts' ratings for the trust figure."""
    store = Store(ws, readonly=True)
    try:
        data = workspace_data(store, "smoke")
    finally:
        store.close()
    assert data.runs is not None
    data.runs = data.runs[data.runs["status"].isin(TERMINAL)]
    rows = data.runs[["task", "method"]].drop_duplicates()
    data.ratings = pd.concat(
        [
            rows.assign(expert=e, rating=[(i + k) % 5 + 1 for i in range(len(rows))])
            for k, e in enumerate(("ann", "bob"))
        ]
    )
    data.agreement = pd.DataFrame({"measure": ["Krippendorff's alpha"], "value": [0.4]})
    return data


@pytest.mark.parametrize("kind", list(kinds()))
def test_matplotlib_draws_every_kind_to_a_file(demo, tmp_path, kind):
    out = render(kind, demo_data(demo), tmp_path / f"{kind}.svg")
    text = svg_texts(out)
    for word in kinds()[kind].axes:
        assert word in text, (kind, word)


def test_a_kind_without_a_terminal_form_says_why() -> None:
    for k in kinds().values():
        assert (k.plot is None) == bool(k.terminal), k.name  # each either draws in a terminal or says why


async def plots_screen(ws) -> dict[str, tuple[str, str]]:
    """Every kind the app's Plots screen lists: (what its plot shows, its legend), or ("why", the
    screen's sentence) for a kind the terminal cannot draw; at 80x24."""
    app = make_app(ws)
    shown: dict[str, tuple[str, str]] = {}
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        screen = current(app, SuitePlotsScreen)
        await wait_for(pilot, lambda: screen.aggregate is not None, timeout=120)
        assert screen.aggregate is not None
        for kind in [k.name for k in screen.aggregate.kinds]:
            screen.show_plot(kind)
            await pilot.pause(0.2)
            if screen.query_one("#switcher", ContentSwitcher).current == "why":
                shown[kind] = ("why", str(screen.query_one("#why").render()))
            else:
                shown[kind] = (str(screen.query_one("#plot").render()), screen.legend.plain)
    return shown


@sync
async def test_the_terminal_draws_every_kind_it_can_and_names_the_others(demo) -> None:
    shown = await plots_screen(demo)
    assert list(shown) == list(kinds())  # the registry's kinds, by its names, in its order
    for name, k in kinds().items():
        drawn, legend = shown[name]
        if k.terminal:
            assert drawn == "why" and k.terminal in legend and "not drawn in a terminal" in legend, name
        else:
            assert drawn.strip() and "x: " in drawn and "linear" in legend, (name, legend)


@sync
async def test_a_kind_declared_once_reaches_every_consumer(demo, tmp_path, probe) -> None:
    from srtui.cli import app as cli
    from srtui.outputs import write_report

    runner = CliRunner()
    listed = runner.invoke(cli, ["plot", "--list"])
    assert listed.exit_code == 0 and f"\n{probe}" in "\n" + listed.stdout  # `srtui plot`'s choices
    svg = tmp_path / "probe.svg"
    drawn = runner.invoke(cli, ["plot", probe, "--suite", "smoke", "--out", str(svg), "-w", str(demo.root)])
    assert drawn.exit_code == 0, drawn.output
    assert PROBE_AXIS in svg_texts(svg) and "linear" in svg_texts(svg)  # matplotlib drew its data
    store = Store(demo, readonly=True)
    try:
        html = write_report(store, tmp_path / "report.html", ["smoke"]).read_text()
    finally:
        store.close()
    assert probe in html and PROBE_AXIS in html  # the report's figure
    shown = await plots_screen(demo)
    plot, legend = shown[probe]  # the app lists it and the terminal draws its data
    assert plot != "why" and PROBE_AXIS in plot and "linear" in legend and "ridge" in legend


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")
def test_the_plots_screen_in_a_real_terminal_at_80x24(demo) -> None:
    """Read off tmux: the selector names the registry's kinds, `t` walks them in its order, a
    drawn kind shows its axes' words and legend, a file-only kind its reason; the top bar stays."""
    with TmuxApp(f"srtui-kinds-{os.getpid()}", demo.root) as app:
        app.pane("Monitor")
        app.keys("4")
        first = app.pane("median rank of model size", timeout=180)
        app.keys("t")
        points = app.pane("points ", gone="pareto ")
        app.keys("t")
        file_only = app.pane("not drawn in a")
    assert TOP_BAR in first and "pareto" in first and "linear (front)" in first, first
    assert "x: test R²" in points and "linear (" in points, points
    why = kinds()["solution-rate"].terminal
    assert "solution-rate (file)" in file_only and why in " ".join(file_only.split()), file_only
    for screen in (first, points, file_only):
        assert all(len(line) <= 80 for line in screen.splitlines()), screen
