"""Engine benchmarks (print figures; not timed tests). Run: python tests/bench/bench_engine.py

1. Overhead: 100 probe-noop jobs through `srtui run --jobs 2` against launching the same worker
   interpreter (same module, same imports, same job files) 100 times with `xargs -P 2`.
   Target: ratio <= 1.3.
2. `srtui status --json` on a store of 100,000 job records (--runs N; --store DIR reuses a
   store, e.g. bench_tui.py's). Target: < 0.5 s.
3. Launchers: 200 LinearRegression jobs on a small task, 2 slots, in one run: `srtui run
   --launcher fork` (with the phases of one forked job: engine/process/phases.py), `--launcher
   exec`, and SRBench's evaluate_model.py-style floor (one
   `python -c "import numpy, sklearn.linear_model"` per job under `xargs -P 2`). Targets: fork
   <= 0.05 s per job of slot time beyond the fit, and >= 10x fewer seconds per job than exec.

Run one part with its name: python tests/bench/bench_engine.py [overhead|status|launchers] [--runs N]
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

N_JOBS = 100
N_LAUNCHER_JOBS = 200


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
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", "run", str(suite), "--jobs", "2", "--workspace", str(ws)],
        env=_env(),
        capture_output=True,
        text=True,
    )
    srtui_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)

    # the baseline: the same worker on the same job files, with nothing around it but xargs. A
    # run removes each job's folder at its end, so the job files are written again from the
    # store: each job's spec and its task's data file, as the driver hands them over
    base = tmp / "baseline"
    dirs = []
    with sqlite3.connect(ws / "srtui.db") as conn:
        specs = [json.loads(s) for (s,) in conn.execute("SELECT spec FROM jobs ORDER BY job_id LIMIT ?", (N_JOBS,))]
    for i, spec in enumerate(specs):
        dst = base / f"job{i}"
        dst.mkdir(parents=True)
        shutil.copy(ws / "cache" / "data" / f"{spec['data_fingerprint']}.npz", dst / "data.npz")
        job = {"spec": spec, "data": str(dst / "data.npz"), "method_ref": spec["method"]}
        (dst / "job.json").write_text(json.dumps(job))
        dirs.append(str(dst))
    listing = tmp / "dirs.txt"
    listing.write_text("\n".join(dirs) + "\n")
    env = _env()
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    t0 = time.perf_counter()
    baseline = f"xargs -P 2 -n 1 {sys.executable} -m srtui.engine.process.job_worker < {listing}"
    subprocess.run(baseline, shell=True, check=True, env=env, cwd=tmp)  # noqa: S602 - the xargs baseline
    xargs_s = time.perf_counter() - t0
    print(
        f"engine overhead: {N_JOBS} probe-noop jobs, srtui run --jobs 2: {srtui_s:.2f} s; "
        f"xargs -P 2 on the same worker: {xargs_s:.2f} s; ratio {srtui_s / xargs_s:.2f} "
        f"({target('overhead ratio to xargs', srtui_s / xargs_s, '<=', 1.3)})"
    )
    print("  (srtui's figure includes interpreter start-up of the driver, planning, the store and scoring)")


def bench_status(tmp: Path, runs: int = 100_000, store_dir: Path | None = None) -> None:
    from srtui.engine.spec import JobSpec, Limits
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    ws = Workspace(store_dir or tmp / "big")
    if not ws.db_path.exists():
        ws.ensure()
        store = Store(ws, create=True)
        limits = Limits(time_s=60)
        statuses = ["ok"] * 80 + ["error"] * 5 + ["timeout"] * 5 + ["oom"] * 3 + ["crashed"] * 2 + ["pending"] * 5
        rng = random.Random(0)
        for start in range(0, runs, 100_000):
            specs = [
                JobSpec("big", f"task-{i % 250}", f"method-{i % 20}", i, limits, "f" * 20, "v1")
                for i in range(start, min(start + 100_000, runs))
            ]
            store.plan(specs)
            with store.transaction() as c:
                c.executemany(
                    "UPDATE jobs SET status = ?, r2_test = ? WHERE job_id = ?",
                    [(rng.choice(statuses), rng.random(), s.job_id) for s in specs],
                )
        store.close()
    Store(ws).close()  # migrated to this srtui's schema, as the first `srtui run` would
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(5):
        t0, c0 = time.perf_counter(), _child_cpu()
        out = subprocess.run(
            [sys.executable, "-m", "srtui", "status", "--json", "--workspace", str(ws.root)],
            env=_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(time.perf_counter() - t0)
        cpu.append(_child_cpu() - c0)
    total = json.loads(out.stdout)["total"]
    print(
        f"srtui status --json on {total} job records: median {statistics.median(times):.3f} s, "
        f"best {min(times):.3f} s over 5 runs ({target('status --json, best of 5', min(times), '<', 0.5, ' s')}; "
        "includes interpreter start-up); "
        f"CPU median {statistics.median(cpu):.3f} s (load average {os.getloadavg()[0]:.1f})"
    )


def _child_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _srtui_run(tmp: Path, launcher: str, extra_env: dict[str, str] | None = None) -> tuple[float, list[dict]]:
    suite = tmp / f"linear-{launcher}.toml"
    suite.write_text(
        f'name = "bench-linear"\ntasks = ["smoke-linear"]\nmethods = ["linear"]\n'
        f"seeds = {list(range(1, N_LAUNCHER_JOBS + 1))}\n"
    )
    ws = tmp / f"ws-{launcher}"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            str(suite),
            "--jobs",
            "2",
            "--launcher",
            launcher,
            "--workspace",
            str(ws),
        ],
        env={**_env(), **(extra_env or {})},
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(out.stdout)
    bad = [r for r in rows if r["status"] != "ok"]
    if len(rows) != N_LAUNCHER_JOBS or bad:
        raise SystemExit(f"{launcher}: {len(rows)} jobs, not ok: {bad[:3]}")
    return wall, rows


def _run_phase(rows: list[dict]) -> float:
    """Seconds from the first job's start to the last job's end (driver start-up and the
    metrics pass after the run left out)."""
    from datetime import datetime

    start = min(datetime.fromisoformat(r["started_at"]) for r in rows)
    return (max(datetime.fromisoformat(r["ended_at"]) for r in rows) - start).total_seconds()


def bench_launchers(tmp: Path) -> None:
    n, slots = N_LAUNCHER_JOBS, 2
    phase_log = tmp / "phases.jsonl"
    fork_s, fork_rows = _srtui_run(tmp, "fork", {"SRTUI_PHASE_LOG": str(phase_log)})
    exec_s, exec_rows = _srtui_run(tmp, "exec")
    env = _env()
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    t0 = time.perf_counter()
    subprocess.run(  # noqa: S602 - the baseline is this very shell pipeline
        f"seq {n} | xargs -P {slots} -I{{}} {sys.executable} -c 'import numpy, sklearn.linear_model'",
        shell=True,
        check=True,
        env=env,
    )
    base_s = time.perf_counter() - t0
    same = sorted(r["model"] for r in fork_rows) == sorted(r["model"] for r in exec_rows)
    print(
        f"launchers: {n} LinearRegression jobs on smoke-linear, {slots} slots (wall of the whole `srtui run`, "
        "driver start-up, planning, store and scoring included)"
    )
    for name, wall, rows in (("fork", fork_s, fork_rows), ("exec", exec_s, exec_rows)):
        fit = statistics.mean(r["fit_s"] for r in rows)
        in_job = statistics.mean(r["wall_s"] - r["fit_s"] for r in rows)
        print(
            f"  srtui --launcher {name}: {wall / n:.4f} s per job (run phase {_run_phase(rows) / n:.4f}); "
            f"a slot spends {wall * slots / n:.4f} s per job (run phase {_run_phase(rows) * slots / n:.4f}), "
            f"the fit {fit:.4f} s of it; the job itself, start to exit, {in_job:.4f} s beyond its fit"
        )
    print(
        f"  baseline (python -c 'import numpy, sklearn.linear_model' per job, xargs -P {slots}): "
        f"{base_s / n:.4f} s per job"
    )
    fork_fit = statistics.mean(r["fit_s"] for r in fork_rows)
    print(
        f"  ratios: exec / fork {exec_s / fork_s:.1f}x ({target('exec / fork', exec_s / fork_s, '>=', 10, 'x')}); "
        f"baseline / fork {base_s / fork_s:.1f}x; "
        f"exec / baseline {exec_s / base_s:.2f}"
    )
    beyond = _run_phase(fork_rows) / n - fork_fit / slots
    print(
        f"  fork overhead beyond the fit, per job: {fork_s / n - fork_fit / slots:.4f} s of the run's wall "
        f"({beyond:.4f} s in the run phase; {target('fork overhead per job', beyond, '<=', 0.05, ' s')})"
    )
    print(f"  the same {n} models under both launchers: {same}")
    from bench_launch import phase_table

    print(f"  phases of one forked job (median of {n}; load {os.getloadavg()[0]:.1f}):")
    for phase, wall, cpu in phase_table(phase_log):
        print(
            f"    {phase:<32} {wall * 1000:6.1f} ms wall" + (f", {cpu * 1000:5.1f} ms CPU" if cpu is not None else "")
        )


def main() -> None:
    import argparse

    parts = {"overhead": bench_overhead, "status": bench_status, "launchers": bench_launchers}
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", choices=[[], *parts], default=[])
    ap.add_argument("--runs", type=int, default=100_000, help="job records in the status store")
    ap.add_argument("--store", type=Path, help="a store to reuse for status (built there when missing)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="srtui-bench-") as tmp:
        for name in args.parts or list(parts):
            if name == "status":
                bench_status(Path(tmp), args.runs, args.store)
            else:
                parts[name](Path(tmp))
    finish()


if __name__ == "__main__":
    main()
