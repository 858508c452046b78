"""The README's first command, measured: `srtui run smoke` in a new workspace, its wall time, and
each job's fit against the suite's limit (the margin a busy machine eats into).

Run: python tests/bench/bench_smoke.py

Prints the load, the run's wall time (target: the README's "about 30 s" on 2 cores, quiet), every
job's wall and CPU seconds, and the ratio of the time limit to the slowest fit's CPU time (the
fit a quiet machine would see; target >= 5x). On a loaded machine the wall figures grow and the
CPU figures do not: read the two side by side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    limit = tomllib.loads((REPO / "tasks" / "suites" / "smoke.toml").read_text())["limits"]["time_s"]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        command = [sys.executable, "-m", "srtui", "run", "smoke", "-w", str(ws)]
        run = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if run.returncode != 0:
            sys.exit(f"srtui run smoke failed ({run.returncode}): {run.stderr.strip()[-400:]}")
        out = subprocess.run(
            [sys.executable, "-m", "srtui", "results", "-w", str(ws), "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        )
    jobs = json.loads(out.stdout)
    print(f"load {load:.1f} at the start; {len(jobs)} jobs; time limit {limit} s")
    print(f"{'method':10} {'task':18} {'status':8} {'wall s':>7} {'cpu s':>7}")
    for job in sorted(jobs, key=lambda j: (j["method"], j["task"])):
        print(f"{job['method']:10} {job['task']:18} {job['status']:8} {job['wall_s']:7.2f} {job['cpu_s'] or 0:7.2f}")
    slowest = max(jobs, key=lambda j: j["cpu_s"] or 0)
    print(f"slowest fit by CPU: {slowest['method']} on {slowest['task']}, {slowest['cpu_s']:.2f} s")
    margin = limit / slowest["cpu_s"]
    not_ok = sum(j["status"] != "ok" for j in jobs)
    print(f"limit / slowest fit's CPU: {margin:.1f}x  " + target("margin", margin, ">=", 5, "x"))
    print(f"jobs not ok: {not_ok}  " + target("jobs not ok", not_ok, "<=", 0))
    print(f"srtui run smoke: {wall:.1f} s wall (README: about 30 s)  " + target("smoke run", wall, "<=", 30, " s"))
    finish()


if __name__ == "__main__":
    main()
