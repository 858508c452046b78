"""Tuning overhead (prints figures; not a timed test). Run: python tests/bench/bench_tuning.py

Each protocol run of ridge on smoke-linear against the same number of plain jobs (ridge on
smoke-linear, one seed per job, protocol none), both through `srtui run --jobs 2` into fresh
workspaces:
- srbench2025: 4 seeds x (2 configurations x 5 folds + 1 final) = 44 jobs;
- srbench2021: 2 seeds x (4 candidates x 5 folds on 30 rows + 2 x 5 on 90 rows + 1 final) = 62
  jobs, in three rounds (the driver releases each halving iteration when the previous one ended).
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
GRID = "\n[tuning.grids]\nridge = [{ alphas = [10.0] }, { alphas = [100.0] }, { alphas = [1000.0] }]\n"
CASES = (("srbench2025", 4, 4 * (2 * 5 + 1), ""), ("srbench2021", 2, 2 * (4 * 5 + 2 * 5 + 1), GRID))


def timed_run(tmp: Path, name: str, seeds: list[int], protocol: str, extra: str = "") -> tuple[float, int]:
    suite = tmp / f"{name}.toml"
    suite.write_text(f'name = "{name}"\ntasks = ["smoke-linear"]\nmethods = ["ridge"]\nseeds = {seeds}\n{extra}')
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / f"ws-{name}"
    t0 = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            str(suite),
            "--protocol",
            protocol,
            "--jobs",
            "2",
            "--workspace",
            str(ws),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.monotonic() - t0
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return wall, sum(r["status"] == "ok" for r in json.loads(out.stdout))


def main() -> None:
    for protocol, seeds, jobs, extra in CASES:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            plain, n_plain = timed_run(tmp, "plain", list(range(1, jobs + 1)), "none")
            tuned, n_tuned = timed_run(tmp, "tuned", list(range(1, seeds + 1)), protocol, extra)
        print(
            f"{protocol}: plain {n_plain} jobs in {plain:.1f} s; tuned {n_tuned} jobs (tuning + "
            f"final) in {tuned:.1f} s; "
            f"ratio {tuned / plain:.3f} (target <= 1.1)"
        )


if __name__ == "__main__":
    main()
