"""Run SRBench 2021's own evaluate_model (commit 5667c85, read from a git mirror of SRBench) on
PMLB files, in a subprocess, on today's scikit-learn: the reference the srbench2021 protocol is
compared with, run by run.

The 2021 files are copied out of the mirror into a temporary folder (never into the repository:
GPL-3.0 code of another project). Two things are adapted so the code runs on today's libraries,
neither of which changes a number: ``methods/__init__.py`` (it imports the sources of methods these
runs do not use) is left empty, and ``StandardScaler.inverse_transform`` takes the 1-D predictions
2021 passes it as scikit-learn 0.24 did (the same ``X * scale_ + mean_``; scikit-learn 1.x wants
2-D).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRBENCH_GIT = Path(os.environ.get("SRTUI_SRBENCH_GIT", "/work/.mirror/cavalab+srbench/repo"))
COMMIT = "5667c85"
FILES = (
    "evaluate_model.py",
    "read_file.py",
    "utils.py",
    "symbolic_utils.py",
    "seeds.py",
    "methods/SGDRegressor.py",
    "methods/LinearRegression.py",
)
#: srtui's method name -> SRBench 2021's method file
METHODS = {"sgd": "SGDRegressor", "linear": "LinearRegression"}

DRIVER = """
import contextlib, importlib, io, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import evaluate_model as em
from sklearn.preprocessing import StandardScaler

class Compat(StandardScaler):
    def inverse_transform(self, X, copy=None):
        X = np.asarray(X)
        if X.ndim == 1:
            return super().inverse_transform(X.reshape(-1, 1), copy=copy).ravel()
        return super().inverse_transform(X, copy=copy)

em.StandardScaler = Compat
out, jobs = sys.argv[2], json.loads(sys.argv[3])
for dataset, method, seed in jobs:
    alg = importlib.import_module("methods." + method)
    with contextlib.redirect_stdout(io.StringIO()):
        em.evaluate_model(dataset, out, seed, method, alg.est, alg.hyper_params, alg.complexity, alg.model)
"""


def available() -> str | None:
    """Why the reference cannot run here, or None."""
    if not SRBENCH_GIT.is_dir():
        return f"needs a git mirror of cavalab/srbench at {SRBENCH_GIT} ($SRTUI_SRBENCH_GIT)"
    return None


def checkout(where: Path) -> Path:
    experiment = where / "experiment"
    for name in FILES:
        text = subprocess.run(
            ["git", "--git-dir", str(SRBENCH_GIT), "show", f"{COMMIT}:experiment/{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (experiment / name).parent.mkdir(parents=True, exist_ok=True)
        (experiment / name).write_text(text)
    (experiment / "methods" / "__init__.py").write_text("")
    return experiment


def run(where: Path, files: dict[str, Path], methods: list[str], seeds: list[int]) -> dict[tuple[str, str, int], dict]:
    """{(dataset, srtui method, seed): 2021's result json} for every combination."""
    experiment = checkout(where)
    out = where / "results"
    jobs = [[str(path), METHODS[m], seed] for path in files.values() for m in methods for seed in seeds]
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(experiment), str(out), json.dumps(jobs)],
        check=True,
        cwd=experiment,
        capture_output=True,
        timeout=3600,
    )
    results = {}
    for dataset in files:
        for m in methods:
            for seed in seeds:
                results[dataset, m, seed] = json.loads((out / f"{dataset}_{METHODS[m]}_{seed}.json").read_text())
    return results
