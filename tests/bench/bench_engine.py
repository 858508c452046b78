"""Engine benchmarks (print figures; not timed tests). Run: python tests/bench/bench_engine.py

1. Overhead: 100 probe-noop jobs through `srtui run --jobs 2` against launching the same worker
   interpreter (same module, same imports, same job files) 100 times with `xargs -P 2`.
   Target: ratio <= 1.3.
2. `srtui status --json` on a store of 100,000 job records. Target: < 0.5 s.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

N_JOBS = 100


def _env() -> dict:
    env = dict(os.environ)
    env.pop("SRTUI_WORKSPACE", None)
    env["PYTHONPATH"] = str(REPO)
    return env


def bench_overhead(tmp: Path) -> None:
    suite = tmp / "noop.toml"
    suite.write_text(
        'name = "bench-noop"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\n'
        f"seeds = {list(range(1, N_JOBS + 1))}\n"
    )
    ws = tmp / "ws"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "srtui", "run", str(suite), "--jobs", "2", "--workspace", str(ws)],
                          env=_env(), capture_output=True, text=True)
    srtui_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)

    # the baseline: the same worker on the same job files, with nothing around it but xargs
    jobdirs = sorted((ws / "cache" / "jobs").iterdir())[:N_JOBS]
    base = tmp / "baseline"
    dirs = []
    for i, src in enumerate(jobdirs):
        dst = base / f"job{i}"
        dst.mkdir(parents=True)
        shutil.copy(src / "job.json", dst / "job.json")
        dirs.append(str(dst))
    listing = tmp / "dirs.txt"
    listing.write_text("\n".join(dirs) + "\n")
    env = _env()
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    t0 = time.perf_counter()
    baseline = f"xargs -P 2 -n 1 {sys.executable} -m engine.worker < {listing}"
    subprocess.run(baseline, shell=True, check=True, env=env, cwd=tmp)  # noqa: S602 - the xargs baseline
    xargs_s = time.perf_counter() - t0
    print(f"engine overhead: {N_JOBS} probe-noop jobs, srtui run --jobs 2: {srtui_s:.2f} s; "
          f"xargs -P 2 on the same worker: {xargs_s:.2f} s; ratio {srtui_s / xargs_s:.2f} (target <= 1.3)")
    print("  (srtui's figure includes interpreter start-up of the driver, planning, the store and scoring)")


def bench_status(tmp: Path) -> None:
    from engine.spec import JobSpec, Limits
    from engine.workspace import Workspace
    from results.store import Store

    ws = Workspace(tmp / "big")
    ws.ensure()
    store = Store(ws, create=True)
    limits = Limits(time_s=60)
    specs = [JobSpec("big", f"task-{i % 250}", f"method-{i % 20}", i, limits, "f" * 20, "v1") for i in range(100_000)]
    store.plan(specs)
    statuses = ["ok"] * 80 + ["error"] * 5 + ["timeout"] * 5 + ["oom"] * 3 + ["crashed"] * 2 + ["pending"] * 5
    rng = random.Random(0)
    with store.transaction() as c:
        c.executemany("UPDATE jobs SET status = ?, r2_test = ? WHERE job_id = ?",
                      [(rng.choice(statuses), rng.random(), s.job_id) for s in specs])
    store.close()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "srtui", "status", "--json", "--workspace", str(ws.root)],
                             env=_env(), capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t0)
    total = json.loads(out.stdout)["total"]
    print(f"srtui status --json on {total} job records: median {statistics.median(times):.3f} s, "
          f"best {min(times):.3f} s over 5 runs (target < 0.5 s; includes interpreter start-up)")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="srtui-bench-") as tmp:
        bench_overhead(Path(tmp))
        bench_status(Path(tmp))


if __name__ == "__main__":
    main()
