"""pyoperon (Operon, Burlacu et al.): fast C++ GP with local search, NSGA-II Pareto front.

Stops by itself at ``max_time`` (whole seconds). The generation cap is the default stop on small
data so a run is reproducible given the seed; ``max_time`` is the safety net on large data.
"""

from __future__ import annotations

import math
from typing import Any

from engine.methods.base import FittedModel, Method, ParetoPoint

#: digits for constants; Operon keeps them as float32/float64, 17 digits loses nothing
_PRECISION = 17


class Operon(Method):
    name = "pyoperon"
    family = "sr"
    licence = "MIT (pyoperon)"
    honours_time_limit = True
    requires = ("pyoperon",)
    default_params: dict[str, Any] = {
        "allowed_symbols": "add,sub,mul,div,constant,variable",
        "objectives": ["r2", "length"],
        "population_size": 1000,
        "pool_size": 1000,
        "generations": 50,
        "max_length": 50,
        "tournament_size": 3,
        "optimizer_iterations": 1,
        "model_selection_criterion": "minimum_description_length",
    }
    hyper_params = [
        {"population_size": 500, "pool_size": 500, "generations": 100},
        {"max_length": 25},
        {"generations": 200},
        {"allowed_symbols": "add,sub,mul,div,exp,log,sqrt,sin,cos,constant,variable"},
    ]

    def fit(self, X, y, feature_names, seed, time_budget, params) -> FittedModel:
        from pyoperon.sklearn import SymbolicRegressor

        p = {**self.default_params, **(params or {})}
        # a second of head room for extracting the front; never below 1 s (pyoperon's unit)
        max_time = max(1, math.floor(time_budget - 1.0)) if time_budget else None
        est = SymbolicRegressor(
            n_threads=1, random_state=int(seed) % (2**63), max_time=max_time, **p
        )
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
            notes={"stats": stats, "max_time": max_time},
        )
