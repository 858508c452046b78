"""Snapshot tests of the main screens at 80x24 and 120x40, on fixed data with a fixed clock.

Update after an intended change with ``pytest tests/e2e/test_tui_snapshots.py --snapshot-update``
and look at the report it writes.
"""

from __future__ import annotations

import pytest
from test_tui_seed import FIXED_NOW, seed_demo
from textual.widgets import DataTable, Input

from srtui.app.app import SrtuiApp

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return seed_demo(tmp_path_factory.mktemp("snap") / "ws")


def make_app(ws) -> SrtuiApp:
    return SrtuiApp(ws, label="demo", clock=lambda: FIXED_NOW, theme="textual-dark", ascii=False, timings=False)


def until(condition, timeout: float = 20.0):
    async def run_before(pilot) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not condition(pilot.app):
            if loop.time() > end:
                raise AssertionError("screen never finished loading")
            await pilot.pause(0.05)
        for widget in pilot.app.screen.query(Input):
            widget.cursor_blink = False
        # let what the loaded data set off settle (highlight events, follow-up workers, a refresh),
        # also on a loaded machine; a DataTable sizes its columns to new rows only when its own
        # message queue is idle, so wait for that too (else a busy run captures narrow columns)
        await pilot.app.workers.wait_for_complete()
        while any(t._require_update_dimensions or t._updated_cells for t in pilot.app.screen.query(DataTable)):
            if loop.time() > end:
                raise AssertionError("tables never finished sizing their columns")
            await pilot.pause(0.05)
        # then repaint every table from its settled data: once, beside a full test run, a table
        # shown moments before (the expression screen's Pareto front) was captured as blank lines
        # (seen again beside two CPU burners): repaint until each shown table paints its first line
        while True:
            for table in pilot.app.screen.query(DataTable):
                table._clear_caches()
                table.refresh()
            pilot.app.screen.refresh(layout=True)
            await pilot.pause(0.1)
            await pilot.pause()
            if all(_painted(t) for t in pilot.app.screen.query(DataTable)):
                break
            if loop.time() > end:
                stuck = [(t.id, t.region, t.row_count) for t in pilot.app.screen.query(DataTable) if not _painted(t)]
                raise AssertionError(f"a table never painted its rows: {stuck}")

    return run_before


def _painted(table: DataTable) -> bool:
    """A table with rows that is shown has a region and text on its first line (its header, or
    its first row when it has no header); a hidden or empty one counts as painted."""
    if not table.display or table.row_count == 0:
        return True
    return table.region.height > 0 and bool(table.render_line(0).text.strip())


def after_key(key: str, loaded: str):
    """Press ``key`` (a mode), then wait until the new screen's ``loaded`` attribute is set."""

    async def run_before(pilot) -> None:
        await pilot.press(key)
        await until(lambda app: getattr(app.screen, loaded, None) is not None)(pilot)

    return run_before


def _job(ws, method: str) -> str:
    from srtui.results.store.store import Store

    store = Store(ws, readonly=True)
    try:
        return next(j["job_id"] for j in store.jobs() if j["method"] == method and j["task"] == "smoke-linear")
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_monitor(snap_compare, demo, size):
    assert snap_compare(
        make_app(demo),
        terminal_size=size,
        run_before=until(lambda app: getattr(app.screen, "snapshot", None) is not None),
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_results(snap_compare, demo, size):
    assert snap_compare(make_app(demo), terminal_size=size, run_before=after_key("2", "page"))


def test_results_grouped_by_method(snap_compare, demo):
    async def run_before(pilot):
        await after_key("2", "page")(pilot)
        await pilot.press("b")
        await until(lambda app: app.screen.page.query.group_by == ("method",))(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_results_grouped_with_a_long_filter_wraps_its_status(snap_compare, demo):
    # the status line (range, grouping, sort, filter) is never cut at 80 columns: it wraps
    async def run_before(pilot):
        await after_key("2", "page")(pilot)
        await pilot.press("slash", *"method=linear,ridge,probe-noop status!=pending task~smoke", "enter")
        await until(lambda app: "status!=pending" in app.screen.page.query.filter_text)(pilot)
        await pilot.press("b")
        await until(lambda app: app.screen.page.query.group_by == ("method",))(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_expression(snap_compare, demo, size):
    job = _job(demo, "ridge")

    async def run_before(pilot):
        pilot.app.open_expression(job)
        await until(lambda app: getattr(app.screen, "detail", None) is not None)(pilot)

    assert snap_compare(make_app(demo), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_leaderboard(snap_compare, demo, size):
    assert snap_compare(make_app(demo), terminal_size=size, run_before=after_key("3", "board"))


LONG_MODEL = (
    "1.83746519283746*x0 - 3.00000012834765*x1 + 0.49999871236451 + 0.00012837465123*x0**2*x1/"
    "(1.2837465192837 + exp(-0.981273645123*x0)) - 0.0234871623487*sin(2.1234987123*x1 + 0.7182818284590)"
)


@pytest.fixture(scope="module")
def long_model(tmp_path_factory):
    """The demo with ridge's smoke-linear model replaced by a long one with 17-digit floats."""
    import sqlite3

    ws = seed_demo(tmp_path_factory.mktemp("snap-long") / "ws")
    job = _job(ws, "ridge")
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("UPDATE jobs SET model = ? WHERE job_id = ?", (LONG_MODEL, job))
    return ws, job


@pytest.mark.parametrize("view", ["rounded", "raw"])
def test_expression_long_model(snap_compare, long_model, view):
    ws, job = long_model

    async def run_before(pilot):
        pilot.app.open_expression(job)
        await until(lambda app: getattr(app.screen, "detail", None) is not None)(pilot)
        if view == "raw":
            await pilot.press("v", "v")
            await until(lambda app: app.screen.view == "raw")(pilot)

    assert snap_compare(make_app(ws), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("control", ["board-suite", "board-rule", "board", "breakdown"])
def test_leaderboard_focus(snap_compare, demo, control):
    async def run_before(pilot):
        await after_key("3", "board")(pilot)
        pilot.app.screen.query_one(f"#{control}").focus()
        await until(lambda app: app.focused is not None and app.focused.id == control)(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_job_plot(snap_compare, demo):
    job = _job(demo, "linear")

    async def run_before(pilot):
        pilot.app.open_plots(job)
        await until(lambda app: getattr(app.screen, "series", None) is not None)(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_help(snap_compare, demo):
    async def run_before(pilot):
        await pilot.press("2")
        await until(lambda app: getattr(app.screen, "page", None) is not None)(pilot)
        await pilot.press("f1")

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


@pytest.fixture(scope="module")
def costly(tmp_path_factory, demo):
    """The demo with energy figures: linear and ridge almost at one point of the cost plot."""
    import shutil
    import sqlite3

    from srtui.engine.workspace import Workspace

    root = tmp_path_factory.mktemp("costly") / "ws"
    shutil.copytree(demo.root, root)
    conn = sqlite3.connect(root / "srtui.db")
    figures = {"linear": (0.50, 180.0), "ridge": (0.52, 190.0), "probe-noop": (0.05, 9.0)}
    for method, (fit_s, joules) in figures.items():
        conn.execute(
            "UPDATE jobs SET fit_s = ?, energy_j = ?, energy_method = 'estimate' WHERE method = ?",
            (fit_s, joules, method),
        )
    # a smaller ridge: linear (best R² rank) and ridge (best size rank) both on the front, joined by its line
    ridge = "SELECT job_id FROM jobs WHERE method = 'ridge'"
    conn.execute(f"UPDATE metrics SET value = 5 WHERE name LIKE '%size%' AND job_id IN ({ridge})")
    conn.commit()
    conn.close()
    return Workspace(root)


@pytest.mark.parametrize("plot", ["front", "cost"])
def test_suite_plots_show_every_marker_and_label(snap_compare, costly, plot):
    # the front's line is drawn under the markers; close points' labels take separate rows
    async def run_before(pilot):
        await pilot.press("4")
        await until(lambda app: getattr(app.screen, "aggregate", None) is not None)(pilot)
        if plot == "cost":
            await pilot.press("e")  # drawn with the others, from the aggregate (the figures' data)
        else:
            app = pilot.app
            app.screen.show_plot("pareto")
        await pilot.pause(0.3)

    assert snap_compare(make_app(costly), terminal_size=(80, 24), run_before=run_before)
