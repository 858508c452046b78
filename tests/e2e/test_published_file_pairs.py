"""Issue 58: SRBench's own method files and folders are paired with the rows published for them.

Pairing went by srtui's built-in names only (``sgd`` beside 2021's "Linear"): SRBench 2021's own
``SGDRegressor.py``, run unmodified with ``--method-dir``, had no published row beside it
(``published_pairs`` empty, ``srtui_method`` "--"). A file or folder is now paired by the name
SRBench published its runs under (``SGDRegressor.py`` -> "SGD" -> "Linear"; 2.0's
``sklearn_linear`` -> "Linear").

Sizes compare like for like: ``srbench2021.size`` is what 2021's evaluate_model.py stored, the
number of features for a file whose ``complexity`` is None (and for ``sgd``, which declares it
stands for one), so both sit on the published Linear's size (5 on 579_fri_c0_250_5) and on a
Pareto front; srtui's node count stays as ``srbench2021.size:corrected``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_data_dir, srtui

from srtui.results.scoring.published.names import file_published_name

# SRBench 2021's experiment/methods/SGDRegressor.py (commit 5667c85), as it is
SGD_2021 = """from sklearn import linear_model


hyper_params = [
    {
        'alpha': (1e-06,1e-04,0.01,1,),
        'penalty': ('l2','l1','elasticnet',),
    },
]

est=linear_model.SGDRegressor()

complexity = None
model = None
"""


def test_file_and_folder_names_map_to_the_names_srbench_published() -> None:
    assert file_published_name("SGDRegressor", "srbench2021") == "Linear"
    assert file_published_name("FFXRegressor", "srbench2021") == "FFX"
    assert file_published_name("MLPRegressor", "srbench2021") == "MLP"
    assert file_published_name("KernelRidge", "srbench2021") == "KernelRidge"
    assert file_published_name("sklearn_linear", "srbench2025") == "Linear"
    assert file_published_name("ffx", "srbench2025") == "FFX"
    assert file_published_name("gpgomea", "srbench2025") == "GP-GOMEA"


def test_srbench_2021_s_sgd_file_sits_beside_the_published_linear(tmp_path: Path) -> None:
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    method = tmp_path / "SGDRegressor.py"
    method.write_text(SGD_2021)
    suite = tmp_path / "files.toml"
    suite.write_text(
        'name = "files"\ntasks = ["srbench2022-qual-579-fri-c0-250-5"]\nmethods = ["sgd", "ridge"]\nseeds = [1]\n'
    )
    ws = str(tmp_path / "ws")
    env = {"SRTUI_DATA_DIR": str(data)}
    folder = tmp_path / "myridge"  # a method folder: its version names its regressor.py
    folder.mkdir()
    (folder / "regressor.py").write_text("from sklearn.linear_model import Ridge\nest = Ridge()\nmodel = None\n")
    dirs = ["--method-dir", str(method), "--method-dir", str(folder)]
    srtui("run", str(suite), *dirs, "-w", ws, env=env, timeout=600, check=True)
    proc = srtui("score", "srbench2021", "--suite", "files", "--published", "--format", "json", "-w", ws, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    pairs = pd.DataFrame(out["tables"]["published_pairs"])
    assert list(pairs["method"]) == ["SGDRegressor"], pairs  # the file, not its stand-in sgd
    assert list(pairs["published_method"]) == ["Linear"] and pairs["r2_test_published"].notna().all()
    assert list(pairs["srbench2021.size"]) == [5.0] == list(pairs["srbench2021.size_published"])
    board = {row["method"]: row for row in out["tables"]["leaderboard"]}
    assert board["Linear"]["srtui_method"] == "SGDRegressor", board["Linear"]
    for name in ("SGDRegressor", "sgd"):  # on a front, as the published Linear
        assert board[name]["pareto_front"] != -1, board[name]
    # ridge has no 2021 method file: its size is srtui's count, and --published says so in one line
    [versions] = [w for w in out["warnings"] if w.startswith("method versions:")]
    assert "myridge (regressor.py@" in versions, versions  # whose file it is (#55)
    sized = [w for w in out["warnings"] if w.startswith("size:")]
    assert len(sized) == 1 and "ridge" in sized[0] and "sgd" not in sized[0] and "SGDRegressor" not in sized[0]
    sizes = {row["method"]: row["srbench2021.size"] for row in out["tables"]["per_task"]}
    assert sizes["sgd"] == sizes["SGDRegressor"] == 5


def test_an_empty_published_column_is_said(tmp_path: Path) -> None:
    """Issue 55: SRBench 2021's ground-truth table has solution rates, no test R2: the pairs'
    ``r2_test_published`` is empty, and a note says why rather than leave it to look like a failure."""
    data = shared_data_dir()
    if data is None or not (data / "pmlb-metadata").is_dir():
        pytest.skip("shared data pmlb-metadata not found (SRTUI_DATA_DIR)")
    ws, env = str(tmp_path / "ws"), {"SRTUI_DATA_DIR": str(data)}
    srtui(
        "run", "smoke", "--methods", "gplearn", "--tasks", "feynman-i-12-1-noise0", "--seeds", "1",
        "--time-limit", "5", "-w", ws, env=env, timeout=600, check=True,
    )  # fmt: skip
    out = json.loads(srtui("score", "srbench-groundtruth", "--published", "--format", "json", "-w", ws, env=env).stdout)
    pairs = pd.DataFrame(out["tables"]["published_pairs"])
    assert pairs["r2_test_published"].isna().all() and pairs["r2_test"].notna().all()
    said = [n for n in out["notes"] if n.startswith("published_pairs:")]
    assert said == ["published_pairs: r2_test_published is empty: SRBench 2021's table has no such value per dataset"]
