"""tests/bench/targets.py: a benchmark script that misses a target it prints exits 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _script(*checks: str) -> subprocess.CompletedProcess[str]:
    code = "from targets import finish, target\n" + "".join(f"print({c})\n" for c in checks) + "finish()\n"
    return subprocess.run([sys.executable, "-c", code], cwd=BENCH, capture_output=True, text=True, timeout=60)


def test_a_missed_target_fails_the_script_and_is_named():
    met = _script("target('export', 4.2, '<', 10, ' s')", "target('speed-up', 12, '>=', 10, 'x')")
    assert met.returncode == 0, met.stderr
    assert "target < 10 s: met" in met.stdout and "targets: 2 of 2 met" in met.stdout
    missed = _script("target('export', 4.2, '<', 10, ' s')", "target('status', 0.5, '<', 0.5, ' s')")
    assert missed.returncode == 1, missed.stderr
    assert "target < 0.5 s: MISSED" in missed.stdout
    assert "targets: 1 of 2 met; MISSED: status 0.5 s (< 0.5 s)" in missed.stdout


def test_a_script_with_no_target_exits_0():
    assert _script().returncode == 0
