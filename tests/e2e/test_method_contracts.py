"""Every registered method (srtui.engine.methods.registry) through one battery, as scikit-learn's
``check_estimator`` runs every estimator: declared attributes, a fit within its time limit,
finite predictions of the right shape, and a model string the one parser reads that computes
what the method predicts (the fidelity check). Parametrised over the registry: a new method
gets the battery with no edit here; an optional one runs under ``-m optional`` when installed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from srtui.engine.expression import parse_expression
from srtui.engine.expression.fidelity import fidelity_check
from srtui.engine.methods import registry
from srtui.engine.methods.base import Method
from srtui.engine.spec import FitBudget

FEATURES = ("a", "b", "c")
BUDGET = 2.0  # seconds a method is given; a method that honours it must stop within 10x + 30 s


def _params() -> list:
    out = []
    for name in registry.names():
        marks = [pytest.mark.optional] if name in registry.OPTIONAL else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def _method(name: str) -> Method:
    method = registry.load(name)
    if method.environment is not None:
        pytest.skip(f"{name} runs in its own environment (srtui methods install {name}), not this interpreter")
    ok, why = method.availability()
    if not ok:
        pytest.skip(f"{name}: {why}")
    return method


def _data(n: int = 150, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    return X, 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1


@pytest.mark.parametrize("name", _params())
def test_declared_attributes(name: str) -> None:
    method = registry.load(name)
    assert method.name == name and method.family in ("sr", "baseline", "blackbox") and method.licence
    # SRBench 2.0: at most 4 configurations besides the defaults; sgd keeps SRBench 2021's 12
    assert len(method.hyper_params) <= (12 if name.startswith("sgd") else 4)


@pytest.mark.parametrize("name", _params())
def test_fit_predict_and_the_model_string_agree(name: str) -> None:
    method = _method(name)
    X, y = _data()
    Xt, _ = _data(seed=1)
    start = time.monotonic()
    fitted = method.fit(X, y, FEATURES, 3, FitBudget(BUDGET), dict(method.default_params))
    took = time.monotonic() - start
    if method.honours_time_limit:
        assert took < 10 * BUDGET + 30, f"{name} took {took:.1f} s of a {BUDGET} s budget"
    pred = np.asarray(fitted.predict(Xt), dtype=float)
    assert pred.shape == (len(Xt),) and np.isfinite(pred).all()
    if method.family == "blackbox":
        assert fitted.expression is None
        return
    assert fitted.expression is not None, f"{name} returns no model string"
    parsed = parse_expression(fitted.expression, FEATURES, fitted.dialect)
    check = fidelity_check(parsed, Xt, _data(seed=1)[1], pred)
    assert not check["expression_mismatch"], (name, fitted.expression, check)
