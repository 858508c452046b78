"""The smaller hardening items of issue 16, each through the real component."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import srtui


@pytest.fixture(scope="module")
def file_suite_ws(tmp_path_factory) -> Path:
    """A workspace of a suite given as a file path, with a scoring rule."""
    root = tmp_path_factory.mktemp("small")
    suite = root / "mine.toml"
    suite.write_text(
        'name = "mine"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = ["probe-noop", "linear"]\n'
        'seeds = [1]\nscoring = "wilcoxon"\n'
    )
    ws = root / "ws"
    srtui("run", str(suite), "--workspace", str(ws), check=True)
    return ws


def test_results_json_is_strict_json(file_suite_ws: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(file_suite_ws, ws)
    with sqlite3.connect(ws / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET r2_train = ?, mse_test = ?", (-math.inf, math.inf))
    out = srtui("results", "--format", "json", "--workspace", str(ws), check=True).stdout
    assert "Infinity" not in out and "NaN" not in out
    rows = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert all(r["r2_train"] is None and r["mse_test"] is None for r in rows)


def test_export_finds_the_rule_of_a_suite_run_from_a_file(file_suite_ws: Path) -> None:
    proc = srtui("export", "--format", "md", "--workspace", str(file_suite_ws), check=True)
    assert "no scoring rule" not in proc.stderr
    assert "## wilcoxon" in proc.stdout


def test_killed_drivers_run_is_marked_lost_at_recovery(file_suite_ws: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(file_suite_ws, ws)
    with sqlite3.connect(ws / "srtui.db") as conn:  # as a SIGKILLed driver leaves it
        conn.execute("UPDATE runs SET status = 'running', ended_at = NULL, driver = '999999999:0.000'")
    srtui("run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(ws), check=True)
    with sqlite3.connect(ws / "srtui.db") as conn:
        statuses = [s for (s,) in conn.execute("SELECT status FROM runs ORDER BY started_at")]
    assert statuses == ["lost", "done"]


def test_fullwidth_variables_are_refused() -> None:
    proc = srtui("expr", "ｘ０ + 1")
    assert proc.returncode == 2 and "U+FF58" in proc.stderr
    from srtui.engine.expression import ExpressionError, parse_expression

    with pytest.raises(ExpressionError, match="plain characters"):
        parse_expression("ｘ０ + 1", ["x0"])
    assert parse_expression("x0 + 1", ["x0"]).n_nodes == 3


def test_a_huge_rating_is_refused_not_an_overflow(file_suite_ws: Path, tmp_path: Path) -> None:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store
    from srtui.reviews import ExpertError, ExpertSession, create_session
    from srtui.reviews.items import build_items

    ws = tmp_path / "ws"
    shutil.copytree(file_suite_ws, ws)
    store = Store(Workspace(ws))
    try:
        create_session(store, "s1", build_items(store, include_baseline=True), ["ann"])
        session = ExpertSession.open(store, "s1", "ann")
        for bad in (10**20, 0, 6, -(10**20)):
            with pytest.raises(ExpertError):
                session.rate(0, bad)
        session.rate(0, 4)
        assert session.rating(0) == (4, None)
    finally:
        store.close()


def test_app_shows_the_refusal_of_a_newer_schema(file_suite_ws: Path, tmp_path: Path) -> None:
    from srtui.app.app import SrtuiApp
    from srtui.app.screens.monitor import MonitorScreen
    from srtui.engine.workspace import Workspace

    ws = tmp_path / "ws"
    shutil.copytree(file_suite_ws, ws)
    with sqlite3.connect(ws / "srtui.db") as conn:
        conn.execute("PRAGMA user_version = 999")

    async def drive() -> str:
        app = SrtuiApp(Workspace(ws), label="newer", theme="textual-dark")
        async with app.run_test(size=(100, 24)) as pilot:
            for _ in range(200):
                await pilot.pause(0.05)
                if isinstance(app.screen, MonitorScreen) and app.screen.snapshot is not None:
                    break
            return str(app.screen.query_one("#counts").render())

    text = asyncio.run(drive())
    assert "newer than this srtui understands" in text and "Press s" not in text


@pytest.mark.slow  # 15-35 s: the default run stays well under 15 minutes; CI runs it in its slow step
def test_two_drivers_on_one_workspace_never_run_a_job_twice(workspace: Path, suite_file) -> None:
    import subprocess
    import sys
    import time

    from conftest import REPO

    suite = suite_file(
        name="two", seeds=tuple(range(1, 13)), methods=("probe-sleep",), params={"probe-sleep": {"seconds": 0.3}}
    )
    srtui("run", str(suite), "--dry-run", "--workspace", str(workspace), check=True)
    srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(workspace), check=True
    )
    drivers = []
    for delay in (0, 2.5):  # the second plans while the first runs: both hold the same pending jobs
        time.sleep(delay)
        drivers.append(
            subprocess.Popen(
                [sys.executable, "-m", "srtui", "run", str(suite), "--jobs", "1", "--workspace", str(workspace)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [d.communicate(timeout=300) for d in drivers]
    assert all(d.returncode == 0 for d in drivers), outputs
    with sqlite3.connect(workspace / "srtui.db") as conn:
        attempts = conn.execute(
            "SELECT j.job_id, count(a.attempt) FROM jobs j JOIN attempts a USING (job_id) "
            "WHERE j.suite = 'two' GROUP BY j.job_id"
        ).fetchall()
        statuses = conn.execute("SELECT status, count(*) FROM jobs WHERE suite = 'two' GROUP BY status").fetchall()
    assert statuses == [("ok", 12)]
    assert len(attempts) == 12 and all(n == 1 for _, n in attempts), attempts
    # what each driver reports adds up to what was run
    import re

    reported = [sum(int(n) for n in re.findall(r"ok (\d+)", err.strip().splitlines()[-1])) for _, err in outputs]
    assert sum(reported) == 12, [err.strip().splitlines()[-1] for _, err in outputs]
