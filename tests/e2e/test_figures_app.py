"""The app saves figures and reports: f (a PDF of the leaderboard's or plot's figure) and w (the
suite's HTML report) on the Leaderboards and Suite plots screens, also in the command palette,
each saying where the file went."""

from __future__ import annotations

from typing import Any

import pytest
from test_tui import current, make_app, sync, wait_for
from test_tui_seed import seed_demo

from srtui.app.screens.leaderboard import LeaderboardScreen
from srtui.app.screens.plots import SuitePlotsScreen


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return seed_demo(tmp_path_factory.mktemp("figapp") / "ws")


def notices(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@sync
async def test_leaderboard_saves_its_figure_and_the_report(demo):
    app = make_app(demo)
    exports = demo.root / "exports"
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        screen = current(app, LeaderboardScreen)
        await wait_for(pilot, lambda: screen.board is not None)
        assert screen.board is not None and screen.board.rule == "srbench2022-synthetic"
        titles = {c.title: c for c in app.get_system_commands(screen)}
        assert "Save figure (PDF)" in titles and "Save report (HTML)" in titles
        await pilot.press("f")
        figure = exports / "figure-smoke-ranks.pdf"
        await wait_for(pilot, lambda: any("saved figure to" in n for n in notices(app)), timeout=60)
        assert f"saved figure to {figure}" in notices(app)
        assert figure.read_bytes().startswith(b"%PDF-")
        await titles["Save report (HTML)"].callback()  # the palette entry runs the same action
        report = exports / "report-smoke.html"
        await wait_for(pilot, lambda: any("saved report to" in n for n in notices(app)), timeout=120)
        assert f"saved report to {report}" in notices(app)
        assert "<svg" in report.read_text()


@sync
async def test_suite_plots_save_the_figure_shown(demo):
    app = make_app(demo)
    exports = demo.root / "exports"
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        screen = current(app, SuitePlotsScreen)
        await wait_for(pilot, lambda: screen.aggregate is not None)
        await pilot.press("f")  # the registry's first kind: the 2021 pareto figure
        await wait_for(pilot, lambda: (exports / "figure-smoke-pareto.pdf").is_file(), timeout=60)
        await pilot.press("t", "t", "f")  # solution-rate has no terminal form: the screen says so, f saves it
        await wait_for(pilot, lambda: (exports / "figure-smoke-solution-rate.pdf").is_file(), timeout=60)
        await wait_for(pilot, lambda: sum("saved figure to" in n for n in notices(app)) == 2, timeout=60)
