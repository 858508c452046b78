"""Benchmark: metrics computed in the run's slots (the new way) against a run followed by the
post-run pass (today's way), locally and on a 2-worker LocalCluster, in one invocation.

    python tests/bench/bench_metrics.py --overlap [--seeds 4] [--slots 2]
    python tests/bench/bench_overlap.py [--seeds 4] [--slots 2]

The suite has a tail: SR methods with a time limit (gplearn, ffx) beside instant ones (linear,
poly2), so the last long jobs leave slots with no job to start. Each way runs through the real
CLI in a fresh workspace. Printed per way: end-to-end wall time (the run, and for today's way
the `srtui rescore` after it) and the slots' idle share: slot-seconds with nothing to do before
the metrics are all stored, over all slot-seconds = 1 - (the jobs' wall seconds + the metric
operations' worker seconds, both as the workspace records them) / slot-seconds, the slots
existing from the first job's start to the run's end (a cluster's start-up and stop are no
slot's idle time; the share over the whole command is printed too). Targets: the
new way is never slower than today's; its idle share <= 10 %.

Then the metrics throughput of the same models (caches emptied): the local pool
(`srtui rescore`) and the LocalCluster (`srtui rescore --cluster local`), timed from the moment
the metrics start to when they are stored (the cluster's start-up and stop apart). Target:
cluster >= 0.9 x the local pool.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from targets import finish, target

SUITE = """name = "overlap"
tasks = ["smoke-linear", "smoke-interaction"]
methods = ["gplearn", "ffx", "linear", "poly2"]
seeds = {seeds}
[limits]
time_s = 20
"""


def _cli(*args: str) -> float:
    """Wall seconds of one srtui command."""
    t0 = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    proc = subprocess.run([sys.executable, "-m", "srtui", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"srtui {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return wall


def _busy(ws: Path) -> float:
    """Slot-seconds the workspace records as used: the jobs' wall time and the metric operations'."""
    with sqlite3.connect(ws / "srtui.db") as conn:
        jobs = conn.execute("SELECT coalesce(sum(wall_s), 0) FROM jobs").fetchone()[0]
        ops = conn.execute("SELECT coalesce(sum(seconds), 0) FROM expr_cache").fetchone()[0]
    return float(jobs) + float(ops)


def _span(ws: Path) -> tuple[float, float]:
    """(when the first job started, when the last run ended: its metrics stored), epoch seconds.
    The slots exist from the first job's start (a cluster's start-up before it is no slot's idle
    time) to the run's end (a cluster's stop after it neither)."""
    with sqlite3.connect(ws / "srtui.db") as conn:
        first = conn.execute("SELECT min(started_at) FROM jobs").fetchone()[0]
        last = conn.execute("SELECT max(ended_at) FROM runs").fetchone()[0]
    return datetime.fromisoformat(first).timestamp(), datetime.fromisoformat(last).timestamp()


def _way(suite: Path, ws: Path, slots: int, new: bool, cluster: bool) -> tuple[float, float, float]:
    """(wall, idle share while the slots exist, idle share of the whole wall) of one way of
    running the suite and its metrics. Today's way ends with `srtui rescore`, whose whole command
    counts (its pool or cluster exists only for it)."""
    extra = ["--cluster", "local"] if cluster else []
    run = ["run", str(suite), "--jobs", str(slots), "--workspace", str(ws), *extra]
    began = time.time()
    wall = _cli(*run, *([] if new else ["--no-metrics"]))
    if not new:
        wall += _cli("rescore", "--workers", str(slots), "--workspace", str(ws), *extra)
    busy, (first, ended) = _busy(ws), _span(ws)
    alive = ended - first if new else wall - (first - began)
    return wall, max(0.0, 1 - busy / (slots * alive)), max(0.0, 1 - busy / (slots * wall))


def _metrics_rate(ws: Path, slots: int, cluster: bool) -> tuple[float, int]:
    """Models per second of the metrics alone (fresh caches), timed from when they start."""
    with sqlite3.connect(ws / "srtui.db") as conn:
        conn.execute("DELETE FROM expr_cache")
        n = conn.execute("SELECT count(*) FROM jobs WHERE status = 'ok' AND model IS NOT NULL").fetchone()[0]
    from srtui.engine.workspace import Workspace
    from srtui.runs.rescore import RescoreRequest, rescore

    started: list[float] = []
    req = RescoreRequest(force=True, workers=slots, cluster="local" if cluster else None)
    rescore(Workspace(ws), req, lambda _m: started.append(time.perf_counter()))
    # the cluster's last message comes once the metrics are stored, before it is stopped (its
    # start-up and its stop are left out alike); the local pool's pass ends as rescore returns
    ended = started[-1] if cluster else time.perf_counter()
    return n / (ended - started[0]), n


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--slots", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "overlap.toml"
        suite.write_text(SUITE.format(seeds=list(range(1, args.seeds + 1))))
        print(f"suite: 2 tasks x 4 methods x {args.seeds} seeds, {args.slots} slots (load {os.getloadavg()[0]:.1f})")
        results = {}
        for where, cluster in (("local", False), ("LocalCluster", True)):
            for label, new in (("today's way (run, then metrics)", False), ("new way (metrics in the slots)", True)):
                ws = Path(tmp) / f"{where}-{int(new)}"
                wall, idle, idle_all = _way(suite, ws, args.slots, new, cluster)
                results[(where, new)] = (wall, idle)
                print(
                    f"{where:>12}  {label:<34} {wall:7.1f} s wall, slots idle {idle:5.1%} "
                    f"({idle_all:.1%} over the whole command)"
                )
            (old_wall, _), (new_wall, new_idle) = results[(where, False)], results[(where, True)]
            print(
                f"{where:>12}  new / today's wall: {new_wall / old_wall:.2f} "
                f"({target(f'{where}: new / today s wall', new_wall / old_wall, '<=', 1.0)}); "
                f"idle share {new_idle:.1%} ({target(f'{where}: idle share', 100 * new_idle, '<=', 10, ' %')})"
            )
        ws = Path(tmp) / "local-1"
        pool, n = _metrics_rate(ws, args.slots, cluster=False)
        on_cluster, _ = _metrics_rate(ws, args.slots, cluster=True)
        print(
            f"metrics throughput of {n} models: local pool {pool:.2f} models/s, LocalCluster {on_cluster:.2f} "
            f"models/s = {on_cluster / pool:.2f} x "
            f"({target('cluster / local pool', on_cluster / pool, '>=', 0.9, 'x')})"
        )
    finish()


if __name__ == "__main__":
    main()
