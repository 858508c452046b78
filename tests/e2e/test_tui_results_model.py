"""The Results screen at 80x24 in a real terminal (tmux) shows the highlighted run's model whole
(issue #46): the table's model column starts near the right edge there, a few characters of it
in view, so the model has a line of its own under the table, following the cursor."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from test_tui_seed import MARKUP_MODEL, seed_demo
from tmux_app import TmuxApp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")


def model_line(screen: str) -> str:
    lines = [line.strip() for line in screen.split("\n") if line.strip().startswith("model: ")]
    assert len(lines) == 1, screen
    return lines[0].removeprefix("model: ")


def test_results_show_the_highlighted_model_whole_at_80x24(tmp_path: Path) -> None:
    from srtui.results.store.store import Store

    ws = seed_demo(tmp_path / "ws")
    store = Store(ws, readonly=True)
    try:
        models = {str(m) for (m,) in store.conn.execute("SELECT model FROM jobs WHERE model IS NOT NULL")}
    finally:
        store.close()
    with TmuxApp(f"srtui-results-{os.getpid()}", ws.root) as app:
        app.pane("Monitor")
        app.keys("2", pause=0)
        first = app.pane("model: ")
        seen = [model_line(first)]
        for _ in range(5):  # down the rows: the line follows the cursor
            time.sleep(0.5)
            app.keys("j", pause=0.5)
            seen.append(model_line(app.pane("model: ")))
    lines = first.split("\n")
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if " task " in line and " model" in line)
    assert len(header) - header.index(" model") < 12, first  # the column itself: a few characters in view
    whole = [m for m in seen if m in models]
    assert whole and len(set(seen)) >= 2, seen  # whole models, and the line changed with the row
    assert MARKUP_MODEL in seen, seen  # markup-like text shown as itself
