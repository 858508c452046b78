"""Issue 54, 4: Ctrl-C in a real terminal ends a run with one line per interrupted job and no
traceback, under both launchers.

The model checkers' pool workers (engine/pool.py) share the terminal's process group: Ctrl-C
raised KeyboardInterrupt in their ``conn.recv()`` and multiprocessing printed two tracebacks
(``Process ForkServerProcess-1: ...``) into the live panel. The run goes in a tmux session on a
socket of this test's own (``tmux -L``), 80x24; C-c is sent once a job has been checked (the
pool is up) while others still run; the pane, scrollback included, must hold no traceback."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest


def _rows(workspace: Path, query: str) -> list[tuple[object, ...]]:
    path = workspace / "srtui.db"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute(query).fetchall()
    except sqlite3.Error:
        return []


@pytest.mark.slow  # over 8 s (17 s under load): CI's slow step runs it, both launchers
@pytest.mark.parametrize("launcher", ["fork", "exec"])
def test_ctrl_c_in_a_terminal_prints_no_traceback(tmp_path: Path, launcher: str) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux to run srtui in a real terminal")
    script = Path(sys.executable).with_name("srtui")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable}")
    suite = tmp_path / "c.toml"
    suite.write_text(
        'name = "c"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop", "probe-sleep"]\nseeds = [1, 2]\n'
        '[limits]\ntime_s = 300\n[params."probe-sleep"]\nseconds = 300\n'
    )
    workspace = tmp_path / "ws"
    done = tmp_path / "exit"
    socket = f"srtui54-{uuid.uuid4().hex[:8]}"  # a tmux server of this test's own
    command = (
        f"{script} run {suite} -w {workspace} --launcher {launcher} -j 4 --oversubscribe; echo $? > {done}; sleep 600"
    )
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-x", "80", "-y", "24", "-s", "run", command], check=True)
    try:
        deadline = time.monotonic() + 240
        statuses: list[object] = []
        while time.monotonic() < deadline and not done.exists():  # a job checked (the pool is up), a sleeper running
            statuses = [s for (s,) in _rows(workspace, "SELECT status FROM jobs")]
            if "ok" in statuses and "running" in statuses:
                break
            time.sleep(0.5)
        else:
            pane = subprocess.run([*tmux, "capture-pane", "-p", "-t", "run"], capture_output=True, text=True).stdout
            pytest.fail(f"the run never reached a checked job beside a running one: {statuses}\n{pane}")
        time.sleep(2.0)  # the checker's pool workers are idle in conn.recv()
        subprocess.run([*tmux, "send-keys", "-t", "run", "C-c"], check=True)
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        pane = subprocess.run(
            [*tmux, "capture-pane", "-p", "-J", "-S", "-", "-t", "run"], capture_output=True, text=True, check=True
        ).stdout
        assert done.exists(), f"the run did not end after Ctrl-C:\n{pane}"
        assert "Traceback" not in pane and "KeyboardInterrupt" not in pane, pane
        assert done.read_text().strip() == "130", pane
        interrupted = [ln for ln in pane.splitlines() if "interrupted" in ln and "probe-sleep" in ln]
        assert len(interrupted) == 2, pane
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
