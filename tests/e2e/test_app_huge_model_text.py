"""Issue 43, break 8: a 50 MB model string (a crafted workspace: runs cap a model at 100,000
characters) blocked the app's event loop for minutes while the expression view laid it out
whole. It is now shown a page at a time, with its size and the keys that page through it, each
page read from the database in a worker (srtui.views.longtext): the facade never reads the
whole text, and the event loop keeps going. How fast a page shows: tests/bench/bench_long_model.py."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import srtui

MODEL = "x0 + " * 10_000_000  # 50 MB


@pytest.fixture(scope="module")
def one_run_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("run") / "ws"
    srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--seeds", "1", "-w", str(ws),
        check=True,
    )  # fmt: skip
    return ws


def _run(workspace: Path, one_run: Path) -> str:
    """A copy of one probe-noop run's workspace at ``workspace``; its job's id."""
    shutil.copytree(one_run, workspace)
    with sqlite3.connect(workspace / "srtui.db") as conn:
        (job_id,) = conn.execute("SELECT job_id FROM jobs").fetchone()
    return str(job_id)


def test_the_facade_reads_a_50_mb_model_a_page_at_a_time(workspace: Path, one_run_ws: Path) -> None:
    """The row, the detail and a page of a 50 MB model without the whole text ever in memory (the
    facade used to read it whole: 50 MB of str, made visible, before anything showed)."""
    import tracemalloc

    from srtui.engine.workspace import Workspace
    from srtui.results.store.queries import Reader
    from srtui.views import PAGE_BYTES, StoredText, expression_detail, job_row, read_page

    job_id = _run(workspace, one_run_ws)
    hostile = "\x1b[31m" + "x0 + " * 10_000_000  # an escape sequence on the first page
    with sqlite3.connect(workspace / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = ?", (hostile,))
    reader = Reader(Workspace(workspace))
    expression_detail(reader, job_id)  # imports and caches out of the measure
    tracemalloc.start()
    try:
        row = job_row(reader, job_id)
        detail = expression_detail(reader, job_id)
        second = read_page(reader, detail.model.stored, 1) if detail.model and detail.model.stored else None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        reader.close()
    assert row is not None and isinstance(row["model"], StoredText), type(row and row["model"])
    assert row["model"].size == len(hostile) and row["model"].pages == 12_501
    assert detail.model is not None and detail.model.error == "too large to parse (50,000,005 bytes)"
    assert second == (hostile[PAGE_BYTES : 2 * PAGE_BYTES], PAGE_BYTES + 1, 2 * PAGE_BYTES)
    assert peak < 5_000_000, f"{peak / 1e6:.1f} MB held to show one page"  # before: over 100 MB
    first = read_page(Reader(Workspace(workspace)), row["model"], 0)[0]
    assert "\x1b" not in first and first.startswith("\\x1b[31m"), first[:20]  # made visible


def test_pages_of_a_long_text_are_whole_characters_and_cover_it(workspace: Path, one_run_ws: Path) -> None:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.queries import Reader
    from srtui.views import job_row, read_page

    job_id = _run(workspace, one_run_ws)
    text = "é€𝑥 + x0 * " * 10_000  # 1-, 2-, 3- and 4-byte characters across page edges
    with sqlite3.connect(workspace / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = ?", (text,))
    reader = Reader(Workspace(workspace))
    row = job_row(reader, job_id)
    assert row is not None
    stored = row["model"]
    pages = [read_page(reader, stored, p) for p in range(stored.pages)]
    reader.close()
    assert "".join(p[0] for p in pages) == text
    assert [p[1] for p in pages[1:]] == [p[2] + 1 for p in pages[:-1]] and pages[-1][2] == stored.size


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_50_mb_model_is_shown_a_page_at_a_time_and_the_app_keeps_going(workspace: Path, one_run_ws: Path) -> None:
    from textual.css.query import NoMatches
    from textual.widgets import Static

    from srtui.app.app import SrtuiApp
    from srtui.app.screens.expression import TEXT_PAGE, ExpressionScreen
    from srtui.engine.workspace import Workspace

    job_id = _run(workspace, one_run_ws)
    with sqlite3.connect(workspace / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = ?", (MODEL,))

    async def drive() -> tuple[str, str, float]:
        app = SrtuiApp(Workspace(workspace), label="big", theme="textual-dark")
        longest = 0.0
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.1)
            loop = asyncio.get_running_loop()

            async def until(condition, timeout: float = 120.0) -> None:
                nonlocal longest
                end = loop.time() + timeout
                while not condition():
                    assert loop.time() < end, "not shown in time"  # today: minutes
                    before = loop.time()
                    await pilot.pause(0.05)
                    longest = max(longest, loop.time() - before)

            def model() -> str:
                try:
                    return str(screen.query_one("#model", Static).render())
                except NoMatches:  # not composed yet
                    return ""

            app.open_expression(job_id)
            screen = app.screen
            assert isinstance(screen, ExpressionScreen)
            await until(lambda: "page 1 of" in model() and "reading..." not in model())
            first = model()
            screen.query_one("#model-scroll").focus()
            await pilot.press("right_square_bracket")
            await until(lambda: "page 2 of" in model() and "reading..." not in model())
            return first, model(), longest

    first, second, longest = asyncio.run(drive())
    assert len(first) < TEXT_PAGE + 400, len(first)
    assert "50,000,000 bytes (50.0 MB)" in first and "page 1 of 12,500" in first and "] next page" in first
    assert "bytes 4,001-8,000, page 2 of 12,500" in second
    assert longest < 30.0, f"the event loop was blocked for {longest:.1f} s"  # today: minutes
