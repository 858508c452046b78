"""scikit-learn baselines. Linear models are exported symbolically from their coefficients.

The black-box ones (random forest, gradient boosting, MLP, KNN) return no expression and are
scored on accuracy only. All are deterministic given ``seed`` and single-threaded (``n_jobs=1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from srtui.engine.methods.base import ContractTags, FittedModel, Method, builtin
from srtui.engine.methods.env_specs import SPECS as ENV_SPECS
from srtui.engine.spec import FitBudget

_SKLEARN_LICENCE = "BSD-3-Clause (scikit-learn)"


def linear_expression(coef: np.ndarray, intercept: float, terms: Sequence[str]) -> str:
    """``intercept + c1*term1 + ...`` with full-precision (repr) constants; zero terms dropped."""
    parts = [repr(float(intercept))]
    for c, term in zip(np.ravel(coef), terms):
        if c != 0.0:
            parts.append(f"{float(c)!r}*{term}")
    return " + ".join(parts).replace("+ -", "- ")


def monomial(powers: Sequence[int], names: Sequence[str]) -> str:
    """``x0*x1**2`` for the exponent row ``(1, 2)`` (python dialect); ``1`` for all-zero."""
    factors = [n if p == 1 else f"{n}**{int(p)}" for n, p in zip(names, powers) if p]
    return "*".join(factors) or "1"


#: what a fork server of this module's methods imports besides their ``preload_modules``
#: (srtui.engine.process.fork_server; its default adds sympy, which none of these fits uses; pandas
#: comes with scikit-learn)
FORK_SERVER_IMPORTS = ("numpy", "sklearn", "sklearn.base", "sklearn.utils")


class _Sklearn(Method):
    """Shared plumbing: merge params over the defaults, build, fit, wrap."""

    family = "baseline"
    fork_safe = True  # importing scikit-learn starts no thread (n_jobs=1 fits)
    licence = _SKLEARN_LICENCE
    requires = ("scikit-learn",)
    # scikit-learn loads its submodules lazily: name the ones the fits use
    preload_modules: ClassVar[tuple[str, ...]] = ("sklearn.linear_model", "sklearn.pipeline", "sklearn.preprocessing")

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**self.default_params, **(params or {})}


@builtin()
class Dummy(_Sklearn):
    """Predicts the training mean: the floor every method must beat."""

    name = "dummy"
    preload_modules = ("sklearn.dummy",)
    honours_time_limit = True

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.dummy import DummyRegressor

        est = DummyRegressor(strategy="mean").fit(X, y)
        return FittedModel(predict=est.predict, expression=repr(float(est.constant_[0][0])))


@builtin()
class Linear(_Sklearn):
    """Ordinary least squares, as SRBench's LinearRegression folders (2021 and 2.0) run it: tuned
    over ``fit_intercept`` (True,) only, i.e. not tuned."""

    name = "linear"
    srbench2021_size = "features"  # 2021's LinearRegression.py: complexity = None
    honours_time_limit = True  # closed form; finishes at once
    default_params = {"fit_intercept": True}
    hyper_params = [{"fit_intercept": True}]
    params_of = "sklearn.linear_model:LinearRegression"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.linear_model import LinearRegression

        est = LinearRegression(**self._params(params)).fit(X, y)
        expr = linear_expression(est.coef_, est.intercept_, feature_names)
        return FittedModel(predict=est.predict, expression=expr)


@builtin()
class SGD(_Sklearn):
    """SRBench 2021's SGDRegressor baseline, the row its published tables call "Linear".

    ``experiment/methods/SGDRegressor.py`` of 2021: ``SGDRegressor()`` tuned over alpha (1e-6,
    1e-4, 0.01, 1) x penalty (l2, l1, elasticnet); ``postprocessing/collate_blackbox_results.py``
    drops LinearRegression and renames SGDRegressor to "Linear". ``random_state`` is the seed, as
    ``evaluate_model.py`` sets it."""

    name = "sgd"
    honours_time_limit = True  # at most max_iter epochs over the data
    srbench2021_size = "features"  # SGDRegressor.py: complexity = None, so evaluate_model stored X's columns
    hyper_params = [{"alpha": a, "penalty": p} for a in (1e-06, 1e-04, 0.01, 1) for p in ("l2", "l1", "elasticnet")]
    contract = ContractTags(
        max_configurations=12, why="SRBench 2021's grid as published: 4 alphas x 3 penalties, over 2.0's limit of 4"
    )
    params_of = "sklearn.linear_model:SGDRegressor"

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.linear_model import SGDRegressor

        est = SGDRegressor(random_state=int(seed) % 2**32, **self._params(params)).fit(X, y)
        expr = linear_expression(est.coef_, float(np.ravel(est.intercept_)[0]), feature_names)
        return FittedModel(predict=est.predict, expression=expr, notes={"n_iter": int(est.n_iter_)})


@builtin()
class SGDSklearn024(SGD):
    """SRBench 2021's SGDRegressor baseline on scikit-learn 0.24.1, the version of SRBench 2021's
    ``environment.yml`` that made the published "Linear" row, in its own Python environment
    (``srtui methods install sgd-sklearn024`` builds it: numpy 1.23.5, Cython 0.29.37, then
    scikit-learn 0.24.1 compiled with ``--no-build-isolation``, a few minutes)."""

    name = "sgd-sklearn024"
    # 0.24's SGDRegressor._fit_regressor calls make_dataset(X, y, sample_weight) without its
    # random_state: make_dataset draws rng.randint(1, np.iinfo(np.int32).max) from numpy's
    # global generator, once per fit (today's passes random_state and draws nothing)
    fit_draws = (("randint", (1, 2**31 - 1)),)
    environment = ENV_SPECS["sklearn-0.24.1"].environment  # engine/methods/env_specs.py

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        import sys

        import sklearn

        fitted = super().fit(X, y, feature_names, seed, fit_budget, params)
        fitted.notes.update(python=sys.executable, scikit_learn=sklearn.__version__)  # which environment ran it
        return fitted


@builtin()
class Lasso(_Sklearn):
    name = "lasso"
    honours_time_limit = True  # a short regularisation path; finishes in seconds
    default_params = {"cv": 5, "max_iter": 10000}
    params_of = "sklearn.linear_model:LassoCV"
    hyper_params = [{"cv": 5, "max_iter": 10000, "n_alphas": 50}]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.linear_model import LassoCV

        est = LassoCV(random_state=int(seed) % 2**32, n_jobs=1, **self._params(params)).fit(X, y)
        expr = linear_expression(est.coef_, est.intercept_, feature_names)
        return FittedModel(predict=est.predict, expression=expr, notes={"alpha": float(est.alpha_)})


@builtin()
class Ridge(_Sklearn):
    name = "ridge"
    honours_time_limit = True
    default_params = {"alphas": (0.1, 1.0, 10.0)}
    params_of = "sklearn.linear_model:RidgeCV"
    hyper_params = [{"alphas": (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)}]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.linear_model import RidgeCV

        est = RidgeCV(**self._params(params)).fit(X, y)
        expr = linear_expression(est.coef_, est.intercept_, feature_names)
        return FittedModel(predict=est.predict, expression=expr, notes={"alpha": float(est.alpha_)})


@builtin()
class Poly2(_Sklearn):
    """Degree-2 polynomial features + least squares, exported term by term."""

    name = "poly2"
    honours_time_limit = True
    default_params = {"degree": 2}

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        from sklearn.linear_model import LinearRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import PolynomialFeatures

        p = self._params(params)
        poly = PolynomialFeatures(degree=int(p.get("degree", 2)), include_bias=False)
        est = make_pipeline(poly, LinearRegression()).fit(X, y)
        lin = est[-1]
        terms = [monomial(row, feature_names) for row in poly.powers_]
        expr = linear_expression(lin.coef_, lin.intercept_, terms)
        return FittedModel(predict=est.predict, expression=expr)


class _BlackBox(_Sklearn):
    family = "blackbox"
    honours_time_limit = False  # no internal clock; the launcher's wall limit applies

    def _make(self, seed: int, p: dict[str, Any]) -> Any:  # a scikit-learn estimator (no types)
        raise NotImplementedError

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        # numpy's RandomState takes seeds below 2**32
        est = self._make(int(seed) % 2**32, self._params(params)).fit(X, y)
        return FittedModel(predict=est.predict, expression=None)


@builtin()
class RandomForest(_BlackBox):
    name = "rf"
    preload_modules = ("sklearn.ensemble",)
    params_of = "sklearn.ensemble:RandomForestRegressor"
    default_params = {"n_estimators": 100}
    hyper_params = [
        {"n_estimators": 100, "max_features": 1.0, "min_samples_leaf": 1},
        {"n_estimators": 100, "max_features": 0.5, "min_samples_leaf": 1},
        {"n_estimators": 100, "max_features": 1.0, "min_samples_leaf": 5},
        {"n_estimators": 100, "max_features": 0.5, "min_samples_leaf": 5},
    ]

    def _make(self, seed: int, p: dict[str, Any]) -> Any:
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(random_state=seed, n_jobs=1, **p)


@builtin()
class GradientBoosting(_BlackBox):
    name = "gbr"
    preload_modules = ("sklearn.ensemble",)
    params_of = "sklearn.ensemble:GradientBoostingRegressor"
    default_params = {"n_estimators": 100, "learning_rate": 0.1}
    hyper_params = [
        {"n_estimators": 100, "learning_rate": 0.1, "max_depth": 3},
        {"n_estimators": 500, "learning_rate": 0.05, "max_depth": 3},
        {"n_estimators": 100, "learning_rate": 0.1, "max_depth": 5},
        {"n_estimators": 500, "learning_rate": 0.05, "max_depth": 5},
    ]

    def _make(self, seed: int, p: dict[str, Any]) -> Any:
        from sklearn.ensemble import GradientBoostingRegressor

        return GradientBoostingRegressor(random_state=seed, **p)


@builtin()
class MLP(_BlackBox):
    name = "mlp"
    params_of = "sklearn.neural_network:MLPRegressor"
    preload_modules = ("sklearn.neural_network", "sklearn.pipeline", "sklearn.preprocessing")
    default_params = {"hidden_layer_sizes": (100,), "max_iter": 2000}
    hyper_params = [
        {"hidden_layer_sizes": (100,), "alpha": 1e-4, "max_iter": 2000},
        {"hidden_layer_sizes": (100,), "alpha": 1e-2, "max_iter": 2000},
        {"hidden_layer_sizes": (100, 100), "alpha": 1e-4, "max_iter": 2000},
        {"hidden_layer_sizes": (100, 100), "alpha": 1e-2, "max_iter": 2000},
    ]

    def _make(self, seed: int, p: dict[str, Any]) -> Any:
        from sklearn.neural_network import MLPRegressor
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        # an MLP on unscaled inputs is a poor baseline; scaling is part of the model
        return make_pipeline(StandardScaler(), MLPRegressor(random_state=seed, **p))


@builtin()
class KNN(_BlackBox):
    name = "knn"
    params_of = "sklearn.neighbors:KNeighborsRegressor"
    preload_modules = ("sklearn.neighbors", "sklearn.pipeline", "sklearn.preprocessing")
    default_params = {"n_neighbors": 5}
    hyper_params = [
        {"n_neighbors": 3, "weights": "distance"},
        {"n_neighbors": 10, "weights": "uniform"},
        {"n_neighbors": 10, "weights": "distance"},
    ]

    def _make(self, seed: int, p: dict[str, Any]) -> Any:
        from sklearn.neighbors import KNeighborsRegressor
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), KNeighborsRegressor(n_jobs=1, **p))
