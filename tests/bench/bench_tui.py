"""TUI benchmarks (print figures; not timed tests).

    python tests/bench/bench_tui.py [--runs 1000000] [--store DIR] [--no-live]

On a workspace of --runs runs (default 100,000; built once into --store DIR and reused, in a
temporary directory without it; an existing store of an older schema is migrated and timed):
1. time to first paint of the results explorer (target < 200 ms), from pressing 2 and from app start,
   and the time until its column store is loaded (every later operation is answered from memory);
2. filter / sort / group latency, key press to table filled (target < 200 ms);
3. resident memory of the app process (target < 300 MB);
4. one monitor refresh on that store, CPU time (target < 50 ms).
With a run of 2 parallel jobs going (another process):
5. the monitor's CPU use while idle-waiting, the app running in tmux at 80x24 (target < 5 % of
   one core); headless when tmux is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

N_RUNS = 100_000


def build_store(root: Path, n_runs: int = N_RUNS):
    """A workspace of ``n_runs`` finished runs (built in chunks: constant memory)."""
    from srtui.engine.spec import JobSpec, Limits
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    ws = Workspace(root).ensure()
    store = Store(ws, create=True)
    limits = Limits(time_s=60)
    suites = ("srbench-groundtruth", "srbench2022-synthetic", "nsr")
    statuses = ["ok"] * 85 + ["error"] * 4 + ["timeout"] * 5 + ["oom"] * 2 + ["crashed"] * 2 + ["invalid_model"] * 2
    rng = random.Random(0)
    for start in range(0, n_runs, 100_000):
        specs = [
            JobSpec(suites[i % 3], f"task-{i % 250:03d}", f"method-{i % 20:02d}", i, limits, "f" * 20, "v1")
            for i in range(start, min(start + 100_000, n_runs))
        ]
        store.plan(specs)
        rows = []
        for s in specs:
            status = rng.choice(statuses)
            ok = status == "ok"
            model = f"{rng.random():.6f}*x0 + sin({rng.random():.4f}*x1) - x2**2" if ok else None
            rows.append(
                (
                    status,
                    1,
                    rng.random() if ok else None,
                    rng.uniform(1, 600),
                    model,
                    "2025-01-01T00:00:00+00:00",
                    "2025-01-01T00:10:00+00:00",
                    s.job_id,
                )
            )
        with store.transaction() as c:
            c.executemany(
                "UPDATE jobs SET status = ?, attempt = ?, r2_test = ?, wall_s "
                "= ?, model = ?, started_at = ?, ended_at = ? WHERE job_id = ?",
                rows,
            )
    store.close()
    return ws


async def explorer(ws) -> dict:
    """Times from the key (or filter) to the page's rows being in the table; Pilot's own waiting
    for idle after a key press (~150 ms) is harness time and is left out; a frame is <= 17 ms more."""
    import psutil
    from textual.widgets import Input

    from srtui.app.app import SrtuiApp
    from srtui.app.screens import results

    applied: list[float] = []
    original = results.ResultsScreen.on_page_ready

    def on_page_ready(self, message):
        original(self, message)
        applied.append(time.perf_counter())

    timing = patch.object(results.ResultsScreen, "on_page_ready", on_page_ready)  # the real handler, timed
    timing.start()
    t_start = time.perf_counter()
    app = SrtuiApp(ws, label="bench")
    out: dict = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)  # let the monitor's first poll settle

        async def until(cond, timeout=30.0):
            end = time.perf_counter() + timeout
            while not cond():
                if time.perf_counter() > end:
                    raise RuntimeError("timed out")
                await asyncio.sleep(0.001)

        t0 = time.perf_counter()
        await pilot.press("2")
        screen = app.screen
        await until(lambda: applied)
        assert isinstance(screen, results.ResultsScreen)
        out["first_paint_s"] = applied[-1] - t0
        out["app_start_to_paint_s"] = applied[-1] - t_start
        await until(lambda: screen.columns_ready, timeout=600)
        out["columns_ready_s"] = time.perf_counter() - t0

        async def timed(action) -> float:
            n = len(applied)
            t = time.perf_counter()
            await action()
            await until(lambda: len(applied) > n)
            return applied[n] - t

        async def set_filter(text):
            screen.query_one("#filter", Input).value = text
            screen._apply_filter(text)

        ops = {
            "filter method=method-07": lambda: set_filter("method=method-07"),
            "filter r2_test>0.9 status=ok": lambda: set_filter("r2_test>0.9 status=ok"),
            "filter task~task-1 (substring)": lambda: set_filter("task~task-1"),
            "clear filter": lambda: set_filter(""),
            "sort by r2_test (o)": None,
            "reverse (r)": lambda: pilot.press("r"),
            "next page (])": lambda: pilot.press("right_square_bracket"),
            "group by method (b)": lambda: pilot.press("b"),
            "re-sort the groups (o)": lambda: pilot.press("o"),
            "group by suite+method (b)": lambda: pilot.press("b"),
            "group by task (b)": lambda: pilot.press("b"),
            "group by task+method (b)": lambda: pilot.press("b"),
        }
        lat, queries, cpu = {}, {}, {}
        for name, op in ops.items():
            if op is None:  # cycle the sort column to the one before r2_test, then time one press
                while screen.query_state.sort != "status":
                    await pilot.press("o")
                    await until(lambda: screen.page is not None and screen.page.query.sort == screen.query_state.sort)
                op = lambda: pilot.press("o")  # noqa: E731
            lat[name] = await timed(op)
            await until(lambda: screen.page is not None and screen.page.query == screen.query_state)
            assert screen.page is not None  # `until` waited for it
            queries[name] = screen.page.seconds
            cpu[name] = screen.page.cpu_seconds
        out["latency_s"] = lat
        out["query_s"] = queries
        out["query_cpu_s"] = cpu
        out["rss_mb"] = psutil.Process().memory_info().rss / 2**20
    timing.stop()
    return out


def monitor_cpu(tmp: Path, seconds: float = 20.0) -> tuple[float, str]:
    """CPU share of one core used by the app on the monitor while 2 jobs run in another process."""
    import psutil

    ws = tmp / "live"
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--methods",
            "probe-sleep",
            "--jobs",
            "2",
            "--time-limit",
            "120",
            "--workspace",
            str(ws),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until both jobs run
            out = subprocess.run(
                [sys.executable, "-m", "srtui", "status", "--json", "-w", str(ws)],
                env=env,
                capture_output=True,
                text=True,
            )
            if '"running": 2' in out.stdout.replace("\n", "") or out.stdout.count('"job_id"') >= 2:
                break
            time.sleep(1)
        how = "tmux 80x24"
        if shutil.which("tmux"):
            session = f"srtui-bench-{os.getpid()}"
            subprocess.run(
                [
                    "tmux",
                    "new-session",
                    "-d",
                    "-s",
                    session,
                    "-x",
                    "80",
                    "-y",
                    "24",
                    f"exec {sys.executable} -m srtui tui -w {ws}",
                ],
                check=True,
                env=env,
            )
            pane_pid = int(
                subprocess.run(
                    ["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"], capture_output=True, text=True
                ).stdout.split()[0]
            )
            app_proc = psutil.Process(pane_pid)
        else:
            how = "headless"
            session = None
            code = (
                "from srtui.engine.workspace import Workspace; from srtui.app.app import SrtuiApp; "
                f"SrtuiApp(Workspace(__import__('pathlib').Path({str(ws)!r}))).run(headless=True)"
            )
            app_proc = psutil.Popen([sys.executable, "-c", code], env=env)
        try:
            time.sleep(5)  # start-up and first polls are not idle
            c0, t0 = app_proc.cpu_times(), time.monotonic()
            time.sleep(seconds)
            c1, t1 = app_proc.cpu_times(), time.monotonic()
            share = ((c1.user - c0.user) + (c1.system - c0.system)) / (t1 - t0)
        finally:
            if session:
                subprocess.run(["tmux", "kill-session", "-t", session])
            else:
                app_proc.kill()
        return share, how
    finally:
        run.terminate()
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()


def open_store(root: Path, n_runs: int):
    """The store at ``root``, built when missing; opened for writing once (a migration, timed)."""
    from srtui.engine.workspace import Workspace
    from srtui.results.store import schema
    from srtui.results.store.store import Store

    if not (root / "srtui.db").exists():
        t = time.perf_counter()
        build_store(root, n_runs)
        print(f"store of {n_runs:,} runs built in {time.perf_counter() - t:.1f} s")
    ws = Workspace(root)
    before = Store(ws, readonly=True)
    version = before.conn.execute("PRAGMA user_version").fetchone()[0]
    before.close()
    t = time.perf_counter()
    Store(ws).close()
    if version < schema.VERSION:
        took = time.perf_counter() - t
        print(
            f"migration of {n_runs:,} runs from schema {version} to {schema.VERSION}: "
            f"{took:.1f} s ({target('migration', took, '<', 60, ' s')})"
        )
    return ws


def monitor_refresh(ws) -> float:
    """CPU seconds of one monitor poll after a write (nothing cached)."""
    from srtui.results.store.queries import Reader
    from srtui.views import monitor_snapshot

    reader = Reader(ws)
    monitor_snapshot(reader)  # opens the connection
    best = float("inf")
    for _ in range(5):
        t = time.process_time()
        monitor_snapshot(reader, None)
        best = min(best, time.process_time() - t)
    reader.close()
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=N_RUNS)
    ap.add_argument("--store", type=Path, help="build the store here once and reuse it (outside the repo)")
    ap.add_argument("--no-live", action="store_true", help="skip the monitor-during-a-run figure")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="srtui-bench-tui-"))
    try:
        ws = open_store(args.store or tmp / "big", args.runs)
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        r = asyncio.run(explorer(ws))
        print(
            "results explorer, time to first paint after pressing 2: "
            f"{r['first_paint_s'] * 1000:.0f} ms ({target('first paint', r['first_paint_s'] * 1000, '<', 200, ' ms')})"
        )
        print(
            "  app start (incl. imports of the app, not of Python) "
            f"to explorer painted: {r['app_start_to_paint_s']:.2f} s"
        )
        print(f"  column store loaded (in a worker, pages from SQL meanwhile): {r['columns_ready_s']:.1f} s after 2")
        lat = r["latency_s"]
        print(f"  {'operation (first time, not cached)':<36} {'to table':>9} {'query':>7} {'query CPU':>9}")
        for name, s in lat.items():
            print(
                f"  {name:<36} {s * 1000:6.0f} ms {r['query_s'][name] * 1000:4.0f} ms "
                f"{r['query_cpu_s'][name] * 1000:6.0f} ms"
            )
        print(
            f"filter/sort/group latency: median {statistics.median(lat.values()) * 1000:.0f} ms, "
            f"worst {max(lat.values()) * 1000:.0f} ms "
            f"({target('filter/sort/group, worst', max(lat.values()) * 1000, '<', 200, ' ms')}); query CPU: median "
            f"{statistics.median(r['query_cpu_s'].values()) * 1000:.0f} ms, worst "
            f"{max(r['query_cpu_s'].values()) * 1000:.0f} ms (load average {os.getloadavg()[0]:.1f})"
        )
        rss = target("app resident memory", r["rss_mb"], "<", 300, " MB")
        print(f"resident memory of the app process with the explorer open: {r['rss_mb']:.0f} MB ({rss})")
        refresh_ms = monitor_refresh(ws) * 1000
        print(
            f"monitor refresh on this store: {refresh_ms:.0f} ms CPU "
            f"({target('monitor refresh CPU', refresh_ms, '<', 50, ' ms')})"
        )
        if not args.no_live:
            share, how = monitor_cpu(tmp)
            print(
                "monitor CPU while idle-waiting on a run of 2 parallel jobs "
                f"({how}): {share * 100:.1f} % of one core ({target('monitor CPU', share * 100, '<', 5, ' %')})"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
