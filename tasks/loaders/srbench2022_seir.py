"""SRBench 2022 stage 1, SEIR tasks: the competition's own files (its generator is not published).

``srbench2022-seir-{ds,de,di,dr}-{easy,medium,hard}-s{seed}``: the files
``competition-2022/experiment/data/stage1/data/seir/{seed}_seird{S,E,I,R}_{level}_data_{train,test}.csv``
(cavalab/srbench, branch srcomp), downloaded once and checked against the sha256 shipped with
srtui. Features ``x_S, x_E, x_I, x_R, x_rzero, x_gamma, x_sigma, x_c``; target ``dS`` .. ``dR``.

The judge (``metrics/evaluation.py``) scores them by symbolic equivalence with SEIR formulas over
``x_N``, a column the files lack; srtui writes ``x_N`` as ``x_S + x_E + x_I + x_R`` (11,000,840
in every row) and records how well that formula fits the file's target (it does not: the files'
targets are not the judge's formula).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from srtui.tasks import cache
from srtui.tasks.build import make_task
from srtui.tasks.catalogue import TaskContext, TaskError, register_note
from srtui.tasks.datafiles import RemoteFile, locate
from srtui.tasks.model import Task

VERSION = "1"
TRACK = "srbench2022-synthetic"
BASE = "https://raw.githubusercontent.com/cavalab/srbench/srcomp/competition-2022/experiment/data/stage1/data/seir/"
#: the SEIR files' own seeds (not the other stage-1 tasks' ones)
SEEDS = (1235, 1537, 2146, 3732, 3761, 3915, 5547, 6994, 8336, 9574)
LEVELS = ("easy", "medium", "hard")
FEATURES = ["x_S", "x_E", "x_I", "x_R", "x_rzero", "x_gamma", "x_sigma", "x_c"]
N = "(x_S + x_E + x_I + x_R)"
#: the judge's formulas, with x_N = S + E + I + R
JUDGE = {
    "S": "-x_gamma*x_rzero*x_S*x_I/x_N",
    "E": "x_gamma*x_rzero*x_S*x_I/x_N - x_sigma*x_E",
    "I": "x_sigma*x_E - x_gamma*x_I + x_c*x_R*x_I/x_N",
    "R": "x_gamma*x_I - x_c*x_R*x_I/x_N",
}
MISSING = (
    "SEIR stage-1 tasks (srbench2022-seir-*): the competition's generator is not published, so srtui "
    "loads its files (downloaded, sha256-checked) and cannot regenerate them; the judge's formulas use "
    "a column x_N the files lack (srtui writes S+E+I+R)."
)


def official_file(seed: int, compartment: str, level: str, part: str) -> RemoteFile:
    name = f"{seed}_seird{compartment}_{level}_data_{part}.csv"
    return RemoteFile(f"srbench2022/seir/{name}", BASE + name)


def task_name(compartment: str, level: str, seed: int) -> str:
    return f"srbench2022-seir-d{compartment.lower()}-{level}-s{seed}"


def _truth_r2(truth: str, X: np.ndarray, y: np.ndarray) -> float | None:
    from srtui.tasks.truth import parse_truth

    pred = np.asarray(parse_truth(truth, FEATURES).evaluate(X), dtype=float)
    ss = float(np.sum((y - y.mean()) ** 2))
    return round(1 - float(np.sum((y - pred) ** 2)) / ss, 4) if ss > 0 else None


def load(compartment: str, level: str, seed: int, context: TaskContext) -> Task:
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    target = f"d{compartment}"
    parts: dict[str, pd.DataFrame] = {}
    files: list[dict[str, str]] = []
    for part in ("train", "test"):
        path, prov = locate(official_file(seed, compartment, level, part), context)
        df = pd.read_csv(path.stream())
        if list(df.columns) != [*FEATURES, target]:
            raise TaskError(f"{prov['file']}: expected columns {', '.join([*FEATURES, target])}")
        parts[part], files = df, [*files, prov]
    full = pd.concat([parts["train"], parts["test"]], ignore_index=True)
    X, y = full[FEATURES].to_numpy(dtype=float), full[target].to_numpy(dtype=float)
    idx = np.arange(len(full))
    truth = JUDGE[compartment].replace("x_N", N)
    return make_task(
        task_name(compartment, level, seed),
        TRACK,
        FEATURES,
        target,
        X,
        y,
        idx[: len(parts["train"])],
        idx[len(parts["train"]) :],
        difficulty=f"seir-{level}",
        ground_truth=truth,
        split="the competition's train and test files",
        property="exact_rediscovery",
        provenance={
            "source": "SRBench 2022 competition, stage 1, seir/ (official files; generator not published)",
            "files": files,
            "seed": seed,
            "judge_formula": JUDGE[compartment],
            "x_N": "the judge's formulas use x_N, a column the files lack; srtui writes x_S + x_E + x_I + x_R "
            "(11,000,840 in every row)",
            "ground_truth_r2_on_files": _truth_r2(truth, X, y),
            "not_used": "the repository's seir_hard/ folder (columns without the x_ prefix, other targets)",
            "stage1_ranking": "the competition's stage-1 ranking notebook skipped the SEIR tasks",
        },
        description=f"SEIR d{compartment}/dt ({level}): the competition's files; judge's formula {JUDGE[compartment]}.",
    )


def _register_all() -> None:
    for seed in SEEDS:
        for compartment in "SEIR":
            for level in LEVELS:
                name = task_name(compartment, level, seed)
                cache.register_loaded(
                    name,
                    TRACK,
                    VERSION,
                    partial(load, compartment, level, seed),
                    f"SEIR d{compartment}/dt, {level} (official files, download)",
                    tuple(official_file(seed, compartment, level, part) for part in ("train", "test")),
                )
    register_note(MISSING)


_register_all()
