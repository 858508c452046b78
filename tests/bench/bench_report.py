"""Figures and report benchmark (prints figures; not a timed test).
Run: python tests/bench/bench_report.py [WORKSPACE]  (a workspace it built before, else a new one)

On a workspace of 100,000 runs (bench_tui's store: 3 suites, 250 tasks, 20 methods, 15 % failed),
with the metrics the rules read (size, simplicity, solution flags), training times and energy:
1. `srtui report --out report.html` of the whole workspace, interpreter start included (target < 30 s);
2. each `srtui plot KIND --suite srbench2022-synthetic --out FILE.svg`, interpreter start included
   (target < 3 s each): drawn (no figure kept in the workspace's cache), then again (the kept one).
"""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))

from targets import finish, target  # noqa: E402

REPORT_TARGET_S = 30.0
FIGURE_TARGET_S = 3.0
SUITE = "srbench2022-synthetic"


N_RUNS = 100_000
SUITES = ("srbench-groundtruth", "srbench2022-synthetic", "srbench2025-blackbox")
TASKS, METHODS = 50, 20
SEEDS = -(-N_RUNS // (len(SUITES) * TASKS * METHODS))  # 34: every method on every task and seed


def build_store(root: Path):
    """3 suites x 50 tasks x 20 methods x 34 seeds (100,000 runs), 15 % of them failed."""
    from srtui.engine.spec import JobSpec, Limits
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    ws = Workspace(root).ensure()
    store = Store(ws, create=True)
    limits = Limits(time_s=60)
    grid = [(s, t, m, seed) for s in SUITES for t in range(TASKS) for m in range(METHODS) for seed in range(SEEDS)]
    specs = [JobSpec(s, f"task-{t:03d}", f"method-{m:02d}", seed, limits, "f" * 20, "v1") for s, t, m, seed in grid]
    specs = specs[:N_RUNS]
    store.plan(specs)
    statuses = ["ok"] * 85 + ["error"] * 4 + ["timeout"] * 5 + ["oom"] * 2 + ["crashed"] * 2 + ["invalid_model"] * 2
    rng = random.Random(0)
    rows = []
    for s in specs:
        status = rng.choice(statuses)
        ok = status == "ok"
        skill = int(s.method[-2:]) / METHODS  # methods differ, so the statistics have something to find
        r2 = min(1.0, skill * 0.5 + rng.random() * 0.5) if ok else None
        model = f"{rng.random():.6f}*x0 + sin({rng.random():.4f}*x1) - x2**2" if ok else None
        error = None if ok else f"{status}: example message"
        rows.append((status, 1, r2, rng.uniform(1, 600), model, "python" if ok else None, error, s.job_id))
    with store.transaction() as c:
        c.executemany(
            "UPDATE jobs SET status = ?, attempt = ?, r2_test = ?, wall_s = ?, model = ?, dialect = ?, error = ?, "
            "started_at = '2025-01-01T00:00:00+00:00', ended_at = '2025-01-01T00:10:00+00:00' WHERE job_id = ?",
            rows,
        )
    store.close()
    return ws


def add_metrics(ws) -> None:
    """The per-run metrics, times and energy of a rescored workspace, and each task's features."""
    from srtui.results.store.store import Store

    store = Store(ws)
    rng = random.Random(1)
    jobs = store.conn.execute("SELECT job_id, task FROM jobs WHERE status = 'ok'").fetchall()
    names = ("size", "size_simplified", "simplicity", "symbolic_solution", "feature_absence")
    rows, times = [], []
    for job_id, _task in jobs:
        size = rng.randint(3, 60)
        values = (
            size,
            max(1, size - rng.randint(0, 3)),
            round(-math.log(size, 5), 1),
            rng.random() < 0.2,
            rng.random(),
        )
        rows += [(job_id, n, float(v)) for n, v in zip(names, values)]
        rows += [(job_id, f"srbench2021.{n}", float(v)) for n, v in zip(names[:2], values[:2])]
        rows += [(job_id, f"srbench2022.{n}", float(v)) for n, v in zip(names[1:], values[1:])]
        fit = rng.uniform(0.5, 500)
        times.append((fit, fit * rng.uniform(8, 40), "estimate", job_id))
    with store.transaction() as c:
        c.executemany("INSERT OR REPLACE INTO metrics (job_id, name, value) VALUES (?, ?, ?)", rows)
        c.executemany("UPDATE jobs SET fit_s = ?, energy_j = ?, energy_method = ? WHERE job_id = ?", times)
        tasks = [t for (t,) in c.execute("SELECT DISTINCT task FROM jobs")]
        c.executemany(
            "INSERT OR REPLACE INTO task_info (task, info) VALUES (?, ?)",
            [(t, json.dumps({"name": t, "features": ["x0", "x1", "x2"], "noise": 0.0})) for t in tasks],
        )
    store.close()


def _adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux): a multiprocessing fork
    server the command started (the report's model printers) outlives it unwaited, and its CPU
    time, its workers' included, would count nowhere."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap(deadline_s: float = 30.0) -> None:
    """Wait for every orphan adopted (a fork server ends when the command's pipe to it closes)."""
    import os

    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def timed(*args: str) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds of the child and every process it started, its output): on a
    shared machine the CPU time is what the command costs, the wall time what a user waits."""
    import resource

    _adopt_orphans()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "srtui", *args], capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    _reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main() -> None:
    from srtui.results.outputs.figures import kinds

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "ws"  # a workspace built before
        if not (root / "srtui.db").is_file():
            t0 = time.perf_counter()
            add_metrics(build_store(root))
            print(f"workspace of {N_RUNS:,} runs built in {time.perf_counter() - t0:.1f} s")
        secs, cpu, out = timed("report", "--out", str(Path(tmp) / "report.html"), "-w", str(root))
        size = (Path(tmp) / "report.html").stat().st_size if out.returncode == 0 else 0
        status = "ok" if out.returncode == 0 else f"FAILED: {out.stderr.strip()[-300:]}"
        took = secs if out.returncode == 0 else float("inf")  # a failed command misses its target
        print(
            f"srtui report (3 suites, {N_RUNS:,} runs): {secs:.1f} s wall, {cpu:.1f} s CPU, {size / 1e6:.1f} MB "
            f"({target('srtui report', took, '<', REPORT_TARGET_S, ' s')}; ratio wall {secs / REPORT_TARGET_S:.2f}, "
            f"CPU {cpu / REPORT_TARGET_S:.2f}) {status}"
        )
        for kind in kinds():
            if kind == "trust":
                continue  # needs a review session; its data is a few hundred ratings, not the runs
            shutil.rmtree(root / "cache" / "figures", ignore_errors=True)  # drawn, not a figure kept before
            for how in ("drawn", "kept"):  # the second call copies the figure the first kept
                secs, cpu, out = timed(
                    "plot", kind, "--suite", SUITE, "--out", str(Path(tmp) / f"{kind}-{how}.svg"), "-w", str(root)
                )
                status = "ok" if out.returncode == 0 else f"FAILED: {out.stderr.strip()[-200:]}"
                took = secs if out.returncode == 0 else float("inf")
                print(
                    f"srtui plot {kind:<13} {how} ({N_RUNS // 3:,} runs): {secs:5.2f} s wall, {cpu:5.2f} s CPU "
                    f"({target(f'srtui plot {kind} {how}', took, '<', FIGURE_TARGET_S, ' s')}; ratio wall "
                    f"{secs / FIGURE_TARGET_S:.2f}, CPU {cpu / FIGURE_TARGET_S:.2f}) {status}"
                )
    finish()


if __name__ == "__main__":
    main()
