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
from srtui.engine.methods.base import ContractTags, Method
from srtui.engine.spec import FitBudget

FEATURES = ("a", "b", "c")
BUDGET = 2.0  # seconds a method is given; a method that honours it must stop within 10x + 30 s


#: the battery's checks: a method's ``contract.xfail_checks`` names them (ContractTags)
CHECKS = ("test_declared_attributes", "test_fit_predict_and_the_model_string_agree")


def _params(check: str) -> list:
    """Every registered method for ``check``; one whose tags expect it to fail it runs it as a
    strict xfail, with the reason it declares (no exception is kept here by name)."""
    out = []
    for name in registry.names():
        marks = [pytest.mark.optional] if name in registry.OPTIONAL else []
        why = registry.load(name).contract.xfail_checks.get(check)
        if why:
            marks.append(pytest.mark.xfail(strict=True, reason=why))
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


def test_the_registry_read_from_source_is_what_importing_the_package_declares() -> None:
    """srtui.engine.methods.registry lists the ``@builtin`` classes without importing them (it reads
    their source); importing every module of the package must declare exactly the same."""
    import importlib
    import pkgutil

    import srtui.engine.methods

    imported = {}
    for info in pkgutil.iter_modules(srtui.engine.methods.__path__):
        module = importlib.import_module(f"srtui.engine.methods.{info.name}")
        for obj in vars(module).values():
            declares = isinstance(obj, type) and issubclass(obj, Method) and "_declared_builtin" in obj.__dict__
            if declares and obj.__module__ == module.__name__:  # not a class another module imported
                imported[obj.name] = (f"{module.__name__}:{obj.__name__}", obj._declared_builtin)
    read = {d.name: (d.target, {"optional": d.optional, "default_sr": d.default_sr}) for d in registry.declared()}
    assert imported == read
    assert len(read) >= 20 and registry.OPTIONAL and registry.DEFAULT_SR  # the walk found the package's methods


def test_each_contract_exception_is_a_check_with_its_reason() -> None:
    for name in registry.names():
        tags = registry.load(name).contract
        assert set(tags.xfail_checks) <= set(CHECKS), name
        assert all(tags.xfail_checks.values()), name
        if tags != ContractTags():
            assert tags.why or tags.xfail_checks, f"{name} departs from the contract without saying why"
    # every parametrised check of the battery is one a tag may name (a new check is listed here)
    assert set(CHECKS) == {n for n, f in globals().items() if n.startswith("test_") and hasattr(f, "pytestmark")}


@pytest.mark.parametrize("name", _params("test_declared_attributes"))
def test_declared_attributes(name: str) -> None:
    method = registry.load(name)
    assert method.name == name and method.family in ("sr", "baseline", "blackbox") and method.licence
    # SRBench 2.0: at most 4 configurations besides the defaults, unless the method's tags say why
    assert len(method.hyper_params) <= method.contract.max_configurations


@pytest.mark.parametrize("name", _params("test_fit_predict_and_the_model_string_agree"))
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
