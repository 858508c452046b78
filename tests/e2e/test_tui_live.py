"""The monitor follows a run driven by another process writing the same workspace."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from srtui.app.app import SrtuiApp
from srtui.app.screens.monitor import MonitorScreen
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store


@pytest.mark.slow
def test_monitor_follows_a_real_run_in_another_process(tmp_path):
    ws_path = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--methods",
            "probe-noop,probe-sleep",
            "--jobs",
            "2",
            "--workspace",
            str(ws_path),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen_running = []
    seen_totals = []

    async def follow() -> str:
        app = SrtuiApp(Workspace(ws_path), label="live")
        async with app.run_test(size=(80, 24)) as pilot:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                await pilot.pause(0.2)
                monitor = app.screen
                snap = monitor.snapshot if isinstance(monitor, MonitorScreen) else None
                if snap is not None and snap.exists:
                    seen_running.append(snap.counts.get("running", 0))
                    seen_totals.append(snap.total)
                    if proc.poll() is not None and snap.total and snap.remaining == 0:
                        await pilot.pause(1.5)  # one more poll after the run's last commit
                        return str(app.screen.query_one("#counts").render())
            raise AssertionError("the monitor never saw the run finish")

    try:
        counts_text = asyncio.run(follow())
    finally:
        if proc.poll() is None:
            proc.kill()
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    store = Store(Workspace(ws_path), readonly=True)
    final = store.status_counts()
    store.close()
    total = sum(final.values())
    assert total == 4 and final.get("pending", 0) == 0 and final.get("running", 0) == 0
    assert f"{total}/{total} finished" in counts_text
    for status, n in final.items():
        assert f"{status} {n}" in counts_text
    assert max(seen_running) >= 1  # it saw jobs while they ran, not only the end state
