"""SRBench 2021's single-file methods run unmodified (``--method-dir .../KernelRidge.py``), and a
grid the file builds (2021's gplearn.py: ``hyper_params`` in a loop) is read by running the file
in a job, never dropped: the plan says where each grid came from and plans the tuning jobs
SRBench's HalvingGridSearchCV fits.

The files here are written by the test in 2021's form (the same top-level names and grid
constructions as ``experiment/methods/KernelRidge.py`` and ``gplearn.py`` of commit 5667c85);
SRBench's own files are never copied into the repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import srtui
from sklearn.model_selection import ParameterGrid

#: 2021's KernelRidge.py, as written there
KERNEL_RIDGE = """from sklearn import kernel_ridge

hyper_params = [{
    'kernel': ('linear', 'poly','rbf','sigmoid',),
    'alpha': (1e-4,1e-2,0.1,1,),
    'gamma': (0.01,0.1,1,10,),
}]

est=kernel_ridge.KernelRidge()

def complexity(est):
    return est.dual_coef_.size

model = None
eval_kwargs = {
               'scale_y': False,
               'scale_x': True,
              }
"""

#: 2021's gplearn.py: the grid built in a loop (its estimator's settings shortened: never fitted here)
GPLEARN = """from gplearn.genetic import SymbolicRegressor
import re

hyper_params = []
for p, g in zip([1000,500,100],[500,1000,5000]):
    for fs in [('add', 'sub', 'mul', 'div', 'log','sqrt'),
               ('add', 'sub', 'mul', 'div', 'log','sqrt', 'sin','cos')
              ]:
        hyper_params.append({
            'population_size' : [p],
            'generations' : [g],
            'function_set': [fs]
            })

est = SymbolicRegressor(tournament_size=20, population_size=50, generations=2)

def model(est):
    return str(est._program)

def complexity(est):
    return len(re.split('\\(|,',model(est)))
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "methods" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_2021_method_file_is_listed_checked_and_run(tmp_path: Path, workspace: Path) -> None:
    file = _write(tmp_path, "KernelRidge", KERNEL_RIDGE)
    rows = json.loads(srtui("methods", "list", "--json", "--method-dir", str(file), check=True).stdout)
    [row] = [r for r in rows if r["name"] == "KernelRidge"]
    assert row["installed"] and row["version"].startswith("KernelRidge.py@") and str(file) in row["source"]
    checked = srtui("methods", "check", str(file), "--json", check=True)
    assert json.loads(checked.stdout)["status"] == "ok", checked.stdout
    folder = srtui("run", "smoke", "--method-dir", str(tmp_path / "methods"), "--workspace", str(workspace))
    assert folder.returncode != 0 and "a 2021 method is a NAME.py file" in folder.stderr


def _planned(out: str, method: str) -> tuple[list[int], list[int], int]:
    """(candidates per iteration, rows per iteration, tuning jobs) of the dry run's search line."""
    line = next(ln for ln in out.splitlines() if ln.startswith(f"tuning {method} on "))
    its = re.findall(r"(\d+) on (\d+) rows", line)
    total = int(re.search(r": (\d+) tuning jobs", line).group(1))  # type: ignore[union-attr]
    return [int(c) for c, _ in its], [int(r) for _, r in its], total


def _srbench_fits(grid: list[dict], n_rows: int) -> tuple[list[int], list[int], int]:
    """(n_candidates_, n_resources_, fits) of HalvingGridSearchCV as SRBench 2021 sets it up, on
    as many candidates as ``grid`` has (what it fits depends on their number only)."""
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, KFold, ParameterGrid

    class Est(BaseEstimator, RegressorMixin):
        def __init__(self, c: int = 0) -> None:
            self.c = c

        def fit(self, X, y):
            return self

        def predict(self, X):
            return X[:, 0] * self.c

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(n_rows, 2)), rng.normal(size=n_rows)
    cands = {"c": list(range(len(ParameterGrid(grid))))}
    s = HalvingGridSearchCV(Est(), cands, cv=KFold(5, shuffle=True, random_state=1), scoring="r2", error_score=0.0)
    s.fit(X, y)
    return list(s.n_candidates_), list(s.n_resources_), 5 * sum(s.n_candidates_)


def _train_rows(tmp_path: Path) -> int:
    """The training rows of smoke-interaction under 2021's 75/25 split."""
    from srtui.engine.protocols import train_test_split_rows
    from srtui.tasks.catalogue import TaskContext, get_task

    task = get_task("smoke-interaction", TaskContext.for_workspace(tmp_path / "ctx"))
    train, _ = train_test_split_rows(len(task.y_train) + len(task.y_test), 0.75, 1)
    return len(train)


def test_2021_files_plan_the_tuning_jobs_srbench_s_code_fits(tmp_path: Path, workspace: Path) -> None:
    gplearn = _write(tmp_path, "gplearn", GPLEARN)
    ridge = _write(tmp_path, "KernelRidge", KERNEL_RIDGE)
    out = srtui(
        "run", "smoke", "--protocol", "srbench2021", "--tasks", "smoke-interaction", "--seeds", "1",
        "--methods", "gplearn,KernelRidge", "--method-dir", str(gplearn), "--method-dir", str(ridge),
        "--workspace", str(workspace), "--dry-run", check=True,
    )  # fmt: skip
    assert "note: grid of gplearn: 6 configuration(s), read by running gplearn.py in a job" in out.stderr
    assert "note: grid of KernelRidge: 64 configuration(s), the literal hyper_params of KernelRidge.py" in out.stderr
    functions = [("add", "sub", "mul", "div", "log", "sqrt"), ("add", "sub", "mul", "div", "log", "sqrt", "sin", "cos")]
    gp_grid = [
        {"population_size": [p], "generations": [g], "function_set": [fs]}
        for p, g in zip([1000, 500, 100], [500, 1000, 5000])
        for fs in functions
    ]
    ridge_grid = [
        {
            "kernel": ["linear", "poly", "rbf", "sigmoid"],
            "alpha": [1e-4, 1e-2, 0.1, 1],
            "gamma": [0.01, 0.1, 1, 10],
        }
    ]
    n_train = _train_rows(tmp_path)
    for method, grid in (("gplearn", gp_grid), ("KernelRidge", ridge_grid)):
        planned = _planned(out.stdout, method)
        assert planned == _srbench_fits(grid, n_train), method
        assert planned[2] > 5 * len(ParameterGrid(grid))  # more than one iteration


def test_a_grid_no_job_can_read_is_an_error_not_an_untuned_run(tmp_path: Path, workspace: Path) -> None:
    broken = _write(tmp_path, "Broken", GPLEARN.replace("hyper_params = []", "hyper_params = undefined_name"))
    out = srtui(
        "run", "smoke", "--protocol", "srbench2021", "--tasks", "smoke-interaction", "--seeds", "1",
        "--methods", "Broken", "--method-dir", str(broken), "--workspace", str(workspace), "--dry-run",
    )  # fmt: skip
    assert out.returncode != 0 and out.stdout == ""
    [line] = out.stderr.strip().splitlines()
    assert "method Broken: its hyper_params could not be read by running Broken.py in a job" in line
