"""The named environment ``srbench2021`` (scikit-learn 0.24.1, xgboost 1.3.3, lightgbm 3.1.1) runs
SRBench 2021's own XGB and LGBM method files, unmodified: read from a git mirror of cavalab/srbench
at commit 5667c85 into a temporary folder (never into the repository), on one shared PMLB dataset
with one seed. Skips with the reason when the environment is not built
(``srtui env create srbench2021``), or the mirror or the shared data is missing.
"""

from __future__ import annotations

import ast
import json
import math
import subprocess
from pathlib import Path

import pytest
from conftest import SRBENCH_MIRROR, shared_data_dir, srtui
from sklearn.model_selection import ParameterGrid

COMMIT_2021 = "5667c85"
FILES = ("XGBRegressor", "LGBMRegressor")
TASK = "srbench2021-bb-579-fri-c0-250-5"  # 250 rows: 188 training rows under SRBench 2021's split


def _needs() -> tuple[Path, Path]:
    from srtui.engine.methods.env_specs import SPECS

    env = SPECS["srbench2021"].environment
    if not env.ready():
        pytest.skip(f"needs the environment at {env.folder} (srtui env create srbench2021)")
    if not SRBENCH_MIRROR.is_dir():
        pytest.skip(f"needs a git mirror of cavalab/srbench at {SRBENCH_MIRROR} (SRBench 2021's method files)")
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification" / "579_fri_c0_250_5.tsv.gz").is_file():
        pytest.skip("needs the shared PMLB files (../shared/data/srbench2022/qualification or $SRTUI_DATA_DIR)")
    return env.python, data


def _method_file(folder: Path, name: str) -> Path:
    text = subprocess.run(
        ["git", f"--git-dir={SRBENCH_MIRROR}", "show", f"{COMMIT_2021}:experiment/methods/{name}.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


def _grid_size(path: Path) -> int:
    """Configurations of the file's literal ``hyper_params``, as scikit-learn's ParameterGrid counts them."""
    [node] = [
        n
        for n in ast.parse(path.read_text()).body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "hyper_params"
    ]
    return len(ParameterGrid(ast.literal_eval(node.value)))


@pytest.mark.slow  # two exec'd workers in an environment of their own, plus a planned search
def test_2021_xgb_and_lgbm_files_run_in_the_srbench2021_environment(tmp_path: Path, workspace: Path) -> None:
    python, data = _needs()
    code = "import sklearn, xgboost, lightgbm as l; print(sklearn.__version__, xgboost.__version__, l.__version__)"
    versions = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert versions == ["0.24.1", "1.3.3", "3.1.1"]
    files = [_method_file(tmp_path, name) for name in FILES]
    common = ["--env", "srbench2021", "--methods", ",".join(FILES), "--tasks", TASK, "--seeds", "1"]
    common += ["--data-dir", str(data), "--workspace", str(workspace), "--jobs", "2"]
    for f in files:
        common += ["--method-dir", str(f)]
    # SRBench 2021's search, planned: each file's grid, halving on 10, 30 and 90 of the 188 rows
    plan = srtui("run", "srbench2021-blackbox", "--protocol", "srbench2021", "--dry-run", *common, check=True)
    for name, path in zip(FILES, files, strict=True):
        n = _grid_size(path)
        assert f"grid of {name}: {n} configuration(s), the literal hyper_params of {name}.py" in plan.stderr
        rounds = [math.ceil(n / 3**i) for i in range(3)]
        assert (
            f"halving search, {rounds[0]} on 10 rows, {rounds[1]} on 30 rows, {rounds[2]} on 90 rows: " in plan.stdout
        )
        assert f"{sum(rounds) * 5} tuning jobs" in plan.stdout
    # one fit of each file's own estimator, in the environment's interpreter
    srtui("run", "srbench2021-blackbox", "--protocol", "none", *common, check=True, timeout=600)
    rows = json.loads(srtui("results", "--format", "json", "-w", str(workspace), check=True).stdout)
    assert sorted(r["method"] for r in rows) == sorted(FILES)
    for row in rows:
        assert row["status"] == "ok", row
        assert row["method_notes"]["python"] == str(python)
        assert row["r2_test"] is not None and row["r2_test"] > 0.5, row  # a real fit of a smooth Friedman target
        assert row["method_notes"]["complexity"] > 0  # the file's complexity() read the fitted booster
