"""Dask backend overhead (prints figures; not a timed test). Run: python tests/bench/bench_dask.py

100 probe-noop jobs through the real CLI, in one invocation: `srtui run --jobs 2` (local backend)
against `srtui run --backend dask --cluster local --jobs 2` (a 2-worker LocalCluster, one thread
each). Two ratios: whole command (includes starting the cluster), and the run phase only (the
store's run start to end: every job claimed, shipped, run, returned and recorded). Target: <= 1.5.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
N_JOBS = 100


def _run(args: list[str], ws: Path) -> tuple[float, float]:
    env = dict(os.environ)
    env.pop("SRTUI_WORKSPACE", None)
    env["PYTHONPATH"] = str(REPO)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "srtui", "run", *args, "--workspace", str(ws)],
                          env=env, capture_output=True, text=True)
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    with sqlite3.connect(ws / "srtui.db") as conn:
        started, ended = conn.execute("SELECT started_at, ended_at FROM runs").fetchone()
        statuses = dict(conn.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
    if statuses != {"ok": N_JOBS}:
        raise SystemExit(f"not all jobs ok: {statuses}")
    phase = (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
    return total, phase


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        suite = tmp / "noop.toml"
        suite.write_text(
            'name = "bench-noop"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\n'
            f"seeds = {list(range(1, N_JOBS + 1))}\n"
        )
        local_total, local_phase = _run([str(suite), "--jobs", "2"], tmp / "local")
        dask_total, dask_phase = _run([str(suite), "--jobs", "2", "--backend", "dask", "--cluster", "local"], tmp / "dask")
    print(f"{N_JOBS} probe-noop jobs, 2 slots")
    print(f"  local backend (--jobs 2):        command {local_total:6.1f} s   run phase {local_phase:6.1f} s")
    print(f"  dask, 2-worker LocalCluster:     command {dask_total:6.1f} s   run phase {dask_phase:6.1f} s")
    print(f"  ratio dask / local: command {dask_total / local_total:.2f}, run phase {dask_phase / local_phase:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
