"""Submit-to-next-item latency with 4 concurrent experts on one workspace (prints figures; not a
timed test). Run: python tests/bench/bench_reviews.py

The workspace is the review tests' seeded one (27 real items: the simulated epidemic's three
tasks x nine methods, with their frozen plot data); each expert gets 23 hidden repeats, so 50
items each. Four real processes (``srtui.reviews.headless``, the screen's storage functions) start
rating at the same moment; the latency is from the submit (a ``BEGIN IMMEDIATE`` commit of the
rating and its audit row) to the next item's content being read and decoded. Two paces:
back-to-back (a stress test: the four write as fast as they can) and with 200 ms between items.
Target: p95 < 100 ms.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "unit"), str(REPO / "tests" / "e2e")]

from targets import finish, target  # noqa: E402
from test_reviews_seed import seed_review_workspace  # noqa: E402

from srtui.engine.workspace import Workspace  # noqa: E402
from srtui.results.store.store import Store  # noqa: E402
from srtui.reviews import create_session  # noqa: E402
from srtui.reviews.items import build_items  # noqa: E402

EXPERTS = ["e1", "e2", "e3", "e4"]


def run(root: Path, session: str, think_ms: float) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.time() + 5
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "srtui.reviews.headless",
                str(root),
                session,
                e,
                "--auto",
                "50",
                "--start-at",
                str(start),
                "--think",
                str(think_ms),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for e in EXPERTS
    ]
    lat = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        if p.returncode:
            raise SystemExit(err)
        res = json.loads(out)
        assert res["rated"] == 50, res
        lat += res["latencies_ms"]
    return lat


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="srtui-bench-reviews-")) / "ws"
    t0 = time.perf_counter()
    seed_review_workspace(root)
    store = Store(Workspace(root))
    items = build_items(store, include_baseline=True)
    size = np.mean([len(json.dumps(it.content)) for it in items])
    for name in ("stress", "paced"):
        create_session(store, name, items, EXPERTS, repeats=50 - len(items), seed=1)
    store.close()
    print(
        f"workspace {root}: {len(items)} items (mean {size / 1024:.0f} KiB "
        f"of frozen content), set up in {time.perf_counter() - t0:.1f} s"
    )
    for name, think in (("stress", 0.0), ("paced", 200.0)):
        lat = np.array(run(root, name, think))
        check = Store(Workspace(root))
        n, distinct = check.conn.execute(
            "SELECT count(*), count(DISTINCT assignment_id) FROM review_ratings WHERE session = ?", (name,)
        ).fetchone()
        check.close()
        p50, p95, mx = np.percentile(lat, 50), np.percentile(lat, 95), lat.max()
        print(
            f"{name:>6} (think {think:.0f} ms): {len(lat)} submits, {n} ratings stored ({distinct} distinct); "
            f"submit-to-next latency p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {mx:.1f} ms; "
            f"{target(f'{name}: p95 latency', p95, '<', 100, ' ms')} (ratio p95/target {p95 / 100:.2f})"
        )
    shutil.rmtree(root.parent, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
