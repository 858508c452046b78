"""SRBench 2.0's own method folders (cavalab/srbench, branch srbench_2025), run unmodified.

The folders are GPL-3.0 code of another project and are not committed here: the
``srbench_folder`` fixture (tests/conftest.py) takes them from $SRTUI_SRBENCH_METHODS,
../shared/data/srbench-methods/ or the local git mirror, and skips when none has them. The
sklearn_* and ffx folders run in the default test run (their packages come with srtui); every
other folder whose package installs from PyPI runs in the ``optional`` tests
(``pip install -e '.[srbench-optional]'``, then ``python -m pytest -m optional``).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from conftest import srtui

from srtui.engine.expression import parse_expression

SKLEARN = [
    "sklearn_adaboost",
    "sklearn_lasso",
    "sklearn_linear",
    "sklearn_mlp",
    "sklearn_randomforest",
    "sklearn_ridge",
    "sklearn_sgd",
]
#: the folders that define complexity(est) (the others set complexity = None)
WITH_COMPLEXITY = {"sklearn_adaboost", "sklearn_mlp", "sklearn_randomforest", "sklearn_ridge"}
SMOKE_FEATURES = ["x0", "x1", "x2"]


def _run(
    folders: list[Path],
    methods: list[str],
    ws: Path,
    *extra: str,
    time_s: float = 120,
    timeout: float = 900,
    suite: str = "smoke",
):
    args = [
        "run",
        suite,
        "--workspace",
        str(ws),
        "--methods",
        ",".join(methods),
        "--tasks",
        "smoke-interaction",
        "--time-limit",
        str(time_s),
    ]
    for folder in folders:
        args += ["--method-dir", str(folder)]
    return srtui(*args, *extra, timeout=timeout)


def _rows(ws: Path) -> dict[str, dict]:
    out = srtui("export", "--format", "json", "--out", str(ws / "export"), "--workspace", str(ws), check=True)
    assert out.returncode == 0
    runs = json.loads((ws / "export" / "runs.json").read_text())["tables"]["runs"]
    results = json.loads(srtui("results", "--format", "json", "--workspace", str(ws), check=True).stdout)
    by_job = {r["job_id"]: r for r in runs}
    return {r["method"]: {**by_job.get(r["job_id"], {}), **r} for r in results}


@pytest.mark.slow
def test_sklearn_and_ffx_folders_run_unmodified(srbench_folder, tmp_path):
    names = [*SKLEARN, "ffx"]
    folders = [srbench_folder(n) for n in names]
    proc = _run(folders, names, tmp_path / "ws")
    assert proc.returncode == 0, proc.stderr
    rows = _rows(tmp_path / "ws")
    assert sorted(rows) == sorted(names)
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row.get("error"), row.get("stderr_tail"))
        assert row["method_version"].startswith("regressor.py@")  # the folder, not the built-in ffx
        assert row["r2_test"] is not None
    ffx = rows["ffx"]
    # PyPI's ffx loses the DataFrame's names and prints X0..; srtui records the task's names
    assert not re.search(r"\bX\d", ffx["model"]) and re.search(r"\bx\d", ffx["model"])
    parse_expression(ffx["model"], SMOKE_FEATURES, "srbench")
    assert ffx["fidelity_r2"] >= 0.999 and ffx["r2_test"] > 0.9
    for name in SKLEARN:
        row = rows[name]
        assert row["model"] is None and row["method_notes"]["symbolic_model"] == "not implemented"
        if name in WITH_COMPLEXITY:
            assert row["method_notes"]["complexity"] > 0 and row["size"] == row["method_notes"]["complexity"]
        else:
            assert "complexity" not in row["method_notes"] and row.get("size") is None
    assert rows["sklearn_linear"]["r2_test"] > 0.5


@pytest.mark.slow
def test_folder_without_time_attribute_is_stopped_by_the_wall_limit(srbench_folder, tmp_path):
    # SRBench's gplearn folder: 500 generations of 1000 programs and no time attribute. Not in the
    # smoke suite, whose [params.gplearn] (generations = 10) a folder named gplearn gets too: a
    # suite of its own, with no params, so the folder runs as SRBench configured it
    suite = tmp_path / "gplearn-folder.toml"
    suite.write_text('name = "gplearn-folder"\ntasks = ["smoke-interaction"]\nmethods = ["gplearn"]\nseeds = [2082]\n')
    proc = _run([srbench_folder("gplearn")], ["gplearn"], tmp_path / "ws", time_s=12, timeout=300, suite=str(suite))
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(srtui("results", "--format", "json", "--workspace", str(tmp_path / "ws"), check=True).stdout)
    (row,) = rows
    assert "generations" not in row["params"], row["params"]  # the folder's own 500
    assert row["status"] == "timeout" and row["method_version"].startswith("regressor.py@"), row


def test_tuned_uses_the_folders_params_py(srbench_folder, tmp_path):
    folder = srbench_folder("sklearn_ridge")
    proc = srtui(
        "run",
        "smoke",
        "--method-dir",
        str(folder),
        "--methods",
        "sklearn_ridge",
        "--tasks",
        "smoke-linear",
        "--tuned",
        "--time-limit",
        "60",
        "--workspace",
        str(tmp_path / "ws"),
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(srtui("results", "--format", "json", "--workspace", str(tmp_path / "ws"), check=True).stdout)
    assert row["status"] == "ok" and row["params"]["srbench"]["tuned"] is True, row["params"]
    assert row["method_notes"]["tuned_params"] == {"alpha": 1, "gamma": 0.01, "kernel": "linear"}


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_folder_named_like_a_builtin_runs_only_when_named(srbench_folder, tmp_path):
    folder = srbench_folder("ffx")
    listed = json.loads(srtui("methods", "list", "--json", "--method-dir", str(folder), check=True).stdout)
    sources = [r["source"] for r in listed if r["name"] == "ffx"]
    assert len(sources) == 2
    assert sources[0].startswith("built-in") and "--methods ffx runs the folder" in sources[0]
    assert sources[1].startswith(f"folder {folder.resolve()}") and "only when named" in sources[1]
    # not named: the suite's built-in ffx runs and the folder is left out, with a note
    dry = srtui(
        "run", "smoke", "--method-dir", str(folder), "--dry-run", "--workspace", str(tmp_path / "ws"), check=True
    )
    assert "not run, 'ffx' is a built-in method" in dry.stderr
    ws = tmp_path / "ws2"
    ws.mkdir()
    plan = srtui(
        "run",
        "smoke",
        "--method-dir",
        str(folder),
        "--methods",
        "ffx",
        "--tasks",
        "smoke-linear",
        "--dry-run",
        "--workspace",
        str(ws),
        check=True,
    )
    assert "not run" not in plan.stderr and "ffx" in plan.stdout


# -- every other SRBench 2.0 folder whose packages install from PyPI ---------------------------------
#: folder -> (module it imports, wall limit s, srtui run options); time limits cover the methods'
#: own overrun of their max_time (optuna's first trial, feyn's alarm, imports)
OPTIONAL = {
    "gplearn": ("gplearn", 120, ["--srbench-test"]),
    "operon": ("optuna", 90, []),
    "rils-rols": ("rils_rols", 45, []),
    "qlattice": ("feyn", 120, ["--srbench-test"]),
    "bingo": ("bingo", 120, ["--srbench-test"]),
    "lightgbm": ("lightgbm", 90, []),
    "xgboost": ("xgboost", 90, []),
}


@pytest.mark.optional
@pytest.mark.parametrize("name", sorted(OPTIONAL))
def test_optional_folder_runs_unmodified(srbench_folder, tmp_path, suite_file, name):
    module, time_s, extra = OPTIONAL[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[srbench-optional]')")
    folder = srbench_folder(name)
    suite = suite_file(
        "folders",
        tasks=("smoke-interaction",),
        methods=(name,),
        seeds=(2082,),
        limits={"time_s": time_s, "mem_mb": 4000},
        params={"gplearn": {"generations": 5, "population_size": 200}},
    )
    # --methods: bingo, gplearn and rils-rols are also built-in names; only a named folder runs
    proc = srtui(
        "run",
        str(suite),
        "--workspace",
        str(tmp_path / "ws"),
        "--method-dir",
        str(folder),
        "--methods",
        name,
        *extra,
        timeout=time_s * 3 + 120,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(srtui("results", "--format", "json", "--workspace", str(tmp_path / "ws"), check=True).stdout)
    (row,) = rows
    assert row["status"] == "ok", (row.get("error"), row.get("stderr_tail"))
    assert row["method_version"].startswith("regressor.py@") and row["r2_test"] > 0.5
    if name in ("lightgbm", "xgboost"):
        assert row["model"] is None and row["method_notes"]["complexity"] > 0
        return
    parse_expression(row["model"], SMOKE_FEATURES, "srbench")
    if name == "bingo" and row["fidelity_r2"] is None:
        # bingo computes sqrt|a| and log|a| but its folder prints sqrt(a), log(a), which SRBench
        # reads as written: on rows where a < 0 the expression is not finite, and srtui says so
        assert re.search(r"\b(sqrt|log)\(", row["model"]) and row["expression_mismatch"] == 1, row["model"]
    elif name != "gplearn":  # gplearn prints its constants with 3 decimals
        assert row["fidelity_r2"] >= 0.999, row["model"]
