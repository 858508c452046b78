"""A 50 MB model in the app (issue 43): prints figures, not a timed test.

    python tests/bench/bench_long_model.py [--mb 50]

One `srtui run` of probe-noop on smoke-linear into a temporary workspace, its model replaced by
--mb MB of text (a crafted workspace: runs cap a model at 100,000 characters). Then:
1. the core facade (srtui.views): CPU and wall time of the job's row and detail and of one
   page (first, second, middle, last), against reading the model whole as the facade did before
   (SELECT + made visible), and the ratio;
2. the app (headless, 120x40): the time from the detail reaching the expression screen (its data
   loaded) to the first page shown (target < 200 ms), from pressing ] to the next page shown
   (median of 10, target < 200 ms; the slowest and the CPU per page printed too), and the
   longest the event loop went without running while paging (target < 200 ms).
The machine's load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _workspace(root: Path, mb: int) -> str:
    ws = root / "ws"
    subprocess.run(
        [sys.executable, "-m", "srtui", "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear",
         "--seeds", "1", "-w", str(ws)],
        check=True, capture_output=True,
    )  # fmt: skip
    with sqlite3.connect(ws / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = ?", ("x0 + " * (mb * 200_000),))
        (job_id,) = conn.execute("SELECT job_id FROM jobs").fetchone()
    return str(job_id)


def _timed(fn, repeat: int = 5) -> tuple[float, float]:
    """Best wall and CPU seconds of ``fn()`` over ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def facade(ws: Path, job_id: str) -> None:
    from srtui.engine.textsafe import visible
    from srtui.engine.workspace import Workspace
    from srtui.results.store.queries import Reader
    from srtui.views import expression_detail, job_row, read_page

    reader = Reader(Workspace(ws))
    expression_detail(reader, job_id)  # imports out of the measure
    stored = job_row(reader, job_id)["model"]  # type: ignore[index]

    def whole() -> None:
        with reader.lock:
            (text,) = reader.store().conn.execute("SELECT model FROM jobs WHERE job_id = ?", (job_id,)).fetchone()  # type: ignore[union-attr]
            visible(text)

    before = _timed(whole)
    print(f"facade ({_load()}), best of 5, wall / CPU ms:")
    print(f"  whole model read and made visible (before): {before[0] * 1e3:.1f} / {before[1] * 1e3:.1f}")
    row = _timed(lambda: job_row(reader, job_id))
    print(f"  job row: {row[0] * 1e3:.1f} / {row[1] * 1e3:.1f}")
    detail = _timed(lambda: expression_detail(reader, job_id), 3)
    print(f"  expression detail: {detail[0] * 1e3:.1f} / {detail[1] * 1e3:.1f}")
    worst = 0.0
    for name, page in (("first", 0), ("second", 1), ("middle", stored.pages // 2), ("last", stored.pages - 1)):
        wall, cpu = _timed(lambda page=page: read_page(reader, stored, page))
        worst = max(worst, wall)
        print(f"  page {name} ({page + 1:,} of {stored.pages:,}): {wall * 1e3:.2f} / {cpu * 1e3:.2f}")
    print(
        f"  slowest page vs the whole read: {before[0] / worst:,.0f}x faster; "
        + target("page read (facade)", worst * 1e3, "<", 200, " ms")
    )
    reader.close()


def app(ws: Path, job_id: str) -> None:
    from textual.css.query import NoMatches
    from textual.widgets import Static

    from srtui.app.app import SrtuiApp
    from srtui.app.screens.expression import ExpressionScreen
    from srtui.engine.workspace import Workspace

    marks: dict[str, float] = {}
    original = ExpressionScreen.on_detail_ready

    def loaded(self: ExpressionScreen, message: object) -> None:
        marks["loaded"] = time.perf_counter()
        original(self, message)  # type: ignore[arg-type]

    async def drive() -> tuple[float, float]:
        application = SrtuiApp(Workspace(ws), label="bench", theme="textual-dark")
        longest = 0.0
        async with application.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.2)
            running = True

            async def watch() -> None:  # how late a 5 ms sleep wakes: the event loop's stalls
                nonlocal longest
                while running:
                    before = time.perf_counter()
                    await asyncio.sleep(0.005)
                    longest = max(longest, time.perf_counter() - before - 0.005)

            watcher = asyncio.create_task(watch())

            def shown(page: str) -> bool:
                try:
                    text = str(application.screen.query_one("#model", Static).render())
                except NoMatches:  # not composed yet
                    return False
                return page in text and "reading..." not in text

            async def until(page: str) -> float:
                end = time.perf_counter() + 600
                while not shown(page) and time.perf_counter() < end:
                    await asyncio.sleep(0.002)
                return time.perf_counter()

            application.open_expression(job_id)
            first = await until("page 1 of") - marks.get("loaded", float("nan"))
            opening, longest = longest, 0.0  # the screen's compose and mount included
            application.screen.query_one("#model-scroll").focus()
            turns, cpu = [], time.process_time()
            for page in range(2, 12):  # the key as a terminal sends it (no pilot's settling between)
                pressed = time.perf_counter()
                application.simulate_key("right_square_bracket")
                turns.append(await until(f"page {page} of") - pressed)
            cpu = (time.process_time() - cpu) / len(turns)
            turn = sorted(turns)[len(turns) // 2]
            slowest = max(turns)
            running = False
            await watcher
        print(f"app ({_load()}), headless 120x40:")
        print(
            f"  data loaded -> first page shown: {first * 1e3:.1f} ms; "
            + target("first page", first * 1e3, "<", 200, " ms")
        )
        print(
            f"  ] pressed -> next page shown, median of 10: {turn * 1e3:.1f} ms "
            f"(slowest {slowest * 1e3:.1f}; CPU {cpu * 1e3:.1f} ms per page); "
            + target("next page", turn * 1e3, "<", 200, " ms")
        )
        return opening, longest

    with patch.object(ExpressionScreen, "on_detail_ready", loaded):
        opening, longest = asyncio.run(drive())
    print(f"  longest event-loop stall while opening the screen (compose, mount): {opening * 1e3:.1f} ms")
    print(
        f"  longest event-loop stall while paging: {longest * 1e3:.1f} ms; "
        + target("stall", longest * 1e3, "<", 200, " ms")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="model size in MB (default 50)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srtui-bench-long-") as tmp:
        job_id = _workspace(Path(tmp), args.mb)
        print(f"a {args.mb} MB model (job {job_id})")
        facade(Path(tmp) / "ws", job_id)
        app(Path(tmp) / "ws", job_id)
    finish()


if __name__ == "__main__":
    main()
