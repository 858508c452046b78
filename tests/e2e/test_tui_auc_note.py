"""The Board at 80x24 with the srbench2025 rule's note on a reference AUC that looks wrong, opened
with n (issue #46): the note takes two lines, not six, and every row of the board stays in view."""

from __future__ import annotations

from typing import Any

import pytest
from test_tui import current, sync, wait_for
from test_tui_seed import FIXED_NOW, seed_demo
from textual.geometry import Region
from textual.widgets import DataTable, Select, Static

from srtui.app.app import SrtuiApp
from srtui.app.screens.leaderboard import LeaderboardScreen


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return seed_demo(tmp_path_factory.mktemp("auc") / "ws")


async def board_by(pilot: Any, app: SrtuiApp, rule: str) -> LeaderboardScreen:
    """The Board (key 3) scored by ``rule``, once its scores are in."""
    await pilot.press("3")
    screen = current(app, LeaderboardScreen)
    await wait_for(pilot, lambda: screen.board is not None, timeout=60)
    screen.query_one("#board-rule", Select).value = rule
    await wait_for(pilot, lambda: screen.board is not None and screen.board.rule == rule, timeout=60)
    return screen


@sync
async def test_the_auc_note_opened_takes_two_lines_and_hides_no_row(demo) -> None:
    app = SrtuiApp(demo, label="demo", clock=lambda: FIXED_NOW, theme="textual-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await board_by(pilot, app, "srbench2025")
        board = screen.board
        assert board is not None
        notes = [n for n in board.notes if "AUC" in n and "profile=corrected" in n]
        assert len(notes) == 1, board.notes  # the demo's ridge: AUC 1 at median R2 0.99
        await pilot.press("n")
        await wait_for(pilot, lambda: "AUC" in str(screen.query_one("#board-info", Static).render()))
        await pilot.pause(0.5)
        info = screen.query_one("#board-info", Static)
        wrapped = [line.text for line in info.render_lines(Region(0, 0, info.outer_size.width, info.outer_size.height))]
        at = next(i for i, line in enumerate(wrapped) if line.lstrip().startswith("note: ") and "AUC" in line)
        ends = next(i for i in range(at, len(wrapped)) if "profile=corrected" in wrapped[i])
        assert ends - at + 1 <= 2, wrapped  # the note's lines as drawn at 80 columns
        table = screen.query_one("#board", DataTable)
        assert table.region.height >= table.row_count + 1, (table.region, table.row_count)  # header + rows
        assert table.region.bottom <= 23  # above the footer


@sync
async def test_the_board_scrolls_sideways_to_every_column_at_80x24(demo) -> None:
    """Issue 55: a board wider than the screen shows each of its columns by scrolling, a column
    at a time (l/h, the arrows under the row cursor) or to either end (0, $)."""
    app = SrtuiApp(demo, label="demo", clock=lambda: FIXED_NOW, theme="textual-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await board_by(pilot, app, "srbench2025")
        table = screen.query_one("#board", DataTable)
        table.focus()
        await pilot.pause(0.2)
        assert table.virtual_size.width > table.size.width  # wider than 80 columns
        seen, starts, x = set(), [], 0
        for column in table.columns.values():
            starts.append(x)
            x += column.get_render_width(table)
        for _ in range(len(starts) + 1):
            left = round(table.scroll_x)
            seen |= {i for i, s in enumerate(starts) if left <= s < left + table.size.width}
            await pilot.press("l")
            await pilot.pause(0.05)
        assert seen == set(range(len(starts)))  # every column came into view
        assert table.scroll_x == table.max_scroll_x
        await pilot.press("0")
        await pilot.pause(0.05)
        assert table.scroll_x == 0
        await pilot.press("$")
        await pilot.pause(0.05)
        assert table.scroll_x == table.max_scroll_x
