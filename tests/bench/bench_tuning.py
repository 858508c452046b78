"""Tuning overhead (prints figures; not a timed test). Run: python tests/bench/bench_tuning.py [--reps N]

A protocol run of ridge on smoke-linear against a plain run of the same number of jobs (ridge on
smoke-linear, one seed per job, protocol none), both through `srtui run --jobs 2 --launcher
fork` into fresh workspaces:
- srbench2025: 4 seeds x (2 configurations x 5 folds + 1 final) = 44 jobs, in two rounds (the
  final fits start when their tuning has ended);
- srbench2021: 2 seeds x (4 candidates x 5 folds on 30 rows + 2 x 5 on 90 rows + 1 final) = 62
  jobs, in three rounds (the driver releases each halving iteration when the previous one ended).

The time of a run is from the driver's start to the end of its last job: the driver's start-up,
its planning (the protocol writes its fold data), every job and the waits between the rounds, but
not the results metrics the run computes afterwards (for every plain job, for the tuned run's
final jobs only: not tuning). Printed beside it: the job phase (first job's start to last job's
end; under load the interpreter's start-up varies by seconds between runs and can hide the jobs)
and the CPU time of each whole command (driver, fork servers, workers, metrics pool), which the
load changes little. On a loaded shared machine the runs alternate plain, tuned, plain, tuned
... (N pairs); the headline ratio is the median of the pairs' ratios (a pair's two runs see about
the same load), the ratio of the medians is printed too. Target: ratio <= 1.1.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
GRID = "\n[tuning.grids]\nridge = [{ alphas = [10.0] }, { alphas = [100.0] }, { alphas = [1000.0] }]\n"
CASES = (("srbench2025", 4, 4 * (2 * 5 + 1), ""), ("srbench2021", 2, 2 * (4 * 5 + 2 * 5 + 1), GRID))


def timed_run(
    tmp: Path, name: str, seeds: list[int], protocol: str, extra: str = ""
) -> tuple[float, float, float, int]:
    """(seconds from the driver's start to its last job's end, seconds of the job phase, CPU
    seconds of the whole command and every process under it, jobs ok)."""
    suite = tmp / f"{name}.toml"
    suite.write_text(f'name = "{name}"\ntasks = ["smoke-linear"]\nmethods = ["ridge"]\nseeds = {seeds}\n{extra}')
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / f"ws-{name}"
    command = [sys.executable, "-m", "srtui", "run", str(suite), "--protocol", protocol, "--jobs", "2"]
    t0, cpu0 = time.time(), _children_cpu_s()
    subprocess.run([*command, "--launcher", "fork", "--workspace", str(ws)], env=env, check=True, capture_output=True)
    cpu = _children_cpu_s() - cpu0
    with sqlite3.connect(ws / "srtui.db") as conn:
        started, ended, ok = conn.execute(
            "SELECT min(started_at), max(ended_at), sum(status = 'ok') FROM jobs"
        ).fetchone()
    end = datetime.fromisoformat(ended).timestamp()
    return end - t0, end - datetime.fromisoformat(started).timestamp(), cpu, int(ok)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5, help="plain/tuned pairs per protocol (default 5)")
    reps = parser.parse_args().reps
    load = os.getloadavg()[0]
    for protocol, seeds, jobs, extra in CASES:
        runs: dict[str, list[tuple[float, float, float]]] = {"plain": [], "tuned": []}
        for rep in range(reps):
            with tempfile.TemporaryDirectory() as tmp_name:
                tmp = Path(tmp_name)
                *plain, n_plain = timed_run(tmp, "plain", list(range(1, jobs + 1)), "none")
                *tuned, n_tuned = timed_run(tmp, "tuned", list(range(1, seeds + 1)), protocol, extra)
            assert n_plain == n_tuned == jobs, (n_plain, n_tuned, jobs)  # the same number of jobs, all ok
            runs["plain"].append((plain[0], plain[1], plain[2]))
            runs["tuned"].append((tuned[0], tuned[1], tuned[2]))
            print(
                f"{protocol} pair {rep + 1}: plain {plain[0]:.1f} s (jobs {plain[1]:.1f} s), tuned {tuned[0]:.1f} s "
                f"(jobs {tuned[1]:.1f} s), ratio {tuned[0] / plain[0]:.3f}; CPU plain {plain[2]:.1f} s, "
                f"tuned {tuned[2]:.1f} s",
                flush=True,
            )
        pairs = statistics.median(t[0] / p[0] for p, t in zip(runs["plain"], runs["tuned"]))
        phase = statistics.median(t[1] / p[1] for p, t in zip(runs["plain"], runs["tuned"]))
        cpu = statistics.median(t[2] / p[2] for p, t in zip(runs["plain"], runs["tuned"]))
        med = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
        print(
            f"{protocol}: {jobs} jobs each, {reps} pairs; ratio tuned/plain {pairs:.3f} (median of the pairs; "
            f"{target(f'{protocol}: tuned / plain', pairs, '<=', 1.1)}); "
            f"ratio of the medians {med['tuned'] / med['plain']:.3f} (plain {med['plain']:.1f} s, "
            f"tuned {med['tuned']:.1f} s); job phase ratio {phase:.3f}; CPU ratio {cpu:.3f} (whole command "
            "with its results metrics, which a plain run computes for every job)"
        )
    print(f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    finish()


if __name__ == "__main__":
    main()
