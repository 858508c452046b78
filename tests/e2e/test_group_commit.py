"""Issue 56: finished jobs are recorded by group commit (srtui.engine.backends.recorder, the store's
``batch``), and durability is unchanged: a job the driver reported finished is in the store, even
when the driver is then killed with SIGKILL; a record that fails inside a batch is undone alone."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import srtui, start_srtui

from srtui.engine.process.job_io import now_iso
from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store

#: a finished job as the plain (piped) progress prints it: "[3/60] smoke-linear  probe-noop  seed 7  ok  0.0 s"
REPORTED = re.compile(r"^\[\d+/\d+\] \S+\s+probe-noop\s+seed (\d+)\s+(\w+)\s")


@pytest.mark.slow  # a real run killed mid-way, then checked
def test_a_driver_killed_with_sigkill_loses_no_job_it_reported(workspace: Path, suite_file) -> None:
    suite = suite_file(name="kill9", methods=("probe-noop",), seeds=tuple(range(1, 61)))
    args = ("run", str(suite), "--jobs", "2", "--no-metrics", "--workspace", str(workspace))
    driver = start_srtui(*args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    reported: dict[int, str] = {}
    enough = threading.Event()

    def read() -> None:  # every line the driver printed before it died
        assert driver.stdout is not None
        for line in driver.stdout:
            found = REPORTED.match(line.strip())
            if found:
                reported[int(found[1])] = found[2]
                if len(reported) >= 12:
                    enough.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert enough.wait(300), f"the run reported {len(reported)} jobs"
    driver.send_signal(signal.SIGKILL)  # mid-way: jobs finished, some in flight, none told after this
    driver.wait()
    reader.join(30)
    with sqlite3.connect(workspace / "srtui.db") as conn:
        stored = {
            seed: (status, ended) for seed, status, ended in conn.execute("SELECT seed, status, ended_at FROM jobs")
        }
        attempts = {row[0] for row in conn.execute("SELECT j.seed FROM attempts a JOIN jobs j USING (job_id)")}
    assert len(reported) < 60, "the run ended before it was killed"
    for seed, status in reported.items():  # each reported job is recorded as it was reported
        assert stored[seed][0] == status and stored[seed][1], (seed, status, stored[seed])
        assert seed in attempts
    # and the jobs not reported are either recorded or left `running` for the next run (never half-written)
    assert {s for s, _ in stored.values()} <= {"ok", "running", "pending"}
    # the next run does the rest, and runs no reported job again
    srtui("run", str(suite), "--jobs", "2", "--no-metrics", "--workspace", str(workspace), check=True)
    with sqlite3.connect(workspace / "srtui.db") as conn:
        ran = dict(conn.execute("SELECT j.seed, count(*) FROM attempts a JOIN jobs j USING (job_id) GROUP BY j.seed"))
        assert conn.execute("SELECT count(*) FROM jobs WHERE status = 'ok'").fetchone()[0] == 60
    assert all(ran[seed] == 1 for seed in reported), ran


def _planned(store: Store, n: int) -> tuple[list[str], str]:
    specs = [
        JobSpec("t", "smoke-linear", "linear", seed, Limits(time_s=60, mem_mb=2000), "fp", "1") for seed in range(n)
    ]
    store.plan(specs)
    run_id = store.begin_run("t", "driver", "host", ["srtui"], now_iso())
    for spec in specs:
        assert store.claim(spec.job_id, 1, run_id, now_iso(), "host")
    return [s.job_id for s in specs], run_id


def _record(store: Store, job_id: str, run_id: str, status: str = "ok") -> None:
    fields = {"attempt": 1, "status": status, "run_id": run_id, "started_at": now_iso(), "ended_at": now_iso()}
    store.record(job_id, fields, None)


def test_a_batch_is_one_commit_and_a_failing_record_in_it_is_undone_alone(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    jobs, run_id = _planned(store, 3)
    other = sqlite3.connect(ws.db_path)  # another process's view: sees only what is committed

    def ended() -> int:
        return other.execute("SELECT count(*) FROM jobs WHERE status = 'ok'").fetchone()[0]

    with store.batch():
        _record(store, jobs[0], run_id)
        with pytest.raises(sqlite3.Error), store.transaction() as c:  # one job's write that fails halfway
            c.execute("UPDATE jobs SET status = 'ok' WHERE job_id = ?", (jobs[1],))
            c.execute("INSERT INTO no_such_table VALUES (1)")
        _record(store, jobs[2], run_id)
        assert ended() == 0  # nothing is durable, or visible, before the batch's commit
    assert ended() == 2
    statuses = dict(other.execute("SELECT job_id, status FROM jobs"))
    assert statuses == {jobs[0]: "ok", jobs[1]: "running", jobs[2]: "ok"}
    other.close()
    store.close()


def test_a_batch_that_fails_records_nothing_of_it(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    jobs, run_id = _planned(store, 2)
    with pytest.raises(RuntimeError), store.batch():
        _record(store, jobs[0], run_id)
        raise RuntimeError("the driver fails before the commit")
    assert dict(store.conn.execute("SELECT job_id, status FROM jobs")) == dict.fromkeys(jobs, "running")
    with store.transaction() as c:  # the store goes on as usual after it
        c.execute("UPDATE jobs SET status = 'ok' WHERE job_id = ?", (jobs[0],))
    assert store.conn.execute("SELECT count(*) FROM jobs WHERE status = 'ok'").fetchone()[0] == 1
    store.close()
