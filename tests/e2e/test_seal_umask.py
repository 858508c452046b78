"""A driver with a hardened umask (077, as many root shells have) still runs sealed jobs: the job's
inputs are written readable to the uid of its own a root driver gives it, and the root it builds
for itself is traversable (every job failed on /job before, forked or exec'd)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def _srtui(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI with the driver's umask 077."""
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    env.update({"PYTHONPATH": str(REPO), "SRTUI_KEEP_SERVER_S": "0"})
    return subprocess.run(
        [sys.executable, "-m", "srtui", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp,
        env=env,
        umask=0o077,
    )


@pytest.mark.parametrize("launcher", ["fork", "exec"])
def test_jobs_run_under_a_drivers_umask_077(tmp_path: Path, launcher: str) -> None:
    argv = ["run", "smoke", "--methods", "linear", "--tasks", "smoke-linear", "--seeds", "1", "--launcher", launcher]
    proc = _srtui(tmp_path, *argv, "-w", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr
    check = _srtui(tmp_path, "methods", "check", "linear", "--json")
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout)
    assert (found["status"], found["error"]) == ("ok", None)
