"""Tuning overhead (prints figures; not a timed test). Run: python tests/bench/bench_tuning.py

A `srbench2025` protocol run of ridge on smoke-linear with 4 seeds (4 x 2 configurations x 5
folds = 40 tuning jobs + 4 final jobs) against the same number of plain jobs (ridge on
smoke-linear, 44 seeds, protocol none), both through `srtui run --jobs 2` into fresh workspaces.
Target: ratio <= 1.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEEDS = 4
JOBS = SEEDS * (2 * 5 + 1)


def timed_run(tmp: Path, name: str, seeds: list[int], protocol: str) -> tuple[float, int]:
    suite = tmp / f"{name}.toml"
    suite.write_text(f'name = "{name}"\ntasks = ["smoke-linear"]\nmethods = ["ridge"]\nseeds = {seeds}\n')
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / f"ws-{name}"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "srtui", "run", str(suite), "--protocol", protocol, "--jobs", "2",
                    "--workspace", str(ws)], env=env, check=True, capture_output=True)
    wall = time.monotonic() - t0
    out = subprocess.run([sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
                         env=env, check=True, capture_output=True, text=True)
    return wall, sum(r["status"] == "ok" for r in json.loads(out.stdout))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        plain, n_plain = timed_run(tmp, "plain", list(range(1, JOBS + 1)), "none")
        tuned, n_tuned = timed_run(tmp, "tuned", list(range(1, SEEDS + 1)), "srbench2025")
    print(f"plain: {n_plain} jobs in {plain:.1f} s; tuned: {n_tuned} jobs (tuning + final) in {tuned:.1f} s")
    print(f"tuning overhead ratio: {tuned / plain:.3f} (target <= 1.1)")


if __name__ == "__main__":
    main()
