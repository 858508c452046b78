"""Real rating processes (``python -m srtui.reviews.headless``, on the expert screen's storage
functions): a process killed with SIGKILL right after a submit loses nothing, and four experts
rating 50 items each at the same time leave exactly 200 ratings."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store
from srtui.reviews import FrozenItem, create_session
from srtui.reviews.headless import auto_rating

REPO = Path(__file__).resolve().parents[2]


def _items(n: int) -> list[FrozenItem]:
    """Items with small but complete content (what the screen reads), from n (task, method) pairs."""
    series = {
        "dates_train": ["2020-01-01", "2020-01-02"],
        "dates_test": ["2020-01-03"],
        "y_train": [1.0, 2.0],
        "y_test": [3.0],
        "pred_train": [1.1, 2.1],
        "pred_test": [2.9],
    }
    return [
        FrozenItem(
            f"task-{i // 10}",
            f"method-{i % 10}",
            {
                "task": f"task-{i // 10}",
                "horizon": "14 days",
                "r2_test": 0.9,
                "simplicity": -1.2,
                "expression": f"{i}*x",
                "expression_ascii": f"{i}*x",
                "plain": f"{i}*x",
                "black_box": False,
                "series": series,
            },
        )
        for i in range(n)
    ]


def _headless(ws: Path, session: str, expert: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "srtui.reviews.headless", str(ws), session, expert, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _workspace(tmp_path: Path, n_items: int, experts: list[str], repeats: int = 0) -> Path:
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    create_session(store, "s", _items(n_items), experts, repeats=repeats, seed=1)
    store.close()
    return ws.root


def test_sigkill_right_after_submit_loses_nothing(tmp_path):
    root = _workspace(tmp_path, 6, ["alice"], repeats=1)
    proc = _headless(root, "s", "alice")
    assert proc.stdin is not None and proc.stdout is not None
    saved = []
    for value in (4, 2, 5):
        proc.stdin.write(f"rate {value} note {value}\n")
        proc.stdin.flush()
        line = proc.stdout.readline().split()
        assert line[0] == "saved", line
        saved.append((line[1], value))
        proc.stdout.readline()  # the next item
    proc.stdin.write("rate 1\n")
    proc.stdin.flush()
    line = proc.stdout.readline().split()
    assert line[0] == "saved"
    os.kill(proc.pid, signal.SIGKILL)  # right after the submit was acknowledged
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    saved.append((line[1], 1))
    store = Store(Workspace(root))
    stored = dict(store.conn.execute("SELECT assignment_id, rating FROM review_ratings"))
    assert stored == dict(saved)
    audit = store.conn.execute("SELECT seq, assignment_id, action, rating FROM review_audit ORDER BY seq").fetchall()
    assert [(a, r) for _, a, _, r in audit] == saved
    # a new process resumes after the last saved item, and the audit log only grows
    proc = _headless(root, "s", "alice")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("current\nrate 3\n")
    proc.stdin.close()
    out = proc.stdout.read().split("\n")
    assert proc.wait(timeout=30) == 0
    order = [a for (a,) in store.conn.execute("SELECT assignment_id FROM review_assignments ORDER BY position")]
    assert out[0] == f"item 4 {order[4]}"
    after = store.conn.execute("SELECT seq, assignment_id, action, rating FROM review_audit ORDER BY seq").fetchall()
    assert after[: len(audit)] == audit and len(after) == len(audit) + 1


def test_four_experts_at_once_no_loss_no_duplicate(tmp_path):
    experts = ["e1", "e2", "e3", "e4"]
    root = _workspace(tmp_path, 50, experts)
    # all four rate at the same time, after their start-up (about 1 s quiet; 10 s leaves room for
    # a loaded machine), and each takes 5 s to rate (0.1 s a rating), so one that starts late
    # still overlaps the others
    start = time.time() + 10
    procs = [_headless(root, "s", e, "--auto", "50", "--start-at", str(start), "--think", "100") for e in experts]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert [r["rated"] for r in results] == [50] * 4
    assert all(r["started"] < min(q["ended"] for q in results) for r in results)  # they overlapped
    store = Store(Workspace(root))
    rows = store.conn.execute("SELECT assignment_id, expert, rating FROM review_ratings").fetchall()
    assert len(rows) == 200 and len({a for a, _, _ in rows}) == 200
    assert all(r == auto_rating(a) for a, _, r in rows)
    per_expert = dict(store.conn.execute("SELECT expert, count(DISTINCT item_id) FROM review_ratings GROUP BY expert"))
    assert per_expert == {e: 50 for e in experts}
    assert store.conn.execute("SELECT count(*), count(DISTINCT assignment_id) FROM review_audit").fetchone() == (
        200,
        200,
    )
