"""The Results screen at 80x24 in a real terminal (tmux) shows the highlighted run's model whole
(issue #46): the table's model column starts near the right edge there, a few characters of it
in view, so the model has a line of its own under the table, following the cursor."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from test_tui_seed import MARKUP_MODEL, seed_demo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")


def model_line(screen: str) -> str:
    lines = [line.strip() for line in screen.split("\n") if line.strip().startswith("model: ")]
    assert len(lines) == 1, screen
    return lines[0].removeprefix("model: ")


def test_results_show_the_highlighted_model_whole_at_80x24(tmp_path: Path) -> None:
    from results.store.store import Store

    ws = seed_demo(tmp_path / "ws")
    store = Store(ws, readonly=True)
    try:
        models = {str(m) for (m,) in store.conn.execute("SELECT model FROM jobs WHERE model IS NOT NULL")}
    finally:
        store.close()
    name = f"srtui-results-{os.getpid()}"
    command = " ".join(
        [
            f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color",
            shlex.quote(sys.executable), "-m", "srtui", "tui", "-w", shlex.quote(str(ws.root)),
        ]
    )  # fmt: skip
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command], check=True)

    def pane(waiting_for: str, *, gone: str = "") -> str:
        deadline, text = time.monotonic() + 120, ""
        while time.monotonic() < deadline:
            text = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if waiting_for in text and (not gone or gone not in text):
                return text
            time.sleep(0.3)
        raise AssertionError(f"{waiting_for!r} not on the screen within 120 s:\n{text}")

    try:
        pane("Monitor")
        subprocess.run(["tmux", "send-keys", "-t", name, "2"], check=True)
        first = pane("model: ")
        seen = [model_line(first)]
        for _ in range(5):  # down the rows: the line follows the cursor
            time.sleep(0.5)
            subprocess.run(["tmux", "send-keys", "-t", name, "j"], check=True)
            time.sleep(0.5)
            seen.append(model_line(pane("model: ")))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)
    lines = first.split("\n")
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if " task " in line and " model" in line)
    assert len(header) - header.index(" model") < 12, first  # the column itself: a few characters in view
    whole = [m for m in seen if m in models]
    assert whole and len(set(seen)) >= 2, seen  # whole models, and the line changed with the row
    assert MARKUP_MODEL in seen, seen  # markup-like text shown as itself
