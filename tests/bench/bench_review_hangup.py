"""How fast the expert's `review open` leaves after `kill -9` of the SSH client (prints figures;
not a timed test). Run: python tests/bench/bench_review_hangup.py [SESSIONS]

An own sshd on 127.0.0.1 (tests/e2e/test_reviews_ssh.py's Server), the expert's key forced to
`srtui review open`; each session waits for the first item, kills the ssh client with SIGKILL
and times until the rating process is gone (this workspace's processes only). Measured idle and
beside 2 busy processes per core. Target: the slowest <= 1 s (docs/reviews.md: "within a second").
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "unit"), str(REPO / "tests" / "e2e")]
from targets import finish, target  # noqa: E402
from test_reviews_ssh import SSHD, Server, _raters, _session, _workspace  # noqa: E402

TARGET_S = 1.0


def _times(srv: Server, root: Path, n: int) -> list[float]:
    out = []
    for _ in range(n):
        term = _session(srv, "alice")
        try:
            term.wait_for("Item 1 of 4", timeout=60)
            time.sleep(0.5)
            t0 = time.monotonic()
            term.proc.kill()  # the client dies: no goodbye to sshd
            while _raters(root) and time.monotonic() - t0 < 10:
                time.sleep(0.01)
            out.append(time.monotonic() - t0)
        finally:
            term.kill()
    return out


def main() -> None:
    if SSHD is None:
        print("no sshd here (apt-get install openssh-server): nothing measured")
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    tmp = Path(tempfile.mkdtemp())
    root = _workspace(tmp, 4, ["alice"])
    srv = Server(tmp / "sshd", root, ["alice"])
    try:
        for label, hogs in (("idle", 0), ("loaded", 2 * (os.cpu_count() or 1))):
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
            try:
                t = _times(srv, root, n)
            finally:
                for p in busy:
                    p.kill()
            print(
                f"{label:7} ({hogs} busy processes): median {sorted(t)[len(t) // 2]:.2f} s, slowest {max(t):.2f} s"
                f"  -> {max(t) / TARGET_S:.2f} of the {TARGET_S:g} s target "
                f"({target(f'{label}: slowest hang-up noticed', max(t), '<=', TARGET_S, ' s')})"
            )
    finally:
        srv.stop()
    finish()


if __name__ == "__main__":
    main()
