"""Metrics as tasks of the run's backend (srtui.results.metrics.tasks): computed in the run's slots
behind the jobs, on the workers under --backend dask, equal to the post-run pass, resumed after a
killed driver without recomputing anything stored, and shown by `srtui status` while they run."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import poll_db, srtui, start_srtui

FAST = ("smoke", "--methods", "linear,poly2", "--jobs", "2", "--time-limit", "120")


def metric_values(workspace: Path) -> dict[tuple, tuple]:
    """(job id, metric) -> (value, detail) of every stored metric but the bookkeeping rows."""
    with sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT job_id, name, value, detail FROM metrics WHERE name NOT LIKE '\\_%' ESCAPE '\\'")
        return {(j, n): (v, d) for j, n, v, d in rows}


def where(workspace: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT job_id, detail FROM metrics WHERE name = '_where'"))


def post_run_pass(workspace: Path, dest: Path) -> Path:
    """A copy of ``workspace`` whose metrics are computed again the old way: after the run, in
    the driver's metrics pool (srtui.results.metrics.compute.compute_for_store, what `srtui rescore` does here)."""
    shutil.copytree(workspace, dest)
    with sqlite3.connect(dest / "srtui.db") as conn:
        conn.execute("DELETE FROM metrics")
        conn.execute("DELETE FROM expr_cache")
    srtui("rescore", "--workspace", str(dest), check=True)
    return dest


def same_values(a: dict[tuple, tuple], b: dict[tuple, tuple]) -> None:
    assert a.keys() == b.keys() and a
    for key, (value, detail) in a.items():
        other, other_detail = b[key]
        assert detail == other_detail, key
        if value is None or other is None:
            assert value is other, key
        else:
            assert value == pytest.approx(other, rel=1e-12, abs=1e-12), key


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_run_computes_its_metrics_in_its_slots_equal_to_the_post_run_pass(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = srtui("run", *FAST, "--workspace", str(ws), check=True)
    assert "metrics of 4 job(s) computed in the run's slots" in proc.stderr
    places = where(ws)
    assert len(places) == 4 and all(" slot " in p for p in places.values()), places
    same_values(metric_values(ws), metric_values(post_run_pass(ws, tmp_path / "ref")))
    again = srtui("run", *FAST, "--workspace", str(ws), check=True)  # nothing to run, nothing to compute
    assert "computed in the run's slots" not in again.stderr
    assert where(ws) == places


@pytest.mark.slow
def test_on_a_local_cluster_the_metrics_are_computed_on_the_workers(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the dask backend needs dask[distributed]")
    ws = tmp_path / "dask"
    srtui("run", *FAST, "--cluster", "local", "--workspace", str(ws), check=True)
    places = where(ws)
    assert len(places) == 4 and all(p.startswith("dask worker ") for p in places.values()), places
    reference = metric_values(post_run_pass(ws, tmp_path / "ref"))
    same_values(metric_values(ws), reference)
    out = srtui("rescore", "--force", "--cluster", "local", "--workers", "2", "--workspace", str(ws), check=True)
    assert "metrics of 4 of 4 job(s) computed on dask worker" in out.stdout
    same_values(metric_values(ws), reference)
    assert all(p.startswith("dask worker ") for p in where(ws).values())


@pytest.mark.slow
def test_a_driver_killed_in_the_metrics_resumes_them_and_recomputes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    # 96 jobs: their metrics outlast the `srtui status` call below, however fast the slots are
    args = ("smoke", "--methods", "linear,poly2", "--seeds", "24", "--jobs", "2", "--workspace", str(ws))
    driver = start_srtui("run", *args)
    done_sql = "SELECT count(*) FROM metrics WHERE name = '_version'"
    shown: list[dict] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and driver.poll() is None:
        rows = poll_db(ws, done_sql)
        if rows and rows[0][0] >= 3:
            status = srtui("status", "--json", "--workspace", str(ws))
            if status.returncode == 0:
                shown = json.loads(status.stdout).get("metrics") or shown
            break
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    [(done,)] = poll_db(ws, done_sql)
    assert 3 <= done < 96, f"the metrics were not caught half-way ({done} of 96 done)"
    assert shown and shown[0]["suite"] == "smoke" and shown[0]["done"] <= shown[0]["total"], shown
    kept = poll_db(ws, "SELECT rowid, job_id, name, value FROM metrics ORDER BY rowid")
    cached = poll_db(ws, "SELECT rowid, key FROM expr_cache ORDER BY rowid")
    srtui("run", *args, check=True)
    after = poll_db(ws, "SELECT rowid, job_id, name, value FROM metrics ORDER BY rowid")
    assert set(kept) <= set(after), "stored metrics were written again"
    assert set(cached) <= set(poll_db(ws, "SELECT rowid, key FROM expr_cache ORDER BY rowid"))
    [(finished,)] = poll_db(ws, "SELECT count(*) FROM jobs WHERE status = 'ok'")
    [(complete,)] = poll_db(ws, done_sql)
    assert finished == complete == 96
    same_values(metric_values(ws), metric_values(post_run_pass(ws, tmp_path / "ref")))


def test_the_monitor_and_status_show_a_live_runs_metrics(tmp_path: Path) -> None:
    from test_tui_seed import FIXED_NOW, seed_demo

    from srtui.engine.process.tree import driver_identity
    from srtui.results.metrics.tasks import MetricsFeed
    from srtui.results.store.queries import Reader
    from srtui.results.store.store import Store
    from srtui.views import monitor_snapshot

    ws = seed_demo(tmp_path / "ws")
    driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # the run's live driver
    try:
        with sqlite3.connect(ws.db_path) as conn:
            conn.execute("UPDATE runs SET driver = ?", (driver_identity(driver.pid),))
            [(run_id, suite)] = conn.execute("SELECT run_id, suite FROM runs WHERE status = 'running'").fetchall()
        store = Store(ws)
        queued = MetricsFeed(store, suite, run_id=run_id).seed(only_missing=False)  # as the driver's run does
        store.close()
        [shown] = monitor_snapshot(Reader(ws), now=lambda: FIXED_NOW).metrics
        assert (shown.suite, shown.done, shown.total) == (suite, 0, queued) and queued > 0
        status = json.loads(srtui("status", "--json", "--workspace", str(ws.root), check=True).stdout)
        assert status["metrics"] == [{"run_id": run_id, "suite": suite, "done": 0, "total": queued, "eta_s": None}]
        assert f"metrics: {suite} 0/{queued} jobs" in srtui("status", "--workspace", str(ws.root), check=True).stdout
    finally:
        driver.kill()
        driver.wait()
