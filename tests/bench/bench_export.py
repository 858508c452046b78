"""Benchmark: export 100,000 runs with metrics to CSV and to LaTeX (target < 10 s each, and 10 s
per 100,000 runs for larger --runs), and
with --store DIR the real `srtui export` of that workspace (e.g. bench_tui.py's store of
1,000,000 runs; target < 60 s).

python tests/bench/bench_export.py [--runs 100000] [--store DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from targets import finish, target

from srtui.results.outputs.export import render_tables
from srtui.results.scoring.tables import normalise


def runs(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return normalise(
        pd.DataFrame(
            {
                "job_id": [f"{i:016x}" for i in range(n)],
                "suite": "srbench2022-synthetic",
                "task": [f"srbench2022-exact_{i % 200}" for i in range(n)],
                "method": [f"method_{i % 12}&co" for i in range(n)],
                "seed": rng.integers(0, 10_000, n),
                "status": rng.choice(["ok", "ok", "ok", "timeout"], n),
                "model": [f"{rng.normal():.4f}*x1*exp(-x2_{i % 7}) + sin(x3)" for i in range(n)],
                "r2_test": rng.uniform(-1, 1, n),
                "r2_train": rng.uniform(0, 1, n),
                "mse_test": rng.exponential(1, n),
                "size": rng.integers(1, 200, n),
                "size_simplified": rng.integers(1, 150, n),
                "symbolic_solution": rng.integers(0, 2, n),
                "ted_norm": rng.uniform(0, 1, n),
            }
        )
    )


def export_store(store: Path) -> None:
    """`srtui export --format csv` of a workspace, as a user runs it (interpreter start included)."""
    srtui = str(Path(sys.executable).with_name("srtui"))
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        done = subprocess.run(
            [srtui, "export", "--format", "csv", "--out", out, "--workspace", str(store)],
            capture_output=True,
            text=True,
        )
        dt = time.perf_counter() - t0
        files = sorted(Path(out).iterdir())
        size = sum(f.stat().st_size for f in files) / 1e6
        status = "ok" if done.returncode == 0 else f"FAILED: {done.stderr.strip()[:200]}"
        took = dt if done.returncode == 0 else float("inf")  # a failed export misses its target
        print(
            f"srtui export of {store}: {dt:.1f} s, {len(files)} files, {size:.0f} MB ({status}; "
            f"{target('srtui export of the store', took, '<', 60, ' s')}; "
            f"load average {os.getloadavg()[0]:.1f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", "--n", type=int, default=100_000, dest="n")
    ap.add_argument("--store", type=Path, help="also time `srtui export` of this workspace")
    args = ap.parse_args()
    if args.store:
        export_store(args.store)
    df = runs(args.n)
    for fmt in ("csv", "latex", "md", "json"):
        t0 = time.perf_counter()
        text = render_tables({"runs": df}, fmt, "runs", {"suite": "all"})
        dt = time.perf_counter() - t0
        limit = 10 * max(1.0, args.n / 100_000)  # the target is 10 s per 100,000 runs
        goal = f" ({target(f'export {fmt}', dt, '<', limit, ' s')})" if fmt in ("csv", "latex") else ""
        print(f"{fmt:>5}: {args.n} runs in {dt:.2f} s ({len(text) / 1e6:.1f} MB){goal}")
    finish()


if __name__ == "__main__":
    main()
