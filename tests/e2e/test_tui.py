"""Pilot tests: every screen of the app driven from the keyboard on a seeded, real workspace."""

from __future__ import annotations

import asyncio
import csv
from typing import Any, TypeVar

import pytest
from test_tui_seed import FIXED_NOW, MARKUP_MODEL, seed_demo
from textual.app import App
from textual.screen import Screen
from textual.widgets import ContentSwitcher, DataTable, Input, Select, SelectionList, Static

from srtui.app.app import SrtuiApp
from srtui.app.screens.dialogs import HelpScreen, StartRunScreen
from srtui.app.screens.expression import ExpressionScreen
from srtui.app.screens.leaderboard import LeaderboardScreen
from srtui.app.screens.monitor import MonitorScreen
from srtui.app.screens.plots import JobPlotsScreen, SuitePlotsScreen
from srtui.app.screens.results import ResultsScreen

S = TypeVar("S", bound=Screen[Any])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return seed_demo(tmp_path_factory.mktemp("tui") / "ws")


def make_app(ws) -> SrtuiApp:
    return SrtuiApp(ws, label="demo", clock=lambda: FIXED_NOW, theme="textual-dark")


def sync(fn):
    """Run an async test with asyncio.run (the suite has no async pytest plugin)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


async def wait_for(pilot, condition, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


def text_of(widget: Static) -> str:
    return str(widget.render())


def current(app: App[Any], kind: type[S]) -> S:
    """The app's current screen, checked to be a ``kind``."""
    screen = app.screen
    assert isinstance(screen, kind), screen
    return screen


def job_id_of(ws, method: str, task: str = "smoke-linear") -> str:
    from srtui.results.store.store import Store

    store = Store(ws, readonly=True)
    try:
        return next(j["job_id"] for j in store.jobs() if j["method"] == method and j["task"] == task)
    finally:
        store.close()


@sync
async def test_monitor_counts_running_and_failures(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: current(app, MonitorScreen).snapshot is not None)
        counts = text_of(app.screen.query_one("#counts", Static))
        assert "8/10 finished" in counts and "ok 4" in counts and "crashed 2" in counts
        assert "1 active run(s)" in counts
        running = app.screen.query_one("#running", DataTable)
        assert running.row_count == 1
        elapsed = str(running.get_row_at(0)[2])
        assert elapsed.endswith("/ 1:00") and elapsed.startswith("1:")  # over its limit, shown as such
        failures = app.screen.query_one("#failures", DataTable)
        assert failures.row_count == 4
        await pilot.press("j", "j")
        tail = text_of(app.screen.query_one("#failure-tail", Static))
        assert tail  # the highlighted failure's error or stderr, as plain text
        # the crashed jobs' stderr is markup-like: it shows literally
        snapshot = current(app, MonitorScreen).snapshot
        assert snapshot is not None
        crashed = [f for f in snapshot.failures if f.status == "crashed"]
        assert any("[bold red]boom[/]" in f.tail for f in crashed)
        await pilot.press("enter")  # the highlighted failure opens as a run
        assert isinstance(app.screen, ExpressionScreen)


@sync
async def test_monitor_says_when_a_runs_driver_is_gone(tmp_path):
    import sqlite3

    ws = seed_demo(tmp_path / "ws")
    with sqlite3.connect(ws.db_path) as conn:  # the run's driver died (a pid that does not exist)
        conn.execute("UPDATE runs SET driver = '999999999:0.000'")
    app = make_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: current(app, MonitorScreen).snapshot is not None)
        counts = text_of(app.screen.query_one("#counts", Static))
        assert "no run in progress" in counts and "1 run(s) lost their driver" in counts
        assert str(app.screen.query_one("#running", DataTable).get_row_at(0)[2]) == "driver gone"


@sync
async def test_monitor_polls_without_overlap(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: current(app, MonitorScreen).snapshot is not None)
        await pilot.pause(1.2)
        polls = [w for w in app.workers if w.group == "monitor-poll" and not w.is_finished]
        assert len(polls) <= 1


@sync
async def test_results_filter_sort_group_and_drill(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        screen = current(app, ResultsScreen)
        await wait_for(pilot, lambda: screen.page is not None)
        table = screen.query_one("#results", DataTable)
        assert screen.page is not None and screen.page.total == 10 and table.row_count == 10
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"method=linear,ridge", "enter")
        await wait_for(pilot, lambda: screen.page.query.filter_text == "method=linear,ridge")
        assert screen.page.total == 4
        await pilot.press("o")  # sort by the next column (method)
        await wait_for(pilot, lambda: screen.page.query.sort == "method")
        await pilot.press("b")  # group by method: per-method summaries
        await wait_for(pilot, lambda: screen.page.query.group_by == ("method",))
        rows = {r[0]: r for r in screen.page.rows}
        assert set(rows) == {"linear", "ridge"}
        assert rows["linear"][screen.page.columns.index("median_r2_test")] == pytest.approx(1.0)
        await pilot.press("j", "enter")  # drill into the highlighted group
        await wait_for(pilot, lambda: not screen.page.query.group_by)
        assert screen.page.total == 2
        # a bad filter is one notice, not a crash, and keeps the page
        await pilot.press("slash", *"bogus>1", "enter")
        await pilot.pause(0.3)
        assert screen.page.total == 2
        # ... and the previous filter stays in use, which the info line and the notice both say
        active = screen.page.query.filter_text
        assert active.startswith("method=linear,ridge") and screen.filter_problem
        info = text_of(screen.query_one("#info", Static))
        assert f"filter: {active}" in info and "box: not a filter, kept" in info
        said = "the filter in use is still: " + active
        await wait_for(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        assert any(said in str(n.message) for n in app._notifications)
        filter_box = screen.query_one("#filter", Input)
        filter_box.value = active  # fixing the box clears the warning (as typing does)
        await wait_for(pilot, lambda: screen.filter_problem is None)
        assert screen.filter_problem is None and "not a filter" not in text_of(screen.query_one("#info", Static))


@sync
async def test_results_open_expression_and_plots(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        screen = current(app, ResultsScreen)
        await wait_for(pilot, lambda: screen.page is not None)
        await pilot.press("enter")
        assert isinstance(app.screen, ExpressionScreen)
        await pilot.press("escape")
        await pilot.press("p")
        assert isinstance(app.screen, JobPlotsScreen)


@sync
async def test_expression_view_pretty_truth_metrics_pareto_copy(demo):
    app = make_app(demo)
    ridge = job_id_of(demo, "ridge")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        app.open_expression(ridge)
        screen = current(app, ExpressionScreen)
        await wait_for(pilot, lambda: screen.detail is not None)
        model = text_of(screen.query_one("#model", Static))
        truth = text_of(screen.query_one("#truth", Static))
        assert "x₀" in model and "x₀" in truth  # unicode 2-D print
        pareto = screen.query_one("#pareto", DataTable)
        assert pareto.display and pareto.row_count == 2
        metrics = {
            str(r[0]): str(r[1])
            for r in (
                screen.query_one("#metrics", DataTable).get_row_at(i)
                for i in range(screen.query_one("#metrics", DataTable).row_count)
            )
        }
        assert metrics["fidelity R² (expression vs method)"] == "1"
        assert "model size (nodes)" in metrics
        await pilot.press("a")  # ASCII fallback
        assert "x0" in text_of(screen.query_one("#model", Static))
        assert "⋅" not in text_of(screen.query_one("#model", Static))
        await pilot.press("c")
        assert screen.detail is not None and screen.detail.model is not None
        assert app.clipboard == screen.detail.model.text
        await pilot.press("l")
        assert app.clipboard == screen.detail.model.latex and "x_{0}" in app.clipboard
        pareto.focus()
        await pilot.press("enter")  # show the first member of the front (printed in a worker)
        await wait_for(pilot, lambda: screen.shown is not None and screen.shown.text == "x0")


@sync
async def test_markup_like_model_and_stderr_render_as_text(demo):
    app = make_app(demo)
    noop = job_id_of(demo, "probe-noop")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        app.open_expression(noop)
        screen = current(app, ExpressionScreen)
        await wait_for(pilot, lambda: screen.detail is not None)
        shown = text_of(screen.query_one("#model", Static))
        assert MARKUP_MODEL in shown
        await pilot.pause(0.2)  # a render pass with the markup-like text on screen
        await pilot.press("escape", "2")
        await wait_for(pilot, lambda: getattr(app.screen, "page", None) is not None)
        table = app.screen.query_one("#results", DataTable)
        models = [str(table.get_row_at(i)[6]) for i in range(table.row_count)]
        assert any(m.startswith("[bold]x0[/bold]") for m in models)


@sync
async def test_job_plots_and_suite_plots(demo):
    app = make_app(demo)
    linear = job_id_of(demo, "linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        app.open_plots(linear)
        screen = current(app, JobPlotsScreen)
        await wait_for(pilot, lambda: screen.series is not None)
        assert screen.series is not None and len(screen.series.y_test) == len(screen.series.pred_test)
        await pilot.press("t")  # not a time series: a notice, the scatter stays
        assert screen.query_one("#switcher", ContentSwitcher).current == "scatter"
        await pilot.press("escape", "4")
        suite_screen = current(app, SuitePlotsScreen)
        await wait_for(pilot, lambda: suite_screen.aggregate is not None)
        agg = suite_screen.aggregate
        assert agg is not None and agg.n_tasks == 2
        curves = {t.method: t.y for t in agg.plots["profiles"].traces}
        assert curves["linear"][-1] == 1.0
        assert "linear (front)" in [t.label for t in agg.plots["pareto"].traces]
        assert suite_screen.kind == "pareto"  # the registry's first kind the terminal draws
        await pilot.press("t")  # the next kind in the registry's order
        assert suite_screen.kind == "points"
        assert suite_screen.query_one("#switcher", ContentSwitcher).current == "plot"
        await pilot.press("t")  # solution-rate has no terminal form and says so
        assert suite_screen.kind == "solution-rate"
        assert suite_screen.query_one("#switcher", ContentSwitcher).current == "why"
        assert "not drawn in a terminal" in str(suite_screen.query_one("#why").render())


@sync
async def test_leaderboard_and_export(demo):
    app = make_app(demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        screen = current(app, LeaderboardScreen)
        await wait_for(pilot, lambda: screen.board is not None)
        assert screen.board is not None and screen.board.suite == "smoke"
        table = screen.query_one("#board", DataTable)
        assert table.row_count >= 2
        await pilot.press("e")
        main = demo.root / "exports" / f"leaderboard-smoke-{screen.board.rule}.csv"
        with open(main) as fh:
            rows = list(csv.reader(fh))
        assert tuple(rows[0]) == screen.board.columns and len(rows) == len(screen.board.rows) + 1
        assert (demo.root / "exports" / f"leaderboard-smoke-{screen.board.rule}-per-dataset.csv").is_file()


@sync
async def test_f1_help_lists_the_screen_bindings(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await pilot.pause(0.1)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        keys = dict((d, k) for k, d in app.screen.bindings)
        assert keys["Filter"] == "/" and "Group" in keys and "Help" in keys
        # what the screen is for comes before its list of keys
        parts = [str(w.render()) for w in app.screen.query(Static)]
        explained = next(i for i, p in enumerate(parts) if "Every run in the workspace" in p)
        listed = next(i for i, p in enumerate(parts) if "Table object" in p)  # the rich table of keys
        assert explained < listed
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")  # ? as in less and vim
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("slash", "question_mark")  # typed into the filter, it is text
        assert not isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#filter", Input).value == "?"


@sync
async def test_the_open_palette_shows_sections_then_actions_then_cursor_moves(demo):
    """The list as the user sees it (ctrl+p, nothing typed): Textual's own provider sorted it by
    name ("Board", "Copy selected text", "Focus Next" ... above "Filter" and "Monitor")."""
    from textual.command import CommandList, CommandPalette

    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        screen = current(app, ResultsScreen)
        await wait_for(pilot, lambda: screen.page is not None)
        screen.query_one("#results", DataTable).focus()
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        listed = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: listed.option_count > 10)
        titles = [str(listed.get_option_at_index(i).prompt).split("\n")[0] for i in range(listed.option_count)]
        assert titles[:5] == ["Monitor", "Results", "Board", "Plots", "Reviews"], titles
        assert titles.index("Filter") < titles.index("Cursor down") < titles.index("Help"), titles


@sync
async def test_the_palette_lists_a_screens_actions_before_its_cursor_moves(demo):
    from srtui.app.screens.base import MOVES, screen_commands

    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        screen = current(app, ResultsScreen)
        await wait_for(pilot, lambda: screen.page is not None)
        screen.query_one("#results", DataTable).focus()
        await pilot.pause()
        titles = [c.title for c in screen_commands(app, screen)]
        assert "Filter" in titles and "Cursor down" in titles, "|".join(titles)
        moves = [i for i, t in enumerate(titles) if t.startswith(("Cursor", "Page", "Copy", "Focus")) or t == "Top"]
        actions = [i for i, t in enumerate(titles) if t in ("Filter", "Sort", "Group")]
        assert max(actions) < min(moves), titles
        assert MOVES[0] == "cursor_"


@sync
async def test_command_palette_offers_srtui_commands(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Monitor", "Results", "Board", "Plots", "Reviews", "Start a run", "Help", "Theme"):
            assert wanted in titles


@sync
async def test_missing_workspace_and_no_color(tmp_path, monkeypatch):
    from srtui.engine.workspace import Workspace

    monkeypatch.setenv("NO_COLOR", "1")
    app = SrtuiApp(Workspace(tmp_path / "nothing"), label="nothing", clock=lambda: FIXED_NOW)
    assert app.no_color
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: current(app, MonitorScreen).snapshot is not None)
        assert "No srtui workspace at nothing" in text_of(app.screen.query_one("#counts", Static))
        await pilot.press("2")
        await wait_for(pilot, lambda: current(app, ResultsScreen).page is not None)
        page = current(app, ResultsScreen).page
        assert page is not None and page.total == 0


@sync
async def test_terminal_gone_exits(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        app.terminal_gone()
        await pilot.pause(0.2)
    assert app.return_code == 129


@sync
async def test_start_a_run_from_the_app(tmp_path):
    from srtui.engine.workspace import Workspace

    ws = Workspace(tmp_path / "fresh")
    app = SrtuiApp(ws, label="fresh")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        form = current(app, StartRunScreen)
        assert form.query_one("#suite", Select).value == "smoke"
        form.query_one("#tasks", Input).value = "nonsense-task"
        form.query_one("#methods", SelectionList).select("linear")
        form.query_one("#jobs", Input).value = "1"
        form.query_one("#jobs", Input).focus()
        await pilot.press("enter")  # an unknown task: said in the form, every field kept
        await wait_for(pilot, lambda: "nonsense-task" in str(form.query_one("#start-error").render()), timeout=60)
        assert app.screen is form and form.query_one("#jobs", Input).value == "1"
        assert list(form.query_one("#methods", SelectionList).selected) == ["linear"]
        boxes = form.query_one("#methods", SelectionList)  # chosen and not chosen differ without colour
        lines = {boxes.get_option_at_index(i).value: boxes.render_line(i).text for i in range(boxes.option_count)}
        assert lines["linear"].startswith("▐X▌") and all(t.startswith("▐ ▌") for m, t in lines.items() if m != "linear")
        form.query_one("#tasks", Input).value = "smoke-linear"
        form.query_one("#tasks", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.run_active, timeout=60)
        await wait_for(pilot, lambda: not app.run_active, timeout=120)
        await wait_for(pilot, lambda: "1/1 finished" in text_of(app.screen.query_one("#counts", Static)), timeout=10)
