"""A method in its own Python environment: `srtui methods install` builds a venv from pinned
requirements, and the jobs' workers run that environment's interpreter.

The default tests use a stand-in environment (a real venv made here, whose packages are this
interpreter's, linked by a .pth file) to check the route: refusal when not installed, the install
steps, workers (forked from a server in that interpreter) running the environment's interpreter,
importing only srtui's engine from srtui. The `optional` test builds the real one (scikit-learn 0.24.1, a few minutes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import results_json, srtui

from srtui.engine.methods import registry

NAME = "sgd-sklearn024"


def test_a_method_whose_environment_is_missing_is_refused_before_any_job(workspace: Path, tmp_path: Path) -> None:
    env = {"SRTUI_ENVS": str(tmp_path / "envs")}
    out = srtui("run", "smoke", "--methods", NAME, "--seeds", "1", "-w", str(workspace), env=env)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert f"srtui methods install {NAME}" in out.stderr and str(tmp_path / "envs" / "sklearn-0.24.1") in out.stderr
    assert not (workspace / "srtui.db").exists()
    out = srtui("methods", "install", NAME, "--dry-run", env=env, check=True).stdout
    steps = [line for line in out.splitlines() if line.startswith("$ ")]
    folder = tmp_path / "envs" / "sklearn-0.24.1"
    assert steps[0] == f"$ {sys.executable} -P -m venv --clear {folder}"  # no cwd first on its path (#54)
    assert any("--no-build-isolation scikit-learn==0.24.1" in s for s in steps)
    assert len(steps) == 6 and all(s.startswith(f"$ {folder}/bin/python") for s in steps[1:])
    assert "pandas==1.5.3" in steps[4] and "import pandas" in steps[5]  # the contract layer, last


def _stand_in(envs: Path) -> Path:
    """A venv at the environment's place that sees this interpreter's packages (a .pth file)."""
    folder = envs / "sklearn-0.24.1"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    site = next((folder / "lib").glob("python3*/site-packages"))
    (site / "ours.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (folder / ".srtui-ready").write_text("ok")
    return folder


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_jobs_of_an_environment_method_run_its_interpreter(workspace: Path, tmp_path: Path) -> None:
    folder = _stand_in(tmp_path / "envs")
    env = {"SRTUI_ENVS": str(tmp_path / "envs")}
    listed = json.loads(srtui("methods", "list", "--json", env=env, check=True).stdout)
    assert next(m for m in listed if m["name"] == NAME)["installed"]
    srtui(
        "run",
        "smoke",
        "--methods",
        f"{NAME},sgd",
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "-w",
        str(workspace),
        env=env,
        check=True,
    )
    rows = {r["method"]: r for r in results_json(workspace) if r["task"] == "smoke-linear"}
    mine = rows[NAME]
    assert mine["status"] == "ok" and mine["r2_test"] > 0.9
    assert mine["method_notes"]["python"] == str(folder / "bin" / "python")
    assert mine["method_version"] == "environment sklearn-0.24.1"
    # the same data, seed and configuration as `sgd` in srtui's interpreter: the same model
    assert mine["r2_test"] == rows["sgd"]["r2_test"]
    # the package `srtui` itself imports (installed, or the checkout of an editable install)
    cli_package = subprocess.run(
        [sys.executable, "-c", "import srtui, os; print(os.path.dirname(srtui.__file__))"],
        cwd=workspace.parent, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert (folder / "srtui-path" / "srtui").resolve() == Path(cli_package).resolve()


@pytest.mark.optional
def test_the_real_environment_runs_scikit_learn_0_24_1(workspace: Path) -> None:
    method = registry.load(NAME)
    assert method.environment is not None
    if not method.environment.ready():
        srtui("methods", "install", NAME, check=True, timeout=3600)
    srtui(
        "run",
        "smoke",
        "--methods",
        NAME,
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "-w",
        str(workspace),
        check=True,
        timeout=600,
    )
    row = next(r for r in results_json(workspace) if r["task"] == "smoke-linear")
    assert row["status"] == "ok" and row["method_notes"]["scikit_learn"] == "0.24.1"
    # the environment's interpreter (a venv: its python may link to the same base binary as srtui's)
    assert Path(row["method_notes"]["python"]).is_relative_to(method.environment.folder)
    assert Path(row["method_notes"]["python"]).parent != Path(sys.executable).parent
