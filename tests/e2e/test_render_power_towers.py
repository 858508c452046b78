"""Issue 27 (attacks after the merge): a power tower of a few characters made sympy's printers
compute a number of billions of digits, and `srtui report`, the app's expression view (model and
Pareto front) and a review's frozen items hung on it. Each print of a stored model now runs in a
process of its own under a deadline; a model out of time is shown as text, saying so."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from conftest import results_json, srtui

TOWER = "2**(2**(2**(2**(2*1+3)))) + x1"
SHOWN = "2**(2**(2**(2**(2*1+3))))"  # as the method printed it (smoke's protocol scales nothing)

REGRESSOR = """
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
class Tower(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Tower()
def model(est, X=None):
    return MODEL
def get_population(est):
    return [est]
def complexity(est):
    return 1
"""


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRTUI_RENDER_TIMEOUT_S", "2")  # inherited by `srtui report`


@pytest.fixture(scope="module")
def tower_ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tower")
    folder = root / "tower"
    folder.mkdir()
    (folder / "regressor.py").write_text(REGRESSOR.replace("MODEL", repr(TOWER)))
    ws = root / "ws"
    # the run's own model check has its deadline (SRTUI_CHECK_TIMEOUT_S: 60 s by default)
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        "tower",
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "--method-dir",
        str(folder),
        "--workspace",
        str(ws),
        env={"SRTUI_CHECK_TIMEOUT_S": "3"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    [row] = results_json(ws)
    assert SHOWN in row["model"], row
    return ws


@pytest.mark.slow  # a real run first (its metrics step alone takes 20 s on the tower)
def test_report_of_a_power_tower_model_ends_and_shows_it_as_text(tower_ws: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    started = time.monotonic()
    srtui("report", "--out", str(html), "-w", str(tower_ws), timeout=90, check=True)
    assert time.monotonic() - started < 60
    page = html.read_text()
    # the printer's process ends on its deadline or on its memory cap, whichever comes first
    assert "not rendered: printing took over" in page or "not rendered: out of memory" in page
    assert SHOWN in page


@pytest.mark.slow
def test_app_expression_view_of_a_power_tower_keeps_its_event_loop(tower_ws: Path) -> None:
    from textual.widgets import DataTable, Static

    from srtui.app.app import SrtuiApp
    from srtui.app.screens.expression import ExpressionScreen
    from srtui.engine.workspace import Workspace

    [row] = results_json(tower_ws)

    async def drive() -> tuple[str, str, float]:
        app = SrtuiApp(Workspace(tower_ws), label="tower", theme="textual-dark")
        longest = 0.0
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.1)

            async def until(condition, timeout: float = 60.0) -> None:
                nonlocal longest
                loop = asyncio.get_running_loop()
                end = loop.time() + timeout
                while not condition():
                    assert loop.time() < end, "condition not reached in time"
                    before = loop.time()
                    await pilot.pause(0.05)
                    longest = max(longest, loop.time() - before)  # a blocked loop shows here

            app.open_expression(row["job_id"])
            screen = app.screen
            assert isinstance(screen, ExpressionScreen)
            await until(lambda: screen.detail is not None)
            model = str(screen.query_one("#model", Static).render())
            pareto = screen.query_one("#pareto", DataTable)
            assert pareto.row_count == 1
            pareto.focus()
            await pilot.press("enter")  # the front's member: printed in a worker, the loop goes on
            await until(lambda: screen.pareto_index is not None)
            member = str(screen.query_one("#model", Static).render())
        return model, member, longest

    model, member, longest = asyncio.run(drive())
    for shown in (model, member):
        assert SHOWN in shown and "not rendered: printing took over" in shown, shown
    assert longest < 2.0, f"the event loop was blocked for {longest:.1f} s"


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.timeout(60)
def test_review_items_of_a_power_tower_are_a_black_box() -> None:
    from srtui.reviews.items import BLACK_BOX, rounded_expression

    started = time.monotonic()
    forms = rounded_expression(TOWER, ("x1",), "python")
    assert forms["black_box"] and forms["expression"] == BLACK_BOX
    assert time.monotonic() - started < 30
    assert rounded_expression("x1 + 2", ("x1",), "python")["plain"] == "x1 + 2"  # the deadline's worker goes on


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "model",
    [TOWER, "10**(10**(10**10)) * x1", "x1**(3**(3**(3**3)))", "(2**2**2**2**2**2)*x1"],
)
def test_app_forms_and_report_mathml_of_towers_end_in_time(model: str) -> None:
    """The same prints the app and the report make, without a run: each ends within its deadline."""
    from srtui.results.outputs.report.models import render_models
    from srtui.views import render, simplified

    started = time.monotonic()
    shown = render(model, ("x1",), "python")
    assert shown.text == model and (shown.pretty or shown.unrendered), shown
    simpler = simplified(model, ("x1",), "python")
    assert simpler.pretty or simpler.unrendered or simpler.error, simpler
    [(mathml, why)] = render_models([(model, ["x1"], "python")])
    assert mathml is not None or why, why
    if model == TOWER:  # printing it computes 2**(2**32): out of time everywhere
        assert not shown.pretty and simpler.unrendered and why.startswith("not rendered"), (shown, why)
    assert time.monotonic() - started < 40
    assert render("x1 + 2", ("x1",), "python").pretty  # an ordinary model still prints
