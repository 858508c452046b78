"""A tuning job lost past the retry limit: its configuration counts as failed on that fold and the
final fit goes on with the rest (it used to wait for the job forever); `srtui results --tuning`
says why the fold has no score."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from conftest import poll_db, srtui, start_srtui

from srtui.engine.scaling import SCALING_KEY
from srtui.engine.spec import MAX_AUTO_ATTEMPTS

SLOW = 600.0  # the second configuration sleeps (and ignores SIGTERM): it is running when killed
SUITE = f"""name = "lost"
tasks = ["smoke-linear"]
methods = ["probe-sleep"]
seeds = [1]
protocol = "srbench2025"
[params.probe-sleep]
seconds = 0
[tuning.grids]
probe-sleep = [{{ seconds = {SLOW} }}]
[tuning.limits]
time_s = 6
grace_s = 1
"""


def test_only_a_job_lost_on_its_last_attempt_is_given_up() -> None:
    from srtui.results.store.tuning import JobScore, failure_text, given_up

    assert given_up(JobScore("lost", None, MAX_AUTO_ATTEMPTS, "the driver running this job died"))
    assert given_up(JobScore("interrupted", None, MAX_AUTO_ATTEMPTS))
    assert not given_up(JobScore("lost", None, MAX_AUTO_ATTEMPTS - 1))  # the next run retries it
    assert not given_up(JobScore("error", None, MAX_AUTO_ATTEMPTS))  # ended: a failed fold anyway
    assert failure_text(JobScore("lost", None, 3, "the driver died")) == "lost after 3 attempts: the driver died"
    assert failure_text(JobScore("timeout", None, 1)) == "timeout"


def _kill_while_the_slow_job_runs(suite: Path, workspace: Path, attempt: int) -> None:
    """Start a driver, SIGKILL it while the slow job runs its ``attempt`` (the row of the attempt
    killed before stays 'running' until this driver's recovery records it lost)."""
    driver = start_srtui("run", str(suite), "--jobs", "1", "--workspace", str(workspace))
    deadline = time.monotonic() + 180
    running: list[tuple] = []
    while not running and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
        running = poll_db(
            workspace,
            f"SELECT job_id FROM jobs WHERE status = 'running' AND attempt = {attempt} AND params LIKE '%{SLOW}%'",
        )
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    assert running, "the slow tuning job never ran"


@pytest.mark.slow
def test_a_tuning_job_lost_past_the_retry_limit_does_not_hold_back_the_final_job(
    workspace: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "lost.toml"
    suite.write_text(SUITE)
    for attempt in range(1, MAX_AUTO_ATTEMPTS + 1):  # the same job dies with its driver on each attempt
        _kill_while_the_slow_job_runs(suite, workspace, attempt)
    # this run records the third attempt lost, does not start it again, and ends the search
    srtui("run", str(suite), "--jobs", "1", "--workspace", str(workspace), check=True, timeout=600)
    lost = poll_db(workspace, "SELECT job_id, attempt FROM jobs WHERE status = 'lost'")
    assert len(lost) == 1 and lost[0][1] == MAX_AUTO_ATTEMPTS
    rows = json.loads(
        srtui("results", "--format", "json", "--tuning", "--workspace", str(workspace), check=True).stdout
    )
    finals = [r for r in rows if r["suite"] == "lost"]
    tuning = [r for r in rows if r["suite"] == "lost@tuning"]
    assert len(finals) == 1 and finals[0]["status"] == "ok"
    # srbench2025 scales X and y (#40): every job of the run, tuning or final, carries its scaling
    assert finals[0]["params"].pop(SCALING_KEY) == "xy" and finals[0]["params"] == {"seconds": 0}
    assert len(tuning) == 2 * 5 and all(r["params"][SCALING_KEY] == "xy" for r in tuning)
    candidates = finals[0]["tuning"]["iterations"][0]["candidates"]
    slow = [c for c in candidates if c["params"] == {"seconds": SLOW, SCALING_KEY: "xy"}]
    assert len(slow) == 1 and slow[0]["mean_r2"] is None and len(slow[0]["failed"]) == 5
    whys = [f["why"] for f in slow[0]["failed"]]
    assert sum(w.startswith(f"lost after {MAX_AUTO_ATTEMPTS} attempts") for w in whys) == 1
    assert sum(w.startswith("timeout") for w in whys) == 4  # the other folds ran out of time
    text = srtui("results", "--tuning", "--suite", "lost", "--workspace", str(workspace), check=True).stdout
    assert f"lost after {MAX_AUTO_ATTEMPTS} attempts" in text
    # a resumed run finds everything ended: no attempt is added, the lost job stays as it is
    attempts = poll_db(workspace, "SELECT count(*) FROM attempts")
    srtui("run", str(suite), "--jobs", "1", "--workspace", str(workspace), check=True)
    assert poll_db(workspace, "SELECT count(*) FROM attempts") == attempts
    assert poll_db(workspace, "SELECT count(*) FROM jobs WHERE status = 'lost'") == [(1,)]


@pytest.mark.slow
def test_retry_failed_after_the_choice_does_not_reopen_the_search(workspace: Path, tmp_path: Path) -> None:
    """`--retry-failed` once the final job is planned: the failed tuning jobs are not re-run (their
    scores could choose a second final job for the same task, method and seed) and there stays
    one final job, whose saved scores are those it was chosen by."""
    suite = tmp_path / "settled.toml"
    suite.write_text(SUITE.replace('name = "lost"', 'name = "settled"').replace(f"seconds = {SLOW}", "seconds = 30"))
    srtui("run", str(suite), "--workspace", str(workspace), check=True, timeout=600)
    before = poll_db(
        workspace, "SELECT job_id, status, attempt FROM jobs WHERE suite = 'settled@tuning' ORDER BY job_id"
    )
    assert sum(status == "timeout" for _, status, _ in before) == 5  # the slow configuration, every fold
    dry = srtui("run", str(suite), "--retry-failed", "--dry-run", "--workspace", str(workspace), check=True)
    srtui("run", str(suite), "--retry-failed", "--workspace", str(workspace), check=True, timeout=600)
    after = poll_db(
        workspace, "SELECT job_id, status, attempt FROM jobs WHERE suite = 'settled@tuning' ORDER BY job_id"
    )
    assert after == before, dry.stdout
    finals = poll_db(workspace, "SELECT status, params FROM jobs WHERE suite = 'settled'")
    assert len(finals) == 1 and finals[0][0] == "ok"
    assert json.loads(finals[0][1]) == {"seconds": 0, SCALING_KEY: "xy"}  # srbench2025 scales X and y (#40)
