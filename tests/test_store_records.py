"""The job record in the store: attempts kept whole when a job is lost, accuracy stored once."""

from __future__ import annotations

from pathlib import Path

from engine.spec import JobSpec, Limits
from engine.workspace import Workspace
from results.store import Store

LIMITS = Limits(time_s=60, mem_mb=2000)


def _store(root: Path) -> Store:
    return Store(Workspace(root).ensure(), create=True)


def test_mark_lost_keeps_the_attempts_host_run_and_start(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws")
    spec = JobSpec("smoke", "smoke-linear", "linear", 1, LIMITS, "fp", "1.0")
    store.plan([spec])
    run_id = store.begin_run("smoke", "driver", "host-a", ["srtui"], "2025-01-01T00:00:00+00:00")
    assert store.claim(spec.job_id, 1, run_id, "2025-01-01T00:00:01+00:00", "host-a")
    assert store.mark_lost(spec.job_id, 1, "2025-01-01T00:05:00+00:00", "the driver running this job died")
    (attempt,) = store.attempts(spec.job_id)
    assert attempt["status"] == "lost" and attempt["error"] == "the driver running this job died"
    assert attempt["host"] == "host-a" and attempt["run_id"] == run_id
    assert attempt["started_at"] == "2025-01-01T00:00:01+00:00"
    assert attempt["ended_at"] == "2025-01-01T00:05:00+00:00"
    store.close()


def test_mark_lost_without_an_attempt_row_takes_it_from_the_job(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws")
    spec = JobSpec("smoke", "smoke-linear", "linear", 1, LIMITS, "fp", "1.0")
    store.plan([spec])
    store.claim(spec.job_id, 1, "run1", "2025-01-01T00:00:01+00:00", "host-b")
    with store.transaction() as c:  # as an older srtui left it: the claim wrote no attempt row
        c.execute("DELETE FROM attempts")
    assert store.mark_interrupted(spec.job_id, 1, "2025-01-01T00:05:00+00:00", "disk full")
    (attempt,) = store.attempts(spec.job_id)
    assert (attempt["status"], attempt["host"], attempt["run_id"]) == ("interrupted", "host-b", "run1")
    store.close()


def test_status_while_the_database_is_being_created_is_one_line(tmp_path: Path) -> None:
    """A database stamped with a version whose tables are not there to read yet (a run creating
    its workspace): `srtui status --json` says so in one line, never a traceback."""
    import sqlite3

    from conftest import srtui

    ws = Workspace(tmp_path / "ws").ensure()
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("PRAGMA user_version = 6")
    proc = srtui("status", "--json", "-w", str(ws.root))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "no srtui tables" in proc.stderr
