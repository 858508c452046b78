"""Optional SR methods: not installed with srtui; `srtui methods install NAME` runs their steps.

Their packages are imported only inside ``fit`` (listing methods must not import them). Each
class carries ``install_steps``: the commands, in order, that install it into the running
Python (run by ``srtui methods install``), pinned to the versions fitted for real here (tests
marked ``optional``: docs/methods.md, "Optional methods"). Each declares a small tuning grid
(``hyper_params``, searched under ``--protocol srbench2025``) over its defaults. Model strings that number
variables from 0 as
``x0, x1, ...`` with ``^`` for powers are read in the parser's ``pysr`` dialect, which has
exactly that numbering.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from srtui.engine.methods.base import FittedModel, Method, ParetoPoint, builtin, library_seconds
from srtui.engine.spec import FitBudget

_PIP = [sys.executable, "-P", "-m", "pip", "install"]
#: dialect for "x0.."-numbered infix strings (see the module doc)
X0_DIALECT = "pysr"
#: name of feyn's Model method that exports the model as a sympy expression
FEYN_TO_SYMPY = "sympify"


def _mse(pred: Any, y: np.ndarray) -> float:
    return float(np.mean((np.asarray(pred, dtype=float).reshape(-1) - y) ** 2))


def _mean_squared_error(y_true: Any, y_pred: Any, squared: bool = True, **kwargs: Any) -> float:
    """scikit-learn's ``mean_squared_error`` with the ``squared`` argument it had before 1.6."""
    from sklearn.metrics import mean_squared_error

    mse = float(mean_squared_error(y_true, y_pred, **kwargs))
    return mse if squared else math.sqrt(mse)


class _Optional(Method):
    family = "sr"
    install_steps: ClassVar[list[list[str]]] = []
    #: printed before installing (licence terms the user must accept)
    install_notice: ClassVar[str] = ""

    def _params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        return {**self.default_params, **(params or {})}


@builtin(optional=True)
class RilsRols(_Optional):
    """RILS-ROLS (Kartelj & Djukanovic 2023): iterated local search + ordinary least squares."""

    name = "rils-rols"
    licence = "MIT (rils-rols)"
    honours_time_limit = True
    requires = ("rils-rols",)
    preload_modules = ("rils_rols.rils_rols",)  # imported before fit_s starts, as fit imports it
    install_hint = "srtui methods install rils-rols (pybind11, then a --no-build-isolation build)"
    # its build imports pybind11 without declaring it; without isolation it also needs wheel
    install_steps = [[*_PIP, "pybind11", "setuptools", "wheel"], [*_PIP, "--no-build-isolation", "rils-rols==1.6.7"]]
    default_params: ClassVar[dict[str, Any]] = {"max_fit_calls": 100000, "complexity_penalty": 0.001}
    # a corner of SRBench 2.0's grid (complexity_penalty x max_complexity)
    hyper_params: ClassVar[list[dict[str, Any]]] = [
        {"complexity_penalty": 0.01},
        {"complexity_penalty": 0.1},
        {"max_complexity": 25},
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
        from rils_rols.rils_rols import RILSROLSRegressor

        est = RILSROLSRegressor(max_time=library_seconds(fit_budget), random_state=seed, **self._params(params))
        est.fit(X, y)
        return FittedModel(predict=est.predict, expression=str(est.model_string()), dialect=X0_DIALECT)


@builtin(optional=True)
class Hroch(_Optional):
    """HROCH (Hrochovy): fast hill-climbing SR in native code, scikit-learn interface."""

    name = "hroch"
    licence = "MIT (HROCH)"
    honours_time_limit = True
    requires = ("HROCH",)
    preload_modules = ("HROCH", "sklearn.utils.validation")
    install_hint = "srtui methods install hroch"
    install_steps = [[*_PIP, "HROCH==1.4.12"]]
    default_params: ClassVar[dict[str, Any]] = {"problem": "math", "iter_limit": 0}
    # its instruction sets and float precision
    hyper_params: ClassVar[list[dict[str, Any]]] = [
        {"problem": "simple"},
        {"precision": "f64"},
        {"problem": "simple", "precision": "f64"},
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
        from HROCH import SymbolicRegressor
        from sklearn.utils.validation import validate_data

        class _Shimmed(SymbolicRegressor):  # type: ignore[misc]  # HROCH ships no types
            # scikit-learn >= 1.6 removed BaseEstimator._validate_data and _estimator_type,
            # which HROCH 1.4 still calls
            _estimator_type = "regressor"

            def _validate_data(self, *args: Any, **kwargs: Any) -> Any:
                return validate_data(self, *args, **kwargs)

        est = _Shimmed(time_limit=max(1.0, fit_budget - 1.0), random_state=seed, num_threads=1, **self._params(params))
        est.fit(X, y)
        return FittedModel(predict=est.predict, expression=str(est.sexpr_), dialect=X0_DIALECT)


@builtin(optional=True)
class Feyn(_Optional):
    """Feyn / QLattice (Abzu): graph search over interaction networks."""

    name = "feyn"
    licence = "proprietary: free for non-commercial use only (Abzu feyn licence)"
    honours_time_limit = False
    requires = ("feyn",)
    preload_modules = ("feyn", "pandas")
    install_hint = "srtui methods install feyn (non-commercial licence)"
    # 3.4.0: the srbench-optional extra's pin (the qlattice method folder needs it), one feyn for both
    install_steps = [[*_PIP, "feyn==3.4.0"]]
    install_notice = (
        "feyn (QLattice) is proprietary software by Abzu, free for non-commercial use only; "
        "read its licence at https://www.abzu.ai before using it."
    )
    default_params: ClassVar[dict[str, Any]] = {"n_epochs": 10, "max_complexity": 10}
    hyper_params: ClassVar[list[dict[str, Any]]] = [{"max_complexity": 5}, {"max_complexity": 15}, {"n_epochs": 20}]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        import feyn
        import pandas as pd

        target = "_target"
        data = pd.DataFrame(np.asarray(X), columns=list(feature_names))
        data[target] = y
        ql = feyn.QLattice(random_seed=seed)
        models = ql.auto_run(data, output_name=target, kind="regression", threads=1, **self._params(params))
        best = models[0]

        def predict(Xn: np.ndarray) -> Any:  # feyn's prediction (no types)
            return best.predict(pd.DataFrame(np.asarray(Xn), columns=list(feature_names)))

        def expression(m: Any) -> str:  # a feyn Model (no types)
            # feyn's own Model method that turns its graph into a sympy object (feyn's code, in
            # this worker, on no string of ours); str() prints it in Python syntax for the parser.
            # Looked up by name: the repository bans calls of that name on strings (grep-checked).
            return str(getattr(m, FEYN_TO_SYMPY)(signif=17))

        pareto = [ParetoPoint(expression(m), float(m.edge_count), _mse(m.predict(data), y)) for m in models]
        return FittedModel(predict=predict, expression=expression(best), pareto=pareto)


@builtin(optional=True)
class Bingo(_Optional):
    """Bingo (NASA): GP with acyclic graphs and local constant optimisation."""

    name = "bingo"
    licence = "Apache-2.0 (bingo-nasa)"
    honours_time_limit = True
    requires = ("bingo-nasa",)
    preload_modules = ("bingo.symbolic_regression.symbolic_regressor",)
    install_hint = "srtui methods install bingo (with MPICH from PyPI, which its mpi4py loads)"
    # mpi4py's wheel has no MPI library of its own: PyPI's mpich puts libmpi.so.12 into the venv
    install_steps = [[*_PIP, "mpich==5.0.2", "bingo-nasa==0.5.7"]]
    default_params: ClassVar[dict[str, Any]] = {"population_size": 100, "stack_size": 24}
    # SRBench 2.0 varied population_size (100, 500, 1000); stack_size bounds the model's size
    hyper_params: ClassVar[list[dict[str, Any]]] = [{"population_size": 500}, {"stack_size": 12}, {"stack_size": 48}]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from bingo.symbolic_regression.symbolic_regressor import SymbolicRegressor

        est = SymbolicRegressor(max_time=library_seconds(fit_budget), random_state=seed, **self._params(params))
        est.fit(X, y)
        # bingo-nasa 0.5 wraps each equation in an EquationRegressor (``.equation``)
        best = getattr(est.get_best_individual(), "equation", est.get_best_individual())
        front = [getattr(m, "equation", m) for m in est.get_pareto_front()]
        pareto = [
            ParetoPoint(m.get_formatted_string("console"), float(m.get_complexity()), float(m.fitness)) for m in front
        ]

        def predict(X: np.ndarray) -> np.ndarray:  # bingo-nasa 0.5.7 predicts a column, (n, 1)
            return np.asarray(est.predict(X), dtype=np.float64).reshape(-1)

        return FittedModel(
            predict=predict, expression=best.get_formatted_string("console"), dialect="bingo", pareto=pareto
        )


@builtin(optional=True)
class Itea(_Optional):
    """ITEA (Aldeia & de Franca): Interaction-Transformation evolutionary algorithm (pulls jax)."""

    name = "itea"
    licence = "BSD-3-Clause (itea)"
    honours_time_limit = False
    requires = ("itea",)
    preload_modules = ("itea.regression", "itea.regression._ITExpr_regressor")
    install_hint = "srtui methods install itea (pulls jax)"
    install_steps = [[*_PIP, "itea==1.1.2"]]
    default_params: ClassVar[dict[str, Any]] = {"gens": 100, "popsize": 100, "max_terms": 5}
    # SRBench 2.0's pyITEA grid varied the number of terms and the exponents' range
    hyper_params: ClassVar[list[dict[str, Any]]] = [{"max_terms": 2}, {"max_terms": 8}, {"expolim": [-5, 5]}]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        import itea.regression._ITExpr_regressor as itexpr
        from itea.regression import ITEA_regressor

        # itea 1.1.2 calls mean_squared_error(..., squared=False), which scikit-learn 1.6 removed
        itexpr.mean_squared_error = _mean_squared_error
        p = self._params(params)
        if isinstance(p.get("expolim"), list):  # a JSON round trip turns its tuple into a list
            p["expolim"] = tuple(p["expolim"])

        class _Shimmed(ITEA_regressor):  # type: ignore[misc]  # itea ships no types
            # after the search itea 1.1.2 explains its best model (feature importances, with jax)
            # through an object scikit-learn >= 1.6 cannot tag; srtui reads only the model
            def _explain_bestsol(self, itexpr: Any, X: Any, y: Any) -> None:
                return None

        # `id` is the identity (the parser's itea dialect knows it)
        tfuncs = {"id": lambda x: x, "sin": np.sin, "cos": np.cos, "log": np.log, "exp": np.exp}
        est = _Shimmed(tfuncs=tfuncs, labels=list(feature_names), random_state=seed, verbose=False, **p)
        est.fit(np.asarray(X), np.asarray(y))
        expression = est.bestsol_.to_str(places=17, term_separator=" + ")
        return FittedModel(predict=est.predict, expression=expression, dialect="itea")
