"""Benchmark: `srtui score RULE --from-csv` on 100,000 runs (30 methods x 120 datasets x ~28
seeds), each published rule in both profiles; wall time per call including interpreter start
(target < 5 s each at 100,000 runs, < 30 s at 1,000,000: --runs 1000000).

    python tests/bench/bench_score.py [--runs 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from targets import finish, target

from srtui.results.metrics.profiles import PROFILES

SRTUI = str(Path(sys.executable).with_name("srtui"))
PROPERTIES = ("exact_rediscovery", "feature_absence", "noise_robustness", "extrapolation", "accuracy")
RULES = (
    "srbench2022-qualification",
    "srbench2022-synthetic",
    "srbench2022-realworld",
    "srbench2021",
    "srbench-groundtruth",
    "srbench2025",
)


def table(n_runs: int, n_methods: int = 30, n_tasks: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    seeds = int(np.ceil(n_runs / (n_methods * n_tasks)))
    grid = pd.MultiIndex.from_product(
        [
            [f"task{t:03d}" for t in range(n_tasks)],
            ["linear"] + [f"method{m:02d}" for m in range(n_methods - 1)],
            range(seeds),
        ],
        names=["task", "method", "seed"],
    ).to_frame(index=False)
    df = grid.sample(n=min(n_runs, len(grid)), random_state=0).reset_index(drop=True)  # some runs missing
    n = len(df)
    size = rng.integers(1, 200, n)
    df = df.assign(
        status=rng.choice(["ok"] * 30 + ["timeout", "error"], n),
        r2_test=np.round(rng.uniform(-0.5, 1, n), 4),
        size=size,
        size_simplified=np.maximum(1, size - rng.integers(0, 5, n)),
        symbolic_solution=rng.integers(0, 2, n),
        feature_absence=rng.uniform(0, 1, n),
        r2_extrapolation=rng.uniform(-1, 1, n),
        noise_robustness=rng.uniform(0, 1, n),
        noise=rng.choice([0.0, 0.01, 0.1], n),
    )
    df["simplicity"] = np.round(-np.log(df["size_simplified"]) / np.log(5), 1)
    df["property"] = df["task"].map(lambda t: PROPERTIES[int(t[4:]) % len(PROPERTIES)])
    return df


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv, trust = Path(tmp) / "runs.csv", Path(tmp) / "trust.csv"
        df = table(args.runs)
        df.to_csv(csv, index=False)
        methods = df["method"].unique()
        pd.DataFrame(
            [(t, m, (i * 7 + j) % 5 + 1) for j, t in enumerate(df["task"].unique()) for i, m in enumerate(methods)],
            columns=["task", "method", "trust"],
        ).to_csv(trust, index=False)
        print(
            f"{len(df)} runs, {df['method'].nunique()} methods x {df['task'].nunique()} datasets x "
            f"{df['seed'].nunique()} seeds"
        )
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        print(f"bare interpreter start: {time.perf_counter() - t0:.2f} s")
        worst = 0.0
        goal = 5 if args.runs <= 100_000 else 30
        print(f"load average {os.getloadavg()[0]:.1f}")
        for rule in RULES:
            for profile in PROFILES:
                cmd = [SRTUI, "score", rule, "--from-csv", str(csv), "--format", "json", "-o", f"profile={profile}"]
                if rule == "srbench2022-realworld":
                    cmd += ["--trust", str(trust)]
                t0 = time.perf_counter()
                out = subprocess.run(cmd, capture_output=True, text=True)
                dt = time.perf_counter() - t0
                if out.returncode:
                    target(f"score {rule} {profile}", float("inf"), "<", goal, " s")  # failed: missed
                    print(f"{rule} {profile}: FAILED {out.stderr.strip()[:300]}")
                    continue
                rows = len(json.loads(out.stdout)["tables"]["leaderboard"])
                worst = max(worst, dt)
                met = target(f"score {rule} {profile}", dt, "<", goal, " s")
                print(f"{rule:>27} {profile:>9}: {dt:5.2f} s ({rows} leaderboard rows)  {met}")
        print(f"slowest: {worst:.2f} s")
    finish()


if __name__ == "__main__":
    main()
