"""Issue 58: under srbench2021 a tuned run's training time is its whole search, as 2021 timed it.

2021's ``evaluate_model.py`` timed ``grid_est.fit`` (the halving search's every candidate-fold fit
and the refit of the best) and published that as "training time (s)"; srtui put the final fit's
time alone (SGD 0.006 s) beside it (0.185 s). A run's ``search_s`` is now its search's fit times
(the ``SUITE@tuning`` jobs of its task, method and seed) plus the final's, and the rule's
``training_s`` reads it; ``fit_s`` stays the final fit alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import srtui

# a 2021-style method file with a two-candidate grid: one halving iteration of 2 x 5 folds
TINY = """from sklearn import linear_model

hyper_params = [{'alpha': (0.1, 1.0)}]
est = linear_model.Ridge()
complexity = None
model = None
"""


def test_a_tuned_run_s_training_time_is_its_whole_search(tmp_path: Path, workspace: Path) -> None:
    file = tmp_path / "Tiny.py"
    file.write_text(TINY)
    ws = str(workspace)
    srtui(
        "run", "smoke", "--protocol", "srbench2021", "--tasks", "smoke-interaction", "--seeds", "1",
        "--methods", "Tiny,linear", "--method-dir", str(file), "-w", ws, timeout=600, check=True,
    )  # fmt: skip

    def rows(suite: str) -> list[dict]:
        return json.loads(srtui("results", "--suite", suite, "--format", "json", "-w", ws, check=True).stdout)

    tuning = [r for r in rows("smoke@tuning") if r["method"] == "Tiny"]
    finals = rows("smoke")
    [final] = [r for r in finals if r["method"] == "Tiny"]
    assert len(tuning) == 10 and all(r["fit_s"] is not None for r in tuning)
    search = sum(r["fit_s"] for r in tuning) + final["fit_s"]
    out = json.loads(srtui("score", "srbench2021", "--suite", "smoke", "--format", "json", "-w", ws).stdout)
    per_task = {r["method"]: r for r in out["tables"]["per_task"]}
    assert per_task["Tiny"]["training_s"] == pytest.approx(search, rel=1e-6)
    assert per_task["Tiny"]["training_s"] > final["fit_s"]
    # linear has nothing to tune (fit_intercept only): its training time is its fit
    [linear] = [r for r in finals if r["method"] == "linear"]
    assert per_task["linear"]["training_s"] == pytest.approx(linear["fit_s"], rel=1e-6)
