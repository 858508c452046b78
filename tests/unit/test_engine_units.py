"""Fast unit tests of the engine's pieces: specs, resume rules, the store's schema, log capping."""

from __future__ import annotations

import io
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from srtui.engine.backends.base import PlannedJob, interleave
from srtui.engine.process import job_files, supervise, worker_env
from srtui.engine.process.job_io import JobPayload
from srtui.engine.spec import CPU_ENV, WATCHDOG_MARGIN_S, FitBudget, JobSpec, Limits, SpecError
from srtui.engine.workspace import Workspace, WorkspaceError, resolve
from srtui.results.store.store import Store, StoreError, needs_run


def spec(**changes) -> JobSpec:
    base: dict[str, Any] = dict(
        suite="s",
        task="t",
        method="m",
        seed=1,
        limits=Limits(time_s=10),
        data_fingerprint="abc",
        method_version="1",
        params={"a": 1},
    )
    base.update(changes)
    return JobSpec(**base)


def test_job_id_is_stable_and_covers_every_field() -> None:
    assert spec().job_id == spec().job_id == JobSpec.from_dict(spec().to_dict()).job_id
    assert spec(params={"a": 1}).job_id == JobSpec(**{**spec().__dict__, "params": {"a": 1}}).job_id
    variants = [
        spec(suite="s2"),
        spec(task="t2"),
        spec(method="m2"),
        spec(seed=2),
        spec(limits=Limits(time_s=11)),
        spec(data_fingerprint="abd"),
        spec(method_version="2"),
        spec(params={"a": 2}),
    ]
    ids = {v.job_id for v in variants} | {spec().job_id}
    assert len(ids) == len(variants) + 1


@pytest.mark.parametrize("bad", [dict(time_s=-1), dict(mem_mb=0), dict(grace_s=float("nan")), dict(cpu_s=-5)])
def test_limits_reject_nonsense(bad) -> None:
    with pytest.raises(SpecError):
        Limits(**bad)


def test_cpu_limit_defaults_to_a_backstop_above_wall_time() -> None:
    assert Limits(time_s=100).effective_cpu_s == 160
    assert Limits(time_s=100, cpu_s=7).effective_cpu_s == 7


@pytest.mark.parametrize(
    "status, attempt, retry_failed, expected",
    [
        ("pending", 0, False, True),
        ("ok", 1, True, False),
        ("invalid_model", 1, True, False),
        ("timeout", 1, False, False),
        ("timeout", 1, True, True),
        ("oom", 2, True, True),
        ("lost", 1, False, True),
        ("interrupted", 2, False, True),
        ("lost", 3, False, False),  # three attempts and out
        ("running", 1, True, False),
    ],
)
def test_resume_rules(status, attempt, retry_failed, expected) -> None:
    assert needs_run(status, attempt, retry_failed) is expected


def test_interleave_round_robins_methods() -> None:
    jobs = [PlannedJob(JobPayload(spec(method=m, seed=i), 1, "t")) for m in ("a", "b") for i in range(3)]
    assert [j.spec.method for j in interleave(jobs)] == ["a", "b", "a", "b", "a", "b"]


def test_store_refuses_a_newer_schema(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    Store(ws, create=True).close()
    with sqlite3.connect(ws.db_path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(StoreError, match="newer than this srtui understands"):
        Store(ws)
    with pytest.raises(StoreError, match="newer than this srtui understands"):
        Store(ws, readonly=True)


def test_a_workspace_of_the_previous_schema_reads_then_migrates(tmp_path: Path) -> None:
    """v3 (before method_notes): `srtui results` reads it read-only as is; a writer migrates it."""
    import json
    import subprocess
    import sys

    from srtui.results.store import schema

    ws = Workspace(tmp_path / "ws").ensure()
    Store(ws, create=True).close()
    with sqlite3.connect(ws.db_path) as conn:
        for kind, name in conn.execute(  # made by v8
            "SELECT type, name FROM sqlite_master WHERE name GLOB 'job_c*' OR name GLOB 'run_counts*' "
            "OR name GLOB 'jobs_by_*'"
        ).fetchall():
            conn.execute(f"DROP {kind.upper()} IF EXISTS {name}")
        for newer in ("method_notes", "energy_j", "energy_method", "protocol"):  # added by v4, v6 and v10
            conn.execute(f"ALTER TABLE jobs DROP COLUMN {newer}")
        conn.execute("ALTER TABLE runs DROP COLUMN queued")  # added by v7
        conn.execute("PRAGMA user_version = 3")
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws.root)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and json.loads(out.stdout) == [], out.stderr
    store = Store(ws)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    assert {"method_notes", "energy_j", "energy_method"} <= {
        row[1] for row in store.conn.execute("PRAGMA table_info(jobs)")
    }


def test_v5_migration_keeps_the_review_events_append_only(tmp_path: Path) -> None:
    """v4 -> v5 rebuilds review_events (a wider CHECK): rows, numbering and triggers survive."""
    from srtui.results.store import schema

    ws = Workspace(tmp_path / "ws").ensure()
    with sqlite3.connect(ws.db_path) as conn:
        for step in schema.MIGRATIONS[:4]:
            step(conn)
        conn.execute("PRAGMA user_version = 4")
        conn.execute("INSERT INTO review_sessions (name, created_at, status, settings) VALUES ('s', 't', 'open', '{}')")
        for event in ("create", "close"):
            conn.execute("INSERT INTO review_events (session, event, at) VALUES ('s', ?, 't')", (event,))
    store = Store(ws)
    with store.transaction() as c:
        c.execute("INSERT INTO review_events (session, event, at) VALUES ('s', 'add_expert', 't')")
    assert store.conn.execute("SELECT seq, event FROM review_events").fetchall() == [
        (1, "create"),
        (2, "close"),
        (3, "add_expert"),
    ]
    for sql in ("UPDATE review_events SET actor = 'x'", "DELETE FROM review_events"):
        with pytest.raises(sqlite3.IntegrityError, match="cannot be"), store.transaction() as c:
            c.execute(sql)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"), store.transaction() as c:
        c.execute("INSERT INTO review_events (session, event, at) VALUES ('s', 'rename', 't')")
    store.close()


def test_store_is_wal_and_records_attempts(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s = spec()
    assert store.plan([s]) == {s.job_id: ("pending", 0)}
    assert store.claim(s.job_id, 1, "run1", "t0", "host")
    assert not store.claim(s.job_id, 1, "run2", "t0", "host")  # a second driver cannot take it
    store.record(s.job_id, {"status": "timeout", "attempt": 1, "run_id": "run1", "wall_s": 3.0}, None)
    assert store.plan([s]) == {s.job_id: ("timeout", 1)}
    assert [a["status"] for a in store.attempts(s.job_id)] == ["timeout"]
    store.close()


def test_not_a_database(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    ws.db_path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable srtui database"):
        Store(ws)


def test_workspace_resolution(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SRTUI_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve(None).root == tmp_path / "srtui-workspace"
    monkeypatch.setenv("SRTUI_WORKSPACE", str(tmp_path / "env"))
    assert resolve(None).root == tmp_path / "env"
    assert resolve(tmp_path / "flag").root == tmp_path / "flag"


def test_network_filesystem_is_refused(monkeypatch, tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    monkeypatch.setattr(Workspace, "filesystem_type", lambda self: "nfs4")
    with pytest.raises(WorkspaceError, match="network file system"):
        ws.refuse_network_filesystem()


def test_capped_reader_keeps_head_and_tail() -> None:
    data = b"H" * (supervise.LOG_CAP) + b"M" * 500_000 + b"T" * (supervise.TAIL_KEEP)
    reader = supervise.CappedReader(io.BufferedReader(io.BytesIO(data)))
    reader.run()
    out = reader.value()
    assert len(out) <= supervise.LOG_CAP + 100
    assert out.startswith(b"H" * 1000) and out.endswith(b"T" * supervise.TAIL_KEEP)
    assert b"bytes dropped]" in out


def test_workers_find_this_engine_first_on_their_path() -> None:
    """The first PYTHONPATH entry of a worker is the folder holding this ``srtui`` package (not
    a folder inside it, whose modules would shadow top-level ones), wherever the supervisor sits."""
    import srtui
    import srtui.engine

    first = worker_env.worker_environment()["PYTHONPATH"].split(os.pathsep)[0]
    assert Path(first, "srtui", "__init__.py").resolve() == Path(srtui.__file__).resolve()
    assert Path(first, "srtui", "engine", "__init__.py").resolve() == Path(srtui.engine.__file__).resolve()


def test_time_budget_leaves_room() -> None:
    assert Limits(time_s=10).fit_budget == pytest.approx(8.0)
    assert Limits(time_s=3600).fit_budget == pytest.approx(3569.0)
    assert 0 < Limits(time_s=1).fit_budget < 1
    # the worker's start-up comes out of it; the nominal figure (the work a method sizes) stays
    left = Limits(time_s=10).fit_budget.after(3.0)
    assert isinstance(left, FitBudget) and left == pytest.approx(5.0) and left.nominal == pytest.approx(8.0)
    assert Limits(time_s=10).fit_budget.after(60.0) == pytest.approx(0.8)  # never under a tenth


def test_limits_cross_into_the_job_from_one_function() -> None:
    env, seal_limits = Limits(time_s=100, mem_mb=500, grace_s=2).crossing()
    assert env == {CPU_ENV: "160"}  # RLIMIT_CPU's seconds: Limits.effective_cpu_s
    assert seal_limits == {"wall_s": 100 + 2 + WATCHDOG_MARGIN_S, "mem_mb": 500}
    assert Limits(time_s=100).over(time_s=None, mem_mb=7) == Limits(time_s=100, mem_mb=7)
    with pytest.raises(SpecError, match="unknown limit"):
        Limits().over(time_limit=5)
    with pytest.raises(SpecError):
        Limits().over(time_s=-1)


def test_tree_tracker_counts_an_adopted_escapee_at_every_poll() -> None:
    """A child of ours with the job's token (an orphan the subreaper adopted) holding 200 MB:
    its memory must count at every poll, not only the first one that sees it."""
    import os
    import subprocess
    import sys
    import time

    from srtui.engine.process import tree

    env = {**os.environ, tree.TOKEN_ENV: "ws:test-escapee"}
    root = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    hog = subprocess.Popen(
        [sys.executable, "-c", "b = bytearray(200 * 2**20); print(flush=True); import time; time.sleep(30)"],
        env=env,
        stdout=subprocess.PIPE,
    )
    try:
        assert hog.stdout is not None
        hog.stdout.readline()  # the 200 MB are allocated
        tracker = tree.TreeTracker(root.pid, "ws:test-escapee")
        polls = []
        for _ in range(3):
            time.sleep(0.05)
            polls.append(tracker.poll())
        assert all(total > 200 * 2**20 for total in polls), polls
        assert hog.pid in tracker.seen and root.pid in tracker.seen
    finally:
        for p in (root, hog):
            p.kill()
            p.wait()


def test_job_data_holds_only_what_the_method_may_see() -> None:
    """A job's data.npz (srtui.engine.process.job_files.job_view): X_train, y_train, X_test, the feature
    names and the training rows' scaling statistics; never y_test, the row numbers or the truth."""
    import numpy as np

    from srtui.runs.data import npz_bytes

    rng = np.random.default_rng(0)
    arrays = {
        "X_train": rng.normal(size=(5, 2)),
        "y_train": rng.normal(size=5),
        "X_test": rng.normal(size=(3, 2)),
        "y_test": rng.normal(size=3),
        "train_index": np.arange(5),
        "test_index": np.arange(5, 8),
        "feature_names": np.array(["a", "b"]),
        "scale_y_mean": np.array(0.5),
    }
    view = job_files.job_view(npz_bytes(arrays))
    with np.load(io.BytesIO(view), allow_pickle=False) as z:
        assert sorted(z.files) == ["X_test", "X_train", "feature_names", "scale_y_mean", "y_train"]
        assert np.array_equal(z["X_train"], arrays["X_train"])
    assert arrays["y_test"].tobytes() not in view
    with pytest.raises(KeyError):
        job_files.job_view(npz_bytes({"X_train": arrays["X_train"]}))


def test_worker_environment_is_an_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRTUI_SEAL_UNIT_SECRET", "x")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = worker_env.worker_environment()
    assert "SRTUI_SEAL_UNIT_SECRET" not in env
    assert env["LC_ALL"] == "C.UTF-8" and env["HOME"] == "/tmp"


def test_v11_migration_lets_a_job_be_recorded_disk(tmp_path: Path) -> None:
    """v10 -> v11 widens the jobs table's status check in place: 'disk' is stored, anything
    unknown is still refused, and the rows of v10 stay as they were."""
    from srtui.results.store import schema

    ws = Workspace(tmp_path / "ws").ensure()
    with sqlite3.connect(ws.db_path) as conn:
        for step in schema.MIGRATIONS[:10]:
            step(conn)
        conn.execute("PRAGMA user_version = 10")
        conn.commit()
    store = Store(ws)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'jobs'").fetchone()[0]
    assert "'invalid_model','disk')" in sql
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cols = "job_id, suite, task, method, params, seed, limits, data_fingerprint, method_version, spec, status"
    insert = f"INSERT INTO jobs ({cols}) VALUES (?, 's', 't', 'm', '{{}}', 0, '{{}}', 'f', 'v', '{{}}', ?)"
    store.conn.execute(insert, ("a", "disk"))
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(insert, ("b", "bogus"))
    store.close()


def test_a_job_s_versions_are_its_interpreter_s_as_the_driver_asks_them() -> None:
    """Issue 58: provenance names the versions of the packages that matter, asked of the job's own
    interpreter by the driver (a job's own 'versions' note is replaced)."""
    import importlib.metadata
    import sys

    from srtui.engine.process.measure import interpreter_versions, provenance

    found = interpreter_versions(sys.executable)
    assert found["numpy"] == importlib.metadata.version("numpy")
    assert found["scikit-learn"] == importlib.metadata.version("scikit-learn")
    notes = provenance({"versions": {"scikit-learn": "forged"}, "complexity": 3.0}, sys.executable, "sealed", False)
    assert notes["versions"] == found and notes["complexity"] == 3.0
    assert interpreter_versions("/nonexistent/python") == {}
