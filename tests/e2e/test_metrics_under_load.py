"""Expression metrics do not depend on the machine's load: their deadlines count the metric
worker's CPU time (engine/pool.py), so beside a CPU burner on every core the expression-metric
tests pass and the stored values equal a quiet machine's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from srtui.results.metrics.expr_batch import ExprCache, ModelItem, expression_metrics

TESTS = Path(__file__).resolve().parent.parent
NESTED = (
    "*".join(f"(x1 + {i}*x2 + exp(x1*{i}))" for i in range(1, 9))
    + " - "
    + "*".join(f"(x2 + {i}*x1 + exp(x2*{i}))" for i in range(1, 9))
)


@contextmanager
def burners(per_core: int = 1) -> Iterator[list[subprocess.Popen]]:
    """``per_core`` busy loops on every usable core, as processes of this test (killed by pid)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(per_core * len(os.sched_getaffinity(0)))
    ]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def _items() -> list[ModelItem]:
    return [
        ModelItem(NESTED + " + 0.00049*x1 + 1.23456", ("x1", "x2"), "python", "x1*x2", r2_test=0.9),
        ModelItem("0.4*(x1 + 6.25)*(x2 - 3.75) + 10.37", ("x1", "x2"), "python", "0.4*x1*x2 - 1.5*x1 + 2.5*x2 + 1"),
        ModelItem("sin(x1)**2 + cos(x1)**2 + x2/(1 + x2**2)", ("x1", "x2"), "python", "x2/(x2**2 + 1) + 1"),
        ModelItem("log(exp(x1)) * sqrt(x2**2)", ("x1", "x2"), "python"),
    ]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.timeout(900)
def test_expression_metrics_are_the_same_quiet_and_beside_a_burner_on_every_core() -> None:
    quiet, _ = expression_metrics(_items(), ExprCache(), workers=1, timeout=1.0)
    with burners():
        busy, stats = expression_metrics(_items(), ExprCache(), workers=1, timeout=1.0)
    assert stats.timeouts >= 1  # the nested model's simplify runs out of its 1 s of CPU time
    assert busy == quiet
    assert quiet[0]["srbench2022.size_simplified"] is not None  # 2022 keeps the unsimplified model
    assert any("exceeded 1 s of CPU time" in n for n in quiet[0]["_notes"]), quiet[0]["_notes"]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.timeout(1800)
def test_the_expression_metric_tests_pass_beside_a_burner_on_every_core(tmp_path: Path) -> None:
    with burners():
        proc = subprocess.run(
            [
                *(sys.executable, "-m", "pytest", str(TESTS / "unit" / "test_metrics.py")),
                *("-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-x"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=1700,
        )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "test_simplify_timeout_keeps_what_each_release_keeps" not in proc.stdout
