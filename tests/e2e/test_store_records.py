"""The job record in the store: attempts kept whole when a job is lost, accuracy stored once."""

from __future__ import annotations

from pathlib import Path

from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store

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


def _v6_workspace(root: Path) -> Workspace:
    """A workspace as srtui wrote it before schema v7: accuracy in the job row and in metrics."""
    import sqlite3

    from srtui.results.store import schema

    ws = Workspace(root).ensure()
    spec = JobSpec("smoke", "smoke-linear", "linear", 1, LIMITS, "fp", "1.0")
    with sqlite3.connect(ws.db_path) as conn:
        for step in schema.MIGRATIONS[:6]:
            step(conn)
        conn.execute("PRAGMA user_version = 6")
        conn.execute(
            "INSERT INTO jobs (job_id, suite, task, method, params, seed, limits, data_fingerprint, method_version, "
            "spec, status, attempt, r2_test, mse_test) VALUES (?, 'smoke', 'smoke-linear', 'linear', '{}', 1, '{}', "
            "'fp', '1.0', '{}', 'ok', 1, 0.5, 2.0)",
            (spec.job_id,),
        )
        conn.executemany(
            "INSERT INTO metrics (job_id, name, value) VALUES (?, ?, ?)",
            [
                (spec.job_id, "r2_test", 0.75),
                (spec.job_id, "mse_test", None),
                (spec.job_id, "size", 7.0),
                (spec.job_id, "_version", 2.0),
            ],
        )
    return ws


def test_schema_v7_keeps_accuracy_once_in_the_job_row(tmp_path: Path) -> None:
    from srtui.results.scoring.tables import runs_frame
    from srtui.results.store import schema

    ws = _v6_workspace(tmp_path / "ws")
    old = Store(ws, readonly=True)  # an old workspace stays readable as it is
    frame = runs_frame(old, "smoke")
    assert frame["r2_test"].tolist() == [0.5] and frame["size"].tolist() == [7.0]
    old.close()
    store = Store(ws)  # migrated: the recomputed copy (what the boards read) is the one kept
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION >= 7
    (job,) = store.jobs()
    assert job["r2_test"] == 0.75 and job["mse_test"] == 2.0
    names = {r[0] for r in store.conn.execute("SELECT name FROM metrics")}
    assert names == {"size", "_version"}
    frame = runs_frame(store, "smoke")
    assert frame["r2_test"].tolist() == [0.75] and frame["size"].tolist() == [7.0]
    store.close()


def test_one_column_registry_for_store_cli_exports_and_app() -> None:
    from srtui import views
    from srtui.cli import run_cmd
    from srtui.results.scoring import tables
    from srtui.results.store import columns, explore, store

    assert store.JOB_RESULT_COLUMNS == columns.RESULT_COLUMNS
    assert run_cmd.RESULT_COLUMNS == columns.EXPORT_COLUMNS
    assert tables.JOB_COLUMNS == columns.RUNS_COLUMNS
    assert set(columns.ACCURACY) <= set(columns.RUNS_COLUMNS) & set(columns.RESULT_COLUMNS)
    assert (views.TEXT_COLUMNS, views.NUMBER_COLUMNS) == (columns.TEXT_COLUMNS, columns.NUMBER_COLUMNS)
    assert set(explore.PAGE_COLUMNS) <= set(columns.JOB_COLUMNS)
    # every column of a freshly made jobs table is in the registry, and the other way round
    import sqlite3

    from srtui.results.store import schema

    conn = sqlite3.connect(":memory:")
    for step in schema.MIGRATIONS:
        step(conn)
    assert {r[1] for r in conn.execute("PRAGMA table_info(jobs)")} == set(columns.JOB_COLUMNS)
