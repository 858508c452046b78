"""Benchmark: how often gplearn solves issue #3's task, srtui's defaults against plain gplearn.

Run: ``python tests/bench/bench_gplearn.py [--seeds 32] [--first 2082] [--budget 10]``.

The task is y = 0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1 (``smoke-interaction``: 150 training rows
uniform in [-3, 3]^3, 50 test rows). For each seed the adapter is fitted with the generation
cap a ``--budget`` second job gets (the cap reads the nominal budget, so the work is the same
on any machine) and with no wall-clock stop, so the figures count solutions, not machine speed.
Configurations, each with the same number of evaluated programs:

* ``srtui``: the adapter's defaults (linear scaling, population 400, more mutation);
* ``no-scaling``: the same without linear scaling;
* ``srbench``: gplearn as SRBench configures it (its 8-function set, population 1000,
  tournaments of 20, parsimony 0.001, no scaling).

Prints, per configuration, the share of seeds with test R2 >= 0.99, the median and worst R2
and the seconds per fit, and the ratio of solved seeds srtui/srbench.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from srtui.engine.methods.gplearn_adapter import Gplearn, generation_cap
from srtui.engine.spec import FitBudget, Limits
from srtui.tasks.generators.smoke import interaction

CONFIGS: dict[str, dict[str, Any]] = {
    "srtui": {},
    "no-scaling": {"linear_scaling": False},
    "srbench": {
        "linear_scaling": False,
        "population_size": 1000,
        "function_set": ("add", "sub", "mul", "div", "log", "sqrt", "sin", "cos"),
        "tournament_size": 20,
        "parsimony_coefficient": 0.001,
        "p_crossover": 0.9,
        "p_subtree_mutation": 0.01,
        "p_hoist_mutation": 0.01,
        "p_point_mutation": 0.01,
    },
}


def r2(y: np.ndarray, p: np.ndarray) -> float:
    return float(1 - np.sum((y - p) ** 2) / np.sum((y - np.mean(y)) ** 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=32)
    ap.add_argument("--first", type=int, default=2082)
    ap.add_argument("--budget", type=float, default=10.0, help="the job's wall limit, seconds")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    task, method = interaction(), Gplearn()
    nominal = Limits(time_s=args.budget).fit_budget
    budget = FitBudget(1e9, nominal=nominal)  # the cap from the nominal budget, no wall-clock stop
    solved: dict[str, int] = {}
    print(
        f"task smoke-interaction, {args.seeds} seeds from {args.first}, {args.budget:g} s job "
        f"(nominal fit budget {nominal:g} s)"
    )
    for name, override in CONFIGS.items():
        params = {**method.default_params, **override}
        gens = generation_cap(budget, int(params["population_size"]))
        scores, secs = [], []
        for seed in range(args.first, args.first + args.seeds):
            t0 = time.perf_counter()
            fitted = method.fit(task.X_train, task.y_train, task.feature_names, seed, budget, params)
            secs.append(time.perf_counter() - t0)
            scores.append(r2(task.y_test, fitted.predict(task.X_test)))
        solved[name] = sum(s >= 0.99 for s in scores)
        print(
            f"{name:>11}: pop {params['population_size']:>4} x {gens:>2} generations  "
            f"R2>=0.99 {solved[name]:>3}/{args.seeds}  median R2 {statistics.median(scores):.5f}  "
            f"worst {min(scores):.5f}  {statistics.median(secs):.2f} s/fit",
            flush=True,
        )
    print(
        f"solved ratio srtui/srbench: {solved['srtui'] / max(solved['srbench'], 1):.1f}x "
        f"({solved['srtui']} vs {solved['srbench']})"
    )


if __name__ == "__main__":
    main()
