"""Sealed jobs 2 (#53), one hostile folder at a time through the real `srtui run`: the session
keyring of whoever starts srtui reaches no job, and what a job holds outside its processes'
memory (its /tmp, /dev/shm, memfds) or on disk (its folder) ends it with ``oom`` or ``disk``.
The battery (tests/e2e/test_seal_battery.py) runs the same attacks at once beside honest jobs.

docs/untrusted-jobs.md cites these tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, results_json
from test_seal_battery import HOLDS, HOSTILE, KEY_SECRET, TASK, secret_in_logs, under_keyring

SUITE = """name = "held"
tasks = ["{task}"]
methods = ["linear"]
seeds = [2082]
scoring = "srbench2022-synthetic"
[limits]
time_s = 120
mem_mb = 400
disk_mb = 1024
grace_s = 3
"""


def _folder(root: Path, name: str, body: str, ws: str = "/nowhere") -> Path:
    folder = root / "methods" / f"evil_{name}"
    folder.mkdir(parents=True)
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    text = HOSTILE.format(attack=name, ws=ws, port=9, secret="-", mark=root.name, body=indented, key_secret=KEY_SECRET)
    (folder / "regressor.py").write_text(text)
    return folder


def _run(
    tmp_path: Path, folders: list[Path], launcher: str, keyring: bool = False, extra_env: dict[str, str] | None = None
) -> Path:
    suite = tmp_path / "held.toml"
    suite.write_text(SUITE.format(task=TASK))
    ws = tmp_path / "ws"
    cmd = [sys.executable, "-m", "srtui", "run", str(suite), "--methods", ",".join(f.name for f in folders)]
    cmd += [a for f in folders for a in ("--method-dir", str(f))]
    cmd += ["--workspace", str(ws), "--launcher", launcher, "--jobs", "2", "--no-metrics"]
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "SRTUI_ISOLATION")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra_env or {})
    proc = subprocess.run(
        under_keyring(cmd) if keyring else cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return ws


@pytest.mark.parametrize("launcher", ["fork", pytest.param("exec", marks=pytest.mark.slow)])
def test_a_secret_in_the_starters_session_keyring_is_in_no_job_log(tmp_path: Path, launcher: str) -> None:
    """srtui started in a session keyring holding a user key (real keyctl): the job asks for it
    by syscall, by the keyctl tool and in /proc/keys, prints all it got, and the secret is in no
    log; the job itself ends ok (its fit goes on)."""
    from test_seal_battery import ATTACKS

    ws = _run(tmp_path, [_folder(tmp_path, "read_keyring", ATTACKS["read_keyring"])], launcher, keyring=True)
    assert not secret_in_logs(ws)
    logs = "".join(p.read_text(errors="replace") for p in (ws / "logs").glob("*.stdout"))
    assert '"attack": "read_keyring", "got": false' in logs, logs[-2000:]
    assert [r["status"] for r in results_json(ws)] == ["ok"]


@pytest.mark.slow  # two jobs writing 2 GB: over 8 s on a quiet machine
@pytest.mark.parametrize("launcher", ["fork", "exec"])
def test_a_job_over_its_memory_in_tmp_or_its_disk_limit_ends_oom_or_disk(tmp_path: Path, launcher: str) -> None:
    """mem_mb = 400: 2 GB written to /tmp (64 MB chunks) ends ``oom``; disk_mb = 1024: 3 x 700 MB
    into the job's folder ends ``disk``; each with its detail, and the folder is gone."""
    folders = [_folder(tmp_path, name, HOLDS[name][1]) for name in ("fill_tmp", "fill_disk")]
    ws = _run(tmp_path, folders, launcher)
    rows = {r["method"]: r for r in results_json(ws)}
    assert rows["evil_fill_tmp"]["status"] == "oom", rows["evil_fill_tmp"]
    assert rows["evil_fill_disk"]["status"] == "disk", rows["evil_fill_disk"]
    assert "/tmp, /dev/shm and memfds" in rows["evil_fill_tmp"]["limit_detail"]
    assert "limit 1024 MB" in rows["evil_fill_disk"]["limit_detail"]
    assert not list((ws / "cache" / "jobs").glob("*"))


@pytest.mark.parametrize("launcher", ["fork", pytest.param("exec", marks=pytest.mark.slow)])
def test_figures_a_job_rewrites_at_its_exit_are_not_srtuis(tmp_path: Path, launcher: str) -> None:
    """A method that rewrites result.json at its exit (a 1 ns fit, its own energy and provenance)
    is stored with the driver's fit time, energy and provenance; its own timer as reported_fit_s."""
    from test_seal_battery import ATTACKS

    ws = _run(tmp_path, [_folder(tmp_path, "forge_result", ATTACKS["forge_result"])], launcher)
    (row,) = results_json(ws)
    assert row["status"] == "ok", row
    assert row["fit_s"] >= 0.4 and row["energy_j"] > 1e-6, row
    assert row["energy_method"] in ("rapl", "estimate")
    notes = row["method_notes"]
    assert notes["python"] == sys.executable and notes["isolation"] in ("namespaces", "fallback"), notes
    assert "network" not in notes and notes["reported_fit_s"] == 1e-9, notes


@pytest.mark.parametrize("launcher", ["fork", pytest.param("exec", marks=pytest.mark.slow)])
def test_a_fallback_job_of_root_runs_as_a_uid_of_its_own(tmp_path: Path, launcher: str) -> None:
    """SRTUI_ISOLATION=fallback under root: the job is not root, cannot write a root-owned
    folder, nor open the memory or environment of the driver or its fork server; it still fits
    (its Python under /root is reached through a mount namespace of its own)."""
    if os.geteuid() != 0:
        pytest.skip("the fallback as root needs root")
    from test_seal_battery import ATTACKS

    closed = tmp_path / "root-owned"
    closed.mkdir(mode=0o755)
    folder = _folder(tmp_path, "fallback_reach", ATTACKS["fallback_reach"], ws=str(closed))
    ws = _run(tmp_path, [folder], launcher, extra_env={"SRTUI_ISOLATION": "fallback"})
    logs = "".join(p.read_text(errors="replace") for p in (ws / "logs").glob("*.stdout"))
    assert '"attack": "fallback_reach", "got": false' in logs, logs[-2000:]
    assert not (closed / "planted").exists()
    assert [r["status"] for r in results_json(ws)] == ["ok"]
