"""pyoperon (Operon, Burlacu et al.): fast C++ GP with local search, NSGA-II Pareto front.

Stops by itself at ``max_time`` (whole seconds). The generation cap is the intended stop so a
run is reproducible given the seed and budget; ``max_time`` is the safety net on large data. By
default (``generations=None``) the cap scales with the budget, ``GENERATIONS_PER_SECOND`` per
second of budget and at least ``MIN_GENERATIONS``: small data ends by the cap (about 0.07 s per
generation of 1000 on 150 rows), while an hour-long SRBench budget is not wasted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from srtui.engine.methods.base import FittedModel, Method, ParetoPoint, builtin, library_seconds
from srtui.engine.spec import FitBudget

#: digits for constants; Operon keeps them as float32/float64, 17 digits loses nothing
_PRECISION = 17
GENERATIONS_PER_SECOND = 3
MIN_GENERATIONS = 30


def generation_cap(fit_budget: FitBudget | None) -> int:
    """Generations from the nominal budget: the same job does the same work however long start-up took."""
    if not fit_budget:
        return 1000
    return max(MIN_GENERATIONS, int(GENERATIONS_PER_SECOND * fit_budget.nominal))


@builtin(default_sr=True)
class Operon(Method):
    name = "pyoperon"
    family = "sr"
    fork_safe = True  # the import starts no thread (checked); its thread pool is made in fit
    licence = "MIT (pyoperon)"
    honours_time_limit = True
    requires = ("pyoperon",)
    preload_modules = ("pyoperon.sklearn",)
    params_of = "pyoperon.sklearn:SymbolicRegressor"
    default_params: ClassVar[dict[str, Any]] = {
        "allowed_symbols": "add,sub,mul,div,constant,variable",
        "objectives": ["r2", "length"],
        "population_size": 1000,
        "pool_size": 1000,
        "generations": None,  # None: generation_cap(fit_budget)
        "max_length": 50,
        "tournament_size": 3,
        "optimizer_iterations": 1,
        "model_selection_criterion": "minimum_description_length",
    }
    hyper_params = [
        {"population_size": 500, "pool_size": 500},
        {"max_length": 25},
        {"max_length": 100},
        {"allowed_symbols": "add,sub,mul,div,exp,log,sqrt,sin,cos,constant,variable"},
    ]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from pyoperon.sklearn import SymbolicRegressor

        p = {**self.default_params, **(params or {})}
        if p.get("generations") is None:
            p["generations"] = generation_cap(fit_budget)
        max_time = library_seconds(fit_budget) if fit_budget else None
        est = SymbolicRegressor(n_threads=1, random_state=int(seed) % (2**63), max_time=max_time, **p)
        est.fit(X, y)
        names = list(feature_names)
        expression = est.get_model_string(est.model_, _PRECISION, names)
        pareto = [
            ParetoPoint(
                expression=est.get_model_string(s["tree"], _PRECISION, names),
                complexity=float(s["length"]),
                loss=float(s["mean_squared_error"]),
            )
            for s in est.pareto_front_
        ]
        stats = {k: v for k, v in est.stats_.items() if isinstance(v, (int, float))}
        return FittedModel(
            predict=est.predict,
            expression=expression,
            dialect="pyoperon",
            pareto=pareto,
            notes={"stats": stats, "max_time": max_time, "generation_cap": p["generations"]},
        )
