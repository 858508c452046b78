"""Issue 27 (attacks after the merge): a fork-and-exit loop (a new pid each fork, a new session
every 64) outlived its job and the run, and its zombies piled up in the driver (~3000/s; it once
took the pid space). The job's processes are now held in a cgroup of their own and ended with
it, the zombies collected. The loop stops by itself after 20 s whatever happens (safety cap)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FALLBACK, poll_db, results_json
from probe_folders import as_launched

from srtui.engine.process import cgroups

CAP_S = 20  # the loop's own end: what the test proves srtui ends long before


def _beat(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _zombies_of(ppid: int) -> int:
    n = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z" and int(fields[1]) == ppid:
                n += 1
        except (OSError, IndexError, ValueError):
            continue
    return n


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.skipif(cgroups.base() is None, reason="no writable cgroup v2 here: the polling fallback is outrun")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("hold_s", [60, pytest.param(0, marks=pytest.mark.slow)], ids=["timed-out", "returns"])
def test_a_fork_loop_ends_with_its_job_and_leaves_no_zombies(
    workspace: Path, suite_file, job_writable: Path, contained_launcher: str, hold_s: int
) -> None:
    """The loop's fit returns (its worker's own kill of its tree runs), or sleeps until its time
    limit kills the worker (the loop is re-parented to the driver, as after any crash)."""
    beat = job_writable / "beat"  # the job runs as a uid of its own: a folder it may write in
    suite = suite_file(
        methods=("probe-forkloop", "probe-sleep"),
        limits={"time_s": 3, "grace_s": 0.5},
        params={"probe-forkloop": {"seconds": CAP_S, "hold_s": hold_s}, "probe-sleep": {"seconds": 2}},
    )
    env = {**os.environ, "SRTUI_PROBE_PIDFILE": str(beat), **FALLBACK}
    env.pop("SRTUI_WORKSPACE", None)
    args = ["run", "--launcher", contained_launcher, "--jobs", "1", str(suite), "--workspace", str(workspace)]
    driver = subprocess.Popen(
        [sys.executable, "-m", "srtui", *as_launched(args)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    started = time.monotonic()
    zombies = 0
    try:
        while not _beat(beat) and time.monotonic() < started + 60:
            time.sleep(0.05)
        assert _beat(beat), "the fork loop never started"
        started = time.monotonic()  # the loop's own clock (its server's start-up left out)
        query = "SELECT status FROM jobs WHERE method = 'probe-forkloop'"
        while time.monotonic() < started + 60:
            if [r for r in poll_db(workspace, query) if r[0] not in ("pending", "running")]:
                break
            time.sleep(0.1)
        ended = time.monotonic()
        assert ended - started < CAP_S - 5, "the loop's job did not end well before the loop's own end"
        last = _beat(beat)
        # the next job (probe-sleep, 4 s) runs meanwhile: no fork, no zombie of the loop may be left
        while time.monotonic() < ended + 2.0:
            zombies = max(zombies, _zombies_of(driver.pid))
            time.sleep(0.1)
        assert _beat(beat) == last, "the fork loop outlived its job"
        assert zombies < 100, f"{zombies} zombies piled up in the driver"
        _, err = driver.communicate(timeout=60)
        assert driver.returncode == 0, err
        assert _beat(beat) == last, "the fork loop outlived the run"
        rows = {r["method"]: r for r in results_json(workspace)}
        assert rows["probe-forkloop"]["status"] == ("ok" if hold_s == 0 else "timeout"), rows
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
