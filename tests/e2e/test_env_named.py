"""`srtui env` and `srtui run --env NAME`: method folders and files run in a named environment
built from a pinned spec (engine/methods/env_specs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import srtui
from test_srbench2021_method_files import KERNEL_RIDGE


def test_env_list_names_the_specs_with_what_their_source_pinned_and_left_unpinned(tmp_path: Path) -> None:
    rows = {r["name"]: r for r in json.loads(srtui("env", "list", "--json", check=True).stdout)}
    assert {"sklearn-0.24.1", "srbench2021"} <= set(rows)
    assert any("scikit-learn==0.24.1" in step for step in rows["sklearn-0.24.1"]["pinned"])
    assert any(u.startswith("xgboost") for u in rows["srbench2021"]["unpinned_in_source"])
    assert rows["sklearn-0.24.1"]["pinned_in_source"] == ["scikit-learn=0.24.1"]
    assert "numpy==1.26.4" in rows["srbench2025-xgboost"]["pinned_in_source"]  # SRBench 2.0's pip-installable
    none_built = {"SRTUI_ENVS": str(tmp_path)}  # (a built one is only extended: test_env_contract.py)
    out = srtui("env", "create", "sklearn-0.24.1", "--dry-run", env=none_built, check=True).stdout
    assert "scikit-learn==0.24.1" in out and "--no-build-isolation" in out


def test_an_unknown_env_or_one_without_a_method_folder_is_refused(tmp_path: Path, workspace: Path) -> None:
    file = tmp_path / "KernelRidge.py"
    file.write_text(KERNEL_RIDGE)
    unknown = srtui("run", "smoke", "--env", "nope", "--method-dir", str(file), "--workspace", str(workspace))
    assert unknown.returncode != 0 and "unknown environment 'nope'" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    alone = srtui("run", "smoke", "--env", "sklearn-0.24.1", "--workspace", str(workspace))
    assert alone.returncode != 0 and "no --method-dir method" in alone.stderr
    assert not (workspace / "srtui.db").exists()


def test_a_2021_file_runs_in_scikit_learn_0_24_1(tmp_path: Path, workspace: Path) -> None:
    from srtui.engine.methods.env_specs import SPECS

    env = SPECS["sklearn-0.24.1"].environment
    if not env.ready():
        pytest.skip(f"needs the environment at {env.folder} (srtui env create sklearn-0.24.1)")
    file = tmp_path / "KernelRidge.py"
    file.write_text(KERNEL_RIDGE)
    srtui(
        "run", "smoke", "--methods", "KernelRidge", "--method-dir", str(file), "--env", "sklearn-0.24.1",
        "--tasks", "smoke-interaction", "--seeds", "1", "--workspace", str(workspace), check=True,
    )  # fmt: skip
    rows = json.loads(srtui("results", "--format", "json", "-w", str(workspace), check=True).stdout)
    [row] = [r for r in rows if r["method"] == "KernelRidge"]
    assert row["status"] == "ok" and row["r2_test"] is not None
    assert row["method_notes"]["python"].startswith(str(env.folder))
    # the versions its interpreter has, recorded by the driver (issue 58): the comparison with
    # SRBench 2021 (scikit-learn 0.24.1) reads them, so it warns of no scikit-learn difference
    assert row["method_notes"]["versions"]["scikit-learn"] == "0.24.1", row["method_notes"]
    out = json.loads(srtui("score", "srbench2021", "--published", "--format", "json", "-w", str(workspace)).stdout)
    assert not [w for w in out["warnings"] if w.startswith("scikit-learn:")], out["warnings"]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_suite_names_each_method_s_environment(tmp_path: Path, workspace: Path) -> None:
    from srtui.engine.methods.env_specs import SPECS

    file = tmp_path / "KernelRidge.py"
    file.write_text(KERNEL_RIDGE)

    def suite(envs: str, methods: str = '["KernelRidge"]') -> Path:
        path = tmp_path / "s.toml"
        path.write_text(f'name = "s"\ntasks = ["smoke-interaction"]\nmethods = {methods}\nseeds = [1]\n{envs}\n')
        return path

    def run(path: Path):
        return srtui("run", str(path), "--method-dir", str(file), "--workspace", str(workspace), "--dry-run")

    bad = run(suite('[environments]\nKernelRidge = "nope"'))
    assert bad.returncode != 0 and "[environments] KernelRidge: unknown environment 'nope'" in bad.stderr
    builtin = run(suite('[environments]\nlinear = "sklearn-0.24.1"', '["linear"]'))
    assert builtin.returncode != 0 and "only a method folder or file" in builtin.stderr
    named = run(suite('[environments]\nKernelRidge = "sklearn-0.24.1"'))
    if SPECS["sklearn-0.24.1"].environment.ready():
        assert named.returncode == 0 and "note: environment sklearn-0.24.1 for KernelRidge" in named.stderr
    else:
        assert named.returncode != 0 and "srtui env create sklearn-0.24.1" in named.stderr


@pytest.mark.slow  # two jobs in an environment of their own
def test_srbench_2_0_folders_run_in_the_srbench2025_sklearn_environment(
    srbench_folder, tmp_path: Path, workspace: Path
) -> None:
    import subprocess

    from srtui.engine.methods.env_specs import SPECS

    env = SPECS["srbench2025-sklearn"].environment
    if not env.ready():
        pytest.skip(f"needs the environment at {env.folder} (srtui env create srbench2025-sklearn)")
    code = "import numpy, sklearn; print(numpy.__version__, sklearn.__version__)"
    versions = subprocess.run([str(env.python), "-c", code], check=True, capture_output=True, text=True).stdout
    assert versions.split() == ["1.26.4", "1.5.2"]  # SRBench 2.0's numpy pin; its unpinned scikit-learn, pinned here
    names = ["sklearn_randomforest", "sklearn_ridge"]
    args = ["run", "smoke", "--methods", ",".join(names), "--env", "srbench2025-sklearn", "--tasks", "smoke-linear"]
    for name in names:
        args += ["--method-dir", str(srbench_folder(name))]
    srtui(*args, "--seeds", "1", "--workspace", str(workspace), check=True)
    rows = json.loads(srtui("results", "--format", "json", "-w", str(workspace), check=True).stdout)
    assert sorted(r["method"] for r in rows) == names
    for row in rows:
        assert row["status"] == "ok" and row["method_notes"]["python"] == str(env.python), row
        assert row["r2_test"] > 0.5, row
