"""The query API the app reads through (srtui.results.store.queries, srtui.results.store.explore) and the job record."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_tui_seed import FIXED_NOW, LIMITS, seed_demo

from srtui.engine.spec import JobSpec
from srtui.results.store.explore import ResultsQuery, filter_token, results_page, where_clause
from srtui.results.store.queries import Reader
from srtui.results.store.store import Store
from srtui.views import monitor_snapshot


def _page_ids(reader: Reader, filter_text: str) -> set[str]:
    page = results_page(reader, ResultsQuery(filter_text, limit=1000))
    return {row[page.columns.index("job_id")] for row in page.rows}


def test_eta_counts_the_jobs_of_the_active_runs_only(tmp_path: Path) -> None:
    ws = seed_demo(tmp_path / "ws")
    before = monitor_snapshot(Reader(ws), now=lambda: FIXED_NOW)
    store = Store(ws)
    # another suite planned long ago and never run: not the active run's work
    store.plan([JobSpec("other", "smoke-linear", "linear", seed, LIMITS, "fp", "1.0") for seed in range(50)])
    store.close()
    after = monitor_snapshot(Reader(ws), now=lambda: FIXED_NOW)
    assert after.counts["pending"] == before.counts["pending"] + 50
    assert after.eta_s == pytest.approx(before.eta_s)


def test_eta_follows_the_jobs_a_run_queued(tmp_path: Path) -> None:
    ws = seed_demo(tmp_path / "ws")
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("UPDATE runs SET queued = 20")  # 9 claimed (8 finished), 11 still to claim
    snap = monitor_snapshot(Reader(ws), now=lambda: FIXED_NOW)
    rate = 8 / (FIXED_NOW - 1735812000.0)  # 8 finished since the run started at 10:00:00
    assert snap.eta_s == pytest.approx(12 / rate)


def test_drilling_into_a_group_shows_only_its_runs(tmp_path: Path) -> None:
    ws = seed_demo(tmp_path / "ws")
    with sqlite3.connect(ws.db_path) as conn:  # group keys with a space, a comma, a quote
        conn.execute("UPDATE jobs SET method = 'my method' WHERE method = 'ridge'")
        conn.execute("UPDATE jobs SET method = 'a,\"b' WHERE method = 'linear'")
        conn.execute("UPDATE jobs SET host = NULL WHERE method = 'probe-crash'")
    reader = Reader(ws)
    every = _page_ids(reader, "")
    for method, n in (("my method", 2), ('a,"b', 2)):
        got = _page_ids(reader, filter_token("method", method))
        assert len(got) == n and got < every
    unset = _page_ids(reader, filter_token("host", None))
    assert len(unset) == 3  # the two crashed jobs and the pending one (never claimed)
    assert _page_ids(reader, 'host!=""') == every - unset
    reader.close()


def test_quoted_filter_values_are_one_bound_value() -> None:
    sql, args = where_clause('task="a b,c" method=x,y free')
    assert args[:3] == ["a b,c", "x", "y"] and "task IN (?)" in sql and "method IN (?,?)" in sql
    assert filter_token("task", "plain") == "task=plain"
    assert filter_token("task", 'say "hi"') == 'task="say \\"hi\\""'
    assert where_clause(filter_token("task", 'say "hi" \\ ok'))[1] == ['say "hi" \\ ok']


def test_app_plots_draw_the_figures_data(tmp_path: Path) -> None:
    """The app's suite plots are `srtui plot`'s data: srbench2025's profiles on the figure's grid,
    srbench2021's first Pareto front of median ranks."""
    from srtui.results.scoring import score
    from srtui.results.scoring.tables import runs_frame
    from srtui.views import suite_aggregate

    ws = seed_demo(tmp_path / "ws")
    reader = Reader(ws)
    agg = suite_aggregate(reader, "smoke")
    assert agg.profile == "reference" and {"profiles", "pareto"} <= set(agg.plots)
    profiles = {t.method: t for t in agg.plots["profiles"].traces}
    pareto = {t.method: t for t in agg.plots["pareto"].traces if t.method is not None}
    store = reader.store()
    assert store is not None
    with reader.lock:
        runs = runs_frame(store, "smoke")
    finished = runs[~runs["status"].isin(("pending", "running"))]
    board = score("srbench2025", finished, grid=51).main.set_index("method")
    for method in ("linear", "ridge"):
        expected = [board.loc[method, f"P[R2>={x:g}]"] for x in np.linspace(0, 1, 51)]
        assert profiles[method].y == pytest.approx(expected)
        auc: Any = board.loc[method, "auc"]
        assert profiles[method].label == f"{method} (AUC {auc:.3f})"
    ranks = score("srbench2021", finished).main.set_index("method")
    first = set(ranks.index[ranks["pareto_front"] == ranks["pareto_front"][ranks["pareto_front"] >= 0].min()])
    assert {m for m, t in pareto.items() if t.label.endswith("(front)")} == first
    for method, t in pareto.items():
        assert (t.x[0], t.y[0]) == (ranks.loc[method, "median_rank_r2"], ranks.loc[method, "median_rank_size"])
    reader.close()


def test_drilling_in_the_app_into_a_group_whose_key_has_a_space(tmp_path: Path) -> None:
    """The explorer's Enter on a grouped row shows exactly that group's runs."""
    import asyncio

    from test_tui import make_app, wait_for

    ws = seed_demo(tmp_path / "ws")
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("UPDATE jobs SET method = 'my method' WHERE method = 'ridge'")

    async def drill() -> None:
        app = make_app(ws)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("2")
            screen: Any = app.screen
            await wait_for(pilot, lambda: screen.page is not None)
            await pilot.press("b")  # group by method, best median R² first: linear, then 'my method'
            await wait_for(pilot, lambda: screen.page.query.group_by == ("method",))
            assert [r[0] for r in screen.page.rows][:2] == ["linear", "my method"]
            await pilot.press("j", "enter")
            await wait_for(pilot, lambda: not screen.page.query.group_by)
            assert screen.page.query.filter_text == 'method="my method"'
            method = screen.page.columns.index("method")
            assert screen.page.total == 2 and {r[method] for r in screen.page.rows} == {"my method"}

    asyncio.run(drill())
