"""Issue 43, break 8: a 50 MB model string (a crafted workspace: runs cap a model at 100,000
characters) blocked the app's event loop for minutes while the expression view laid it out
whole. It is now shown a page at a time, with its size and the keys that page through it, each
page cut in a worker; the event loop keeps going."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from conftest import srtui

MODEL = "x0 + " * 10_000_000  # 50 MB


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_50_mb_model_is_shown_a_page_at_a_time_and_the_app_keeps_going(workspace: Path) -> None:
    from textual.css.query import NoMatches
    from textual.widgets import Static

    from engine.workspace import Workspace
    from srtui.app.app import SrtuiApp
    from srtui.app.screens.expression import TEXT_PAGE, ExpressionScreen

    srtui(
        "run",
        "smoke",
        "--methods",
        "probe-noop",
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "-w",
        str(workspace),
        check=True,
    )
    with sqlite3.connect(workspace / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = ?", (MODEL,))
        (job_id,) = conn.execute("SELECT job_id FROM jobs").fetchone()

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
    assert "50,000,000 characters (50.0 MB)" in first and "page 1 of 12,500" in first and "] next page" in first
    assert "characters 4,001-8,000, page 2 of 12,500" in second
    assert longest < 30.0, f"the event loop was blocked for {longest:.1f} s"  # today: minutes
