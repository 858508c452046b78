"""Schema v8 on a store of an older version: a migration killed half-way (SIGKILL, a second
process) leaves the store at its old version with every job; reopening migrates it whole."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from srtui.engine.workspace import Workspace
from srtui.results.store import schema
from srtui.results.store.store import Store

REPO = Path(__file__).resolve().parents[2]
N = 60_000


def _v7_store(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for step in schema.MIGRATIONS[:7]:
        step(conn)
    conn.execute("PRAGMA user_version = 7")
    statuses = ("ok", "ok", "error", "timeout", "pending")
    conn.executemany(
        "INSERT INTO jobs (job_id, suite, task, method, params, seed, limits, data_fingerprint, method_version, "
        "spec, status, attempt, r2_test, run_id, ended_at) VALUES (?,?,?,?,'{}',?,'{}','f','v1','{}',?,1,?,?,?)",
        [
            (f"{i:016x}", "s", f"task-{i % 97}", f"m-{i % 13}", i, statuses[i % 5], i / N, f"run{i % 3}", f"{i:08d}")
            for i in range(N)
        ],
    )
    conn.execute("COMMIT")
    conn.close()


def _jobs(path: Path) -> list[tuple]:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT job_id, status, r2_test FROM jobs ORDER BY job_id").fetchall()
    finally:
        conn.close()


def test_a_killed_migration_leaves_the_old_store_and_completes_on_reopen(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    _v7_store(ws.db_path)
    before = _jobs(ws.db_path)
    wal = Path(f"{ws.db_path}-wal")
    wal_at_start = wal.stat().st_size if wal.exists() else 0
    code = (
        "import sys; from pathlib import Path; from srtui.engine.workspace import Workspace; "
        "from srtui.results.store.store import Store; Store(Workspace(Path(sys.argv[1])))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ws.root)], cwd=REPO)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:  # the migration is writing
        if wal.exists() and wal.stat().st_size > wal_at_start + 512 * 1024:
            break
        time.sleep(0.002)
    assert proc.poll() is None, "the migration ended before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(ws.db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 7  # rolled back whole
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'job_counts'").fetchone()[0] == 0
    conn.close()
    assert _jobs(ws.db_path) == before
    store = Store(ws)  # reopened: migrated whole
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    assert store.status_counts() == {"ok": 24_000, "error": 12_000, "timeout": 12_000, "pending": 12_000}
    store.close()
    assert _jobs(ws.db_path) == before


def test_v9_gives_the_first_page_index_the_tie_break(tmp_path):
    """A v8 store (index (task, job_id)) reads sorted by task with its ties in order before it
    migrates (SQL sorts them), and a writer's open makes the index (task, method, seed, job_id),
    so that sort is an index walk in both directions."""
    from srtui.results.store.explore import ResultsQuery, results_page
    from srtui.results.store.explore_sql import order_by
    from srtui.results.store.queries import Reader

    ws = Workspace(tmp_path / "ws").ensure()
    conn = sqlite3.connect(ws.db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for step in schema.MIGRATIONS[:8]:
        step(conn)
    conn.execute("PRAGMA user_version = 8")
    rows = [(f"{(i * 7919) % 1000:016x}", f"task-{i % 3}", f"m-{i % 4}", 100 - i) for i in range(60)]
    conn.executemany(
        "INSERT INTO jobs (job_id, suite, task, method, params, seed, limits, data_fingerprint, method_version, "
        "spec, status, attempt) VALUES (?,'s',?,?,'{}',?,'{}','f','v1','{}','pending',1)",
        rows,
    )
    conn.execute("COMMIT")
    conn.close()
    want = sorted((r[1], r[2], r[3]) for r in rows)

    reader = Reader(ws)  # read-only: no migration
    page = results_page(reader, ResultsQuery("", sort="task", limit=100))
    assert [tuple(r[:3]) for r in page.rows] == want
    reader.close()

    Store(ws).close()  # a writer migrates
    conn = sqlite3.connect(ws.db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION >= 9
    assert [r[2] for r in conn.execute("PRAGMA index_info(jobs_by_task)")] == ["task", "method", "seed", "job_id"]
    for descending in (False, True):  # the explorer's own ORDER BY
        order = order_by("task", descending)
        plan = " ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN SELECT * FROM jobs ORDER BY {order} LIMIT 9"))
        assert "INDEX jobs_by_task" in plan and "TEMP B-TREE" not in plan, plan
    conn.close()
