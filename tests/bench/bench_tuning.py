"""Tuning overhead (prints figures; not a timed test). Run: python tests/bench/bench_tuning.py [--reps N]

A protocol run of ridge on smoke-linear against a plain run of the same number of jobs (ridge on
smoke-linear, one seed per job, protocol none), both through `srtui run --jobs 2 --launcher
fork` into fresh workspaces:
- srbench2025: 4 seeds x (2 configurations x 5 folds + 1 final) = 44 jobs, in two rounds (the
  final fits start when their tuning has ended);
- srbench2021: 2 seeds x (4 candidates x 5 folds on 30 rows + 2 x 5 on 90 rows + 1 final) = 62
  jobs, in three rounds (the driver releases each halving iteration when the previous one ended).

The time of a run is from the driver's start to the end of its last job: the driver's start-up,
its planning (the protocol writes its fold data) and every job, but not the results metrics the
run computes afterwards (for every plain job, for the tuned run's final jobs only: not tuning).
On a loaded shared machine the runs alternate plain, tuned, plain, tuned ... (N pairs) and the
ratio is of the medians; each pair's own ratio is printed too. Target: ratio <= 1.1.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GRID = "\n[tuning.grids]\nridge = [{ alphas = [10.0] }, { alphas = [100.0] }, { alphas = [1000.0] }]\n"
CASES = (("srbench2025", 4, 4 * (2 * 5 + 1), ""), ("srbench2021", 2, 2 * (4 * 5 + 2 * 5 + 1), GRID))


def timed_run(tmp: Path, name: str, seeds: list[int], protocol: str, extra: str = "") -> tuple[float, int, float]:
    """(seconds from the driver's start to its last job's end, jobs ok, seconds of the whole command)."""
    suite = tmp / f"{name}.toml"
    suite.write_text(f'name = "{name}"\ntasks = ["smoke-linear"]\nmethods = ["ridge"]\nseeds = {seeds}\n{extra}')
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / f"ws-{name}"
    command = [sys.executable, "-m", "srtui", "run", str(suite), "--protocol", protocol, "--jobs", "2"]
    t0, m0 = time.time(), time.monotonic()
    subprocess.run([*command, "--launcher", "fork", "--workspace", str(ws)], env=env, check=True, capture_output=True)
    whole = time.monotonic() - m0
    with sqlite3.connect(ws / "srtui.db") as conn:
        ended, ok = conn.execute("SELECT max(ended_at), sum(status = 'ok') FROM jobs").fetchone()
    return datetime.fromisoformat(ended).timestamp() - t0, int(ok), whole


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3, help="plain/tuned pairs per protocol (default 3)")
    reps = parser.parse_args().reps
    load = os.getloadavg()[0]
    for protocol, seeds, jobs, extra in CASES:
        plain, tuned, whole_plain, whole_tuned = [], [], [], []
        for rep in range(reps):
            with tempfile.TemporaryDirectory() as tmp_name:
                tmp = Path(tmp_name)
                p, n_plain, wp = timed_run(tmp, "plain", list(range(1, jobs + 1)), "none")
                t, n_tuned, wt = timed_run(tmp, "tuned", list(range(1, seeds + 1)), protocol, extra)
            assert n_plain == n_tuned == jobs, (n_plain, n_tuned, jobs)  # the same number of jobs, all ok
            plain.append(p)
            tuned.append(t)
            whole_plain.append(wp)
            whole_tuned.append(wt)
            print(f"{protocol} pair {rep + 1}: plain {p:.1f} s, tuned {t:.1f} s, ratio {t / p:.3f}", flush=True)
        ratio = statistics.median(tuned) / statistics.median(plain)
        print(
            f"{protocol}: {jobs} jobs each; median plain {statistics.median(plain):.1f} s, median tuned "
            f"{statistics.median(tuned):.1f} s (driver start to last job end); ratio {ratio:.3f} (target <= 1.1); "
            f"whole commands incl. results metrics: plain {statistics.median(whole_plain):.1f} s, "
            f"tuned {statistics.median(whole_tuned):.1f} s"
        )
    print(f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
