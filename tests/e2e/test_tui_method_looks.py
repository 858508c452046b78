"""The app's suite plots draw each method in the look its figures give it (issue #46): a method's
colour and marker are a function of its name and the workspace's method set, so `poly2` is the
same in a suite where it is alone as in one beside `linear`, in the app and in every figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import srtui
from test_tui import current, sync, wait_for
from textual.color import Color

from srtui.app.app import SrtuiApp
from srtui.app.screens.plots import SuitePlotsScreen
from srtui.engine.workspace import Workspace
from srtui.outputs import figure_data
from srtui.results.store.store import Store


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("looks")
    for name, methods in (("both", '["linear", "poly2"]'), ("alone", '["poly2"]')):
        suite = root / f"{name}.toml"
        suite.write_text(
            f'name = "{name}"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = {methods}\n'
            'seeds = [1]\nscoring = "srbench2021"\n'
        )
        srtui("run", str(suite), "-w", str(root / "ws"), "-j", "2", check=True)
    return root / "ws"


def figure_looks(ws: Path, suite: str) -> dict[str, tuple[str, str]]:
    """Each method's (glyph, colour) as `srtui plot --suite SUITE` draws it."""
    store = Store(Workspace(ws), readonly=True)
    try:
        data = figure_data(store, suite)
        return {m: (data.look(m).glyph, data.look(m).color.lower()) for m in data.looks}
    finally:
        store.close()


def legend_looks(text) -> dict[str, tuple[str, str]]:
    """method -> (glyph, colour) read off a legend line: `GG name   ` spans, the glyph coloured."""
    plain, out = text.plain, {}
    for span in text.spans:
        glyphs = plain[span.start : span.end].strip()
        rest = plain[span.end :].split("   ")[0].strip()
        name = rest.split(" ")[0]
        out[name] = (glyphs[0], Color.parse(str(span.style).split()[-1]).hex.lower())
    return out


async def app_looks(ws: Path, suite: str) -> tuple[tuple[str, ...], dict[str, dict[str, tuple[str, str]]], str]:
    """The suite's methods, each plot's legend looks and the profile plot as drawn, at 80x24;
    checks on the way that the profiles' legend names no front and that the energy plot's two axis
    labels are on lines of their own."""
    app = SrtuiApp(Workspace(ws), label="looks", theme="textual-light")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        screen = current(app, SuitePlotsScreen)
        await wait_for(pilot, lambda: screen.aggregate is not None, timeout=60)
        assert screen.aggregate is not None
        if screen.aggregate.suite != suite:
            screen._load_once(suite)
            await wait_for(pilot, lambda: screen.aggregate is not None and screen.aggregate.suite == suite, timeout=60)
        assert screen.aggregate is not None
        shown, rendered = {}, {}
        for plot in ("profiles", "pareto", "energy"):
            screen.show_plot(plot)
            await pilot.pause(0.5)
            shown[plot] = legend_looks(screen.legend)
            rendered[plot] = str(screen.query_one("#plot").render())  # the plot as the terminal shows it
        drawn = rendered["profiles"]
        assert "(front)" not in str(screen.aggregate.plots["profiles"].traces)  # the front is the pareto plot's
        cost = rendered["energy"].split("\n")
        x_label = [line for line in cost if "training time" in line and "energy" not in line]
        y_label = [line for line in cost if "energy" in line]
        assert x_label and y_label and not set(x_label) & set(y_label), cost
        return screen.aggregate.methods, shown, drawn


@sync
async def test_suite_plots_draw_each_method_in_its_figure_look(workspace: Path) -> None:
    for suite in ("alone", "both"):
        expected = figure_looks(workspace, suite)
        assert "poly2" in expected
        methods, shown, drawn = await app_looks(workspace, suite)
        for plot, looks in shown.items():
            for method in methods:
                if plot != "energy" or method in looks:  # the energy plot: methods with an energy figure
                    assert looks[method] == expected[method], (suite, plot, method)
        assert all(expected[m][0] in drawn for m in methods), drawn
    # the method set is the workspace's: poly2 keeps its look in the suite where it is alone
    assert figure_looks(workspace, "alone")["poly2"] == figure_looks(workspace, "both")["poly2"]
