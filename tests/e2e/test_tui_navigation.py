"""Navigation that never surprises (Pilot, on the seeded demo workspace): every number key from
every screen lands on its section's root, Tab reaches every control of every screen, Escape goes
back, the quit arm expires, and every screen action is in the command palette."""

from __future__ import annotations

import asyncio

import pytest
from test_tui import current, job_id_of, make_app, sync, wait_for
from test_tui_seed import seed_demo
from textual.widgets import Input

from srtui.app.review.organiser import ReviewSessionScreen, ReviewSessionsScreen
from srtui.app.screens.dialogs import HelpScreen
from srtui.app.screens.expression import ExpressionScreen
from srtui.app.screens.leaderboard import LeaderboardScreen
from srtui.app.screens.monitor import MonitorScreen
from srtui.app.screens.plots import JobPlotsScreen, SuitePlotsScreen
from srtui.app.screens.results import ResultsScreen
from srtui.app.widgets import SECTIONS

ROOTS = {
    "monitor": MonitorScreen,
    "results": ResultsScreen,
    "leaderboard": LeaderboardScreen,
    "plots": SuitePlotsScreen,
    "reviews": ReviewSessionsScreen,
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from srtui.results.store.store import Store
    from srtui.reviews import FrozenItem, create_session

    ws = seed_demo(tmp_path_factory.mktemp("nav") / "ws")
    store = Store(ws)
    content = {
        "task": "smoke-linear",
        "r2_test": 0.9,
        "simplicity": -1.0,
        "expression": "x0",
        "plain": "x0",
        "expression_ascii": "x0",
        "black_box": False,
        "series": {},
    }
    create_session(store, "rs", [FrozenItem("smoke-linear", "linear", content)], ["ann"], seed=1)
    store.close()
    return ws


async def _open(pilot, where: str, ws) -> None:
    """Go to a screen: a section's root, or one opened from it (a run, its plots, a session, help)."""
    app = pilot.app
    if where in ROOTS:
        if app.focused is not None and app.focused.id == "filter":
            await pilot.press("escape")  # digits typed into the filter stay there
        await pilot.press(str([m for m, _ in SECTIONS].index(where) + 1))
        await wait_for(pilot, lambda: isinstance(app.screen, ROOTS[where]))
    elif where == "expression":
        await _open(pilot, "results", ws)
        app.open_expression(job_id_of(ws, "ridge"))
        await wait_for(pilot, lambda: isinstance(app.screen, ExpressionScreen))
    elif where == "job-plots":
        await _open(pilot, "results", ws)
        app.open_plots(job_id_of(ws, "linear"))
        await wait_for(pilot, lambda: isinstance(app.screen, JobPlotsScreen))
    elif where == "review-session":
        await _open(pilot, "reviews", ws)
        await wait_for(pilot, lambda: app.screen.query_one("#sessions").row_count == 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewSessionScreen))
    elif where == "help":
        await _open(pilot, "leaderboard", ws)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


@pytest.mark.slow
@sync
async def test_every_number_key_from_every_screen_lands_on_its_section_root(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        for start in (*ROOTS, "expression", "job-plots", "review-session", "help"):
            for number, (mode, _label) in enumerate(SECTIONS, 1):
                await _open(pilot, start, demo)
                await pilot.press(str(number))
                await wait_for(pilot, lambda mode=mode: app.current_mode == mode and len(app.screen_stack) == 1)
                assert isinstance(app.screen, ROOTS[mode]), (start, number, app.screen)
        # and a section keeps no screen opened on top of it for next time
        await _open(pilot, "expression", demo)
        await pilot.press("1", "2")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen) and len(app.screen_stack) == 1)


@sync
async def test_digits_typed_into_the_filter_stay_in_the_filter(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "results", demo)
        await pilot.press("slash", *"seed=2082")
        assert app.screen.query_one("#filter", Input).value == "seed=2082" and isinstance(app.screen, ResultsScreen)


#: the controls Tab must reach on each screen (widget ids)
CONTROLS = {
    "monitor": {"running", "failures"},
    "results": {"filter", "results"},
    "leaderboard": {"board-suite", "board-rule", "board", "breakdown"},
    "plots": {"suite"},
    "reviews": {"sessions"},
    "expression": {"model-scroll", "truth-scroll", "metrics", "pareto"},
    "review-session": {"experts", "report-box"},
}


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@sync
async def test_tab_reaches_every_control_of_every_screen(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        for where, wanted in CONTROLS.items():
            await _open(pilot, where, demo)
            await pilot.pause(0.3)
            seen = set()
            for _ in range(len(wanted) + 3):
                await pilot.press("tab")
                if app.focused is not None and app.focused.id:
                    seen.add(app.focused.id)
            assert wanted <= seen, (where, wanted - seen)
            if where in ("expression", "review-session"):  # Escape goes back to where it was opened
                app.set_focus(None)
                await pilot.press("escape")
                await wait_for(pilot, lambda: len(app.screen_stack) == 1)


@sync
async def test_quit_during_a_run_started_here_asks_and_the_arm_expires(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        app.run_active = True  # the state a run started from the app leaves (the run itself is tested elsewhere)
        await pilot.press("ctrl+q")
        assert app.is_running and any("press ctrl+q again within 3 s" in n.message for n in app._notifications)
        await asyncio.sleep(3.3)  # the arm expires: the next press asks again
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running and not app._cancel.is_set()
        await pilot.press("ctrl+q")  # within 3 s: stop the run and quit
        await pilot.pause()
        assert app._cancel.is_set() and app._force.is_set()
        app.run_active = False
    # without a run, one press quits
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


@sync
async def test_every_screen_action_is_in_the_command_palette(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        for where in ("monitor", "results", "leaderboard", "plots", "expression", "review-session"):
            await _open(pilot, where, demo)
            titles = {c.title for c in app.get_system_commands(app.screen)}
            actions = [
                active.binding.description
                for active in app.screen.active_bindings.values()
                if active.node is app.screen and active.binding.description and active.enabled
            ]
            assert actions, f"{where}: the screen shows no actions of its own"
            missing = [a for a in actions if a not in titles]
            assert not missing, (where, missing)
            if where in ("expression", "review-session"):
                await pilot.press("escape")


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@sync
async def test_explorer_and_board_follow_a_run_writing_the_workspace(tmp_path):
    from test_tui_seed import LIMITS

    from srtui.engine.spec import JobSpec
    from srtui.results.store.store import Store

    ws = seed_demo(tmp_path / "ws")
    app = make_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "results", ws)
        results = current(app, ResultsScreen)
        await wait_for(pilot, lambda: results.page is not None and results.page.total == 10)
        store = Store(ws)  # another process's run plans more jobs
        try:
            fp = store.conn.execute("SELECT data_fingerprint FROM jobs WHERE task = 'smoke-linear'").fetchone()[0]
            store.plan([JobSpec("smoke", "smoke-linear", "linear", 7, LIMITS, fp, "1.0")])
        finally:
            store.close()
        await wait_for(
            pilot, lambda: results.page is not None and results.page.total == 11, timeout=20
        )  # no key pressed
        await _open(pilot, "leaderboard", ws)
        board = current(app, LeaderboardScreen)
        await wait_for(pilot, lambda: board.board is not None, timeout=60)
        first = board.board
        store = Store(ws)
        try:
            store.conn.execute("UPDATE jobs SET r2_test = 0.5 WHERE method = 'ridge'")
            store.conn.commit()
        finally:
            store.close()
        await wait_for(pilot, lambda: board.board is not first, timeout=30)


@sync
async def test_every_footer_fits_80_columns(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        for where in (*ROOTS, "expression", "job-plots", "review-session"):
            await _open(pilot, where, demo)
            await pilot.pause(0.2)
            shown = [
                (app.get_key_display(a.binding), a.binding.description)
                for a in app.screen.active_bindings.values()
                if a.binding.show and a.binding.description and a.enabled
            ]
            width = sum(len(k) + len(d) + 2 for k, d in shown)
            assert width <= 80, (where, shown)
            assert all(a.node is not app for a in app.screen.active_bindings.values() if a.binding.show), where


@sync
async def test_tab_reaches_every_control_of_the_expert_screen(tmp_path):
    from test_reviews_processes import _workspace

    from srtui.app.review.expert import ReviewApp
    from srtui.results.store.store import Store
    from srtui.reviews import ExpertSession

    root = _workspace(tmp_path, 3, ["alice"])
    from srtui.engine.workspace import Workspace

    store = Store(Workspace(root))
    app = ReviewApp(ExpertSession.open(store, "s", "alice"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        seen = set()
        for _ in range(5):
            await pilot.press("tab")
            seen.add(app.focused.id if app.focused else None)
        assert {"body", "comment"} <= seen  # the model is wrapped: nothing to scroll sideways
    store.close()
