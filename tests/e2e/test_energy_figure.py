"""SRBench 2.0's Figure 1 (median energy vs median training time per method): `srtui score
srbench2025`'s energy_time table, and the app's plot (snapshot at 80x24, pilot, palette)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_tui_seed import seed_demo
from test_tui_snapshots import make_app, until

from srtui.engine.workspace import Workspace

#: method -> (fit_s, energy_j, energy_method) written into every stored run of the demo's suite
FIGURES = {"linear": (0.02, 0.9, "estimate"), "ridge": (0.4, 30.0, "estimate"), "probe-noop": (3.0, 400.0, "rapl")}


@pytest.fixture(scope="module")
def energy_demo(tmp_path_factory) -> Workspace:
    """The TUI demo with fixed training times and energy figures on its finished runs."""
    ws = seed_demo(tmp_path_factory.mktemp("energy") / "ws")
    with sqlite3.connect(ws.db_path) as conn:
        for method, (fit_s, energy_j, how) in FIGURES.items():
            conn.execute(
                "UPDATE jobs SET fit_s = ?, energy_j = ?, energy_method = ? WHERE method = ?",
                (fit_s, energy_j, how, method),
            )
    return ws


def srtui(*args: str) -> subprocess.CompletedProcess:
    cli = Path(sys.executable).with_name("srtui")
    return subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=300, env={**os.environ})


def test_score_srbench2025_reports_the_medians_of_results_summary(energy_demo):
    out = srtui("score", "srbench2025", "--suite", "smoke", "--format", "json", "-w", str(energy_demo.root))
    assert out.returncode == 0, out.stderr
    table = {r["method"]: r for r in json.loads(out.stdout)["tables"]["energy_time"]}
    summary = srtui("results", "--summary", "--suite", "smoke", "--format", "json", "-w", str(energy_demo.root))
    # one computation, two commands (the score JSON rounds its figures)
    expected = {r["method"]: r for r in json.loads(summary.stdout)}
    assert set(table) <= set(expected)  # the summary also lists the methods without an energy figure
    assert all(expected[m]["median_energy_j"] is None for m in set(expected) - set(table))
    for method, row in ((m, expected[m]) for m in table):  # the summary adds the jobs and their accuracy
        assert {k: v for k, v in table[method].items() if k != "runs"} == {
            k: pytest.approx(v, rel=1e-4) if isinstance(v, float) else v for k, v in row.items() if k in table[method]
        }
    for method, (fit_s, energy_j, how) in FIGURES.items():
        assert table[method]["median_fit_s"] == fit_s and table[method]["median_energy_j"] == energy_j
        assert table[method]["median_energy_kwh"] == pytest.approx(energy_j / 3.6e6, rel=1e-4)
        assert table[method]["energy_method"] == how
    text = srtui("score", "srbench2025", "--suite", "smoke", "-w", str(energy_demo.root)).stdout
    assert "energy_time" in text and "median_energy_kwh" in text


def test_score_srbench2025_without_energy_figures_says_so(tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("task,method,seed,r2_test\nt1,a,1,0.9\nt1,b,1,0.5\n")
    out = srtui("score", "srbench2025", "--from-csv", str(runs), "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert "energy_time" not in result["tables"]
    assert any("energy" in note for note in result["notes"])


def test_log_axis_ticks() -> None:
    from srtui.app.terminal_plot import log_axis

    (lo, hi), ticks = log_axis(1e-7, 2e-3)
    assert (lo, hi) == pytest.approx((-7, -2.69897)) and ticks == [1e-7, 1e-6, 1e-5, 1e-4, 1e-3]
    _, ticks = log_axis(0.3, 4.0)  # under three powers of ten: 1-2-5 steps
    assert ticks == [0.5, 1.0, 2.0]


def cost_shown(app) -> bool:
    screen = app.screen
    return getattr(screen, "aggregate", None) is not None and screen.kind == "energy"


def test_energy_plot_snapshot(snap_compare, energy_demo):
    async def run_before(pilot):
        await pilot.press("4")
        await until(lambda app: getattr(app.screen, "aggregate", None) is not None)(pilot)
        await pilot.press("e")
        await until(cost_shown)(pilot)

    assert snap_compare(make_app(energy_demo), terminal_size=(80, 24), run_before=run_before)


def test_energy_plot_pilot_and_palette(energy_demo):
    async def scenario() -> None:
        app = make_app(energy_demo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.1)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "Energy vs time" in titles  # from the monitor
            await app.run_action("energy_plot")
            await until(cost_shown)(pilot)
            screen: Any = app.screen
            cost = {t.method: t for t in screen.aggregate.plots["energy"].traces}  # the energy figure's own data
            assert set(cost) == set(FIGURES)
            assert cost["ridge"].y == pytest.approx((30.0 / 3.6e6,))
            legend = str(screen.query_one("#legend").render())
            assert "probe-noop 400 J (rapl)" in legend and "linear 0.9 J (estimate)" in legend
            await pilot.press("e")  # back to the first figure the terminal draws
            assert screen.kind == "pareto"
            await pilot.press("t", "t", "t", "t")  # t cycles through the registry's kinds in order
            assert screen.kind == "energy"
            on_plots = [c.title for c in app.get_system_commands(screen)]
            assert on_plots.count("Energy vs time") == 1  # the screen's key, not twice

    asyncio.run(scenario())
