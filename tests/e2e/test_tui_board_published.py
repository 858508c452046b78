"""The Board with SRBench's published rows beside a suite (`u`), read off a real terminal: the app
in tmux at 80x24 (issue #46). The notes and protocol warnings are one line with their count; `n`
opens them in a box of their own and closes them again; the rows and the top bar stay whole; `o`
opens the rule selector from the keyboard."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import srtui
from tmux_app import TmuxApp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")

TOP_BAR = "1 Monitor  2 Results  3 Board  4 Plots  5 Reviews    F1 help ^p palette ^q quit"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("board")
    suite = root / "mine.toml"
    suite.write_text(
        'name = "mine"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = ["linear", "poly2"]\n'
        'seeds = [1]\nscoring = "srbench2021"\n'
    )
    srtui("run", str(suite), "-w", str(root / "ws"), "-j", "2", check=True)
    return root / "ws"


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_board_with_published_rows_at_80x24(workspace: Path) -> None:
    with TmuxApp(f"srtui-board-{os.getpid()}", workspace) as app:
        app.pane("Monitor")
        app.keys("3")
        # the suite's own file names its rule (scoring = "srbench2021"): the Board takes it (#55)
        app.pane("mine by srbench2021")
        app.keys("o")  # the rule selector, opened from the keyboard
        chooser = app.pane("srbench-groundtruth")
        time.sleep(2)  # the list takes the keys once it is drawn and focused (a busy machine is slow)
        app.keys("Escape")
        time.sleep(1)
        app.keys("u")
        closed = app.pane("beside the published results")
        app.keys("n")
        opened = app.pane("warning: ", gone="(n shows them)")
        app.keys("n")
        again = app.pane("(n shows them)")
        # the published view is wider than 80 columns: it scrolls sideways a column at a time (l,
        # Right) to its last column, and back (h, 0) (#55)
        app.keys("Tab", "Tab", "l")  # from the rule selector past the notes to the board
        moved = app.pane(" median_rank_r2 ", gone=" method  median_rank_r2 ")
        app.keys("$")
        right = app.pane(" source")
        app.keys("h", "0")
        back = app.pane(" method  median_rank_r2 ")
    assert moved.count(" median_rank_r2 ") == 1 and "this workspace" not in moved, moved
    assert "this workspace" in right and " median_rank_r2 " not in right.split("\n", 8)[7], right
    assert " source" not in back.split("\n", 8)[7], back
    for screen in (closed, opened, again):
        lines = screen.split("\n")
        assert lines[0].strip() == TOP_BAR, screen  # never cut by a scrollbar
        assert max(len(line) for line in lines) <= 80
        # the scores come before where a row comes from (source, last): at 80 columns none is cut (#55)
        assert " method  median_rank_r2  median_rank_size  median_r2_test " in screen, screen
        assert sum(line.startswith((" poly2 ", " linear ")) for line in lines) >= 2, screen  # rows stay in view
    assert "protocol warnings (n shows them)" in closed and "warning: " not in closed
    assert sum(line.lstrip().startswith("warning: ") for line in opened.split("\n")) >= 1
    assert "srbench2025" in chooser and "friedman" in chooser  # the selector's list, open
