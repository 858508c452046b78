"""scikit-learn baselines. Linear models are exported symbolically from their coefficients."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from engine.methods.base import FittedModel, Method


def linear_expression(coef: np.ndarray, intercept: float, terms: Sequence[str]) -> str:
    """``intercept + c1*term1 + ...`` with full-precision (repr) constants; zero terms dropped."""
    parts = [repr(float(intercept))]
    for c, term in zip(np.ravel(coef), terms):
        if c != 0.0:
            parts.append(f"{float(c)!r}*{term}")
    return " + ".join(parts).replace("+ -", "- ")


class Linear(Method):
    name = "linear"
    family = "baseline"
    licence = "BSD-3-Clause (scikit-learn)"
    honours_time_limit = True  # closed form; finishes at once
    requires = ("scikit-learn",)

    def fit(self, X, y, feature_names, seed, time_budget, params: dict[str, Any]) -> FittedModel:
        from sklearn.linear_model import LinearRegression

        est = LinearRegression(**params).fit(X, y)
        expr = linear_expression(est.coef_, est.intercept_, feature_names)
        return FittedModel(predict=est.predict, expression=expr)
