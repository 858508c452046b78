"""The driver's BLAS runs on one thread unless the user says otherwise (srtui.cli.one_blas_thread):
OpenBLAS's second thread spins after each call and took a third of a dry run's CPU on two cores,
CPU the jobs then lack. Real interpreters, real numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO

THREADS_AFTER_MAIN = """
import json, os, sys
from srtui.cli import main
sys.argv = ["srtui", "status", "-w", sys.argv[1]]
try:
    main()
except SystemExit:
    pass
import numpy, threadpoolctl
blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"env": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas}))
"""


def _run(env: dict[str, str], tmp: str) -> dict[str, Any]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    proc = subprocess.run(
        [sys.executable, "-c", THREADS_AFTER_MAIN, tmp],
        capture_output=True, text=True, timeout=300, cwd=REPO, env={**clean, **env},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_command_s_blas_has_one_thread_and_the_user_s_setting_wins(tmp_path: Path) -> None:
    mine = _run({}, str(tmp_path / "ws"))
    assert mine["env"] == "1" and mine["blas"] and set(mine["blas"]) == {1}
    theirs = _run({"OPENBLAS_NUM_THREADS": "2"}, str(tmp_path / "ws"))
    assert theirs["env"] == "2"
