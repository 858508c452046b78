"""A rating process without a screen, on the same storage functions as the expert screen.

For tests and benchmarks of real processes (SIGKILL right after a submit, several experts at
once) - not an expert entry point (the SSH key forces `srtui review open`).

    python -m srtui.reviews.headless WORKSPACE SESSION EXPERT            # commands on stdin
    python -m srtui.reviews.headless WORKSPACE SESSION EXPERT --auto N [--start-at EPOCH] [--think MS]
        # rate N items (from EPOCH, waiting MS between items like a reader), report JSON

stdin commands: ``current`` -> ``item POS ASSIGNMENT`` or ``done``; ``rate R [comment]`` rates
the current item, prints ``saved ASSIGNMENT`` once committed, then shows the next unrated item
(``item POS ASSIGNMENT MS`` or ``done MS``, MS = submit-to-next latency in milliseconds);
``skip`` moves on without rating.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from srtui.engine.workspace import Workspace, WorkspaceError
from srtui.results.store.store import Store, StoreError
from srtui.reviews.storage import ExpertError, ExpertSession


def auto_rating(assignment: str) -> int:
    """A fixed rating per assignment (tests check the stored values against it)."""
    return zlib.crc32(assignment.encode()) % 5 + 1


def _open(workspace: str, session: str, expert: str) -> ExpertSession:
    return ExpertSession.open(Store(Workspace(Path(workspace).absolute())), session, expert)


def run_auto(es: ExpertSession, n: int, start_at: float | None = None, think_ms: float = 0.0) -> dict[str, Any]:
    """Rate ``n`` items; the latency is from the submit to the next item's content being ready."""
    latencies, done = [], 0
    pos = es.first_unrated()
    if pos is not None:
        es.show(pos)
    if start_at is not None:  # several processes start rating at the same moment
        time.sleep(max(0.0, start_at - time.time()))
    started = time.time()
    while pos is not None and done < n:
        if think_ms:
            time.sleep(think_ms / 1000)
        t0 = time.perf_counter()
        es.rate(pos, auto_rating(es.order[pos]))
        pos = es.next_unrated(pos)
        if pos is not None:
            es.show(pos)
        latencies.append((time.perf_counter() - t0) * 1000)
        done += 1
    return {"rated": done, "latencies_ms": latencies, "started": started, "ended": time.time()}


def run_stdin(es: ExpertSession) -> None:
    pos = es.first_unrated()
    if pos is not None:
        es.show(pos)

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        cmd, _, rest = line.strip().partition(" ")
        if cmd == "current":
            say("done" if pos is None else f"item {pos} {es.order[pos]}")
        elif cmd in ("rate", "skip") and pos is not None:
            t0 = time.perf_counter()
            if cmd == "rate":
                value, _, comment = rest.partition(" ")
                es.rate(pos, int(value), comment or None)
                say(f"saved {es.order[pos]}")
                nxt = es.next_unrated(pos)
            else:
                es.skip(pos)
                nxt = es.next_unrated(pos) if es.next_unrated(pos) != pos else None
            pos = nxt
            if pos is not None:
                es.show(pos)
            ms = (time.perf_counter() - t0) * 1000
            say(f"done {ms:.2f}" if pos is None else f"item {pos} {es.order[pos]} {ms:.2f}")
        else:
            say("error unknown command")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    opts = {}
    for flag in ("--auto", "--start-at", "--think"):
        if flag in args:
            i = args.index(flag)
            opts[flag] = float(args[i + 1])
            del args[i : i + 2]
    auto = int(opts["--auto"]) if "--auto" in opts else None
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        es = _open(*args)
        if auto is not None:
            print(json.dumps(run_auto(es, auto, opts.get("--start-at"), opts.get("--think", 0.0))), flush=True)
        else:
            run_stdin(es)
    except (ExpertError, WorkspaceError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
