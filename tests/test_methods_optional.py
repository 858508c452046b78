"""Optional methods: run when installed (`srtui methods install NAME`), skip with the reason when not."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from engine.expression import parse_expression
from engine.methods import registry

NAMES = ["a", "b", "c"]

#: registry name -> importable module of the package
MODULES = {"rils-rols": "rils_rols", "hroch": "HROCH", "feyn": "feyn", "bingo": "bingo", "itea": "itea"}


def test_every_optional_method_has_an_install_recipe_and_lazy_module():
    import subprocess
    import sys

    assert set(MODULES) == set(registry.OPTIONAL)
    for name in registry.OPTIONAL:
        method = registry.load(name)
        assert getattr(method, "install_steps", None) and method.install_hint.startswith(
            f"srtui methods install {name}"
        )
        ok, why = method.availability()
        assert ok or f"srtui methods install {name}" in why
    code = f"import sys, engine.methods.optional; print([m for m in {list(MODULES.values())!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.optional
@pytest.mark.parametrize("name", sorted(MODULES))
def test_optional_method_fits_and_its_expression_is_its_model(name):
    if importlib.util.find_spec(MODULES[name]) is None:
        pytest.skip(f"{name} is not installed (srtui methods install {name})")
    method = registry.load(name)
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(100, 3))
    y = -1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    fitted = method.fit(X, y, NAMES, 1, 4.0, dict(method.default_params))
    pred = np.asarray(fitted.predict(X), dtype=float).reshape(-1)
    assert 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2) > 0.9
    assert fitted.expression is not None
    expr = parse_expression(fitted.expression, NAMES, fitted.dialect).evaluate(X)
    assert 1 - np.sum((pred - expr) ** 2) / np.sum((pred - pred.mean()) ** 2) > 0.999
