"""SRBench method folders (`--method-dir`): loaded unmodified, time budget set SRBench's way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine.expression import parse_expression
from engine.methods import registry
from engine.methods.srbench_dir import SRBenchError, SRBenchMethod, expand_hyper_params

REGRESSOR_PY = textwrap.dedent(
    '''
    """An SRBench-shaped method: a scikit-learn estimator with a max_time attribute."""
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures


    class TimedPoly(LinearRegression):
        def __init__(self, fit_intercept=True, max_time=3600, random_state=None):
            super().__init__(fit_intercept=fit_intercept)
            self.max_time = max_time
            self.random_state = random_state

        def fit(self, X, y):
            self.columns_ = list(X.columns)  # SRBench passes a DataFrame by default
            self.poly_ = PolynomialFeatures(2, include_bias=False).fit(X.values)
            self.seen_max_time_ = self.max_time
            return super().fit(self.poly_.transform(X.values), y)

        def predict(self, X):
            return super().predict(self.poly_.transform(X.values))


    est = TimedPoly()
    hyper_params = [{"fit_intercept": (True, False)}]


    def model(est, X):
        terms = [repr(float(est.intercept_))]
        for c, powers in zip(est.coef_, est.poly_.powers_):
            mono = "*".join(n if p == 1 else n + "**2" for n, p in zip(X.columns, powers) if p)
            terms.append(repr(float(c)) + "*" + mono)
        return " + ".join(terms)


    def complexity(est):
        return 2 * len(est.coef_) + 1
    '''
)


@pytest.fixture()
def method_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "TimedPoly"
    folder.mkdir()
    (folder / "regressor.py").write_text(REGRESSOR_PY)
    return folder


def test_folder_runs_unmodified_with_budget_and_seed(method_dir):
    method = registry.load(registry.SRBENCH_PREFIX + str(method_dir))
    assert isinstance(method, SRBenchMethod) and method.name == "TimedPoly"
    assert method.availability() == (True, "")
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(100, 3))
    y = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    names = ["x0", "x1", "x2"]
    fitted = method.fit(X, y, names, 7, 7.6, {})
    # SRBench sets the first time attribute the estimator has, keeping an int an int
    assert fitted.notes["time_attribute"] == "max_time" and fitted.notes["time_set"] == 7
    assert method.honours_time_limit
    assert fitted.notes["complexity"] == 2 * 9 + 1
    expr = parse_expression(fitted.expression, names, fitted.dialect).evaluate(X)
    np.testing.assert_allclose(expr, fitted.predict(X), rtol=1e-9, atol=1e-9)
    assert np.allclose(fitted.predict(X), y)
    assert method.hyper_params == [{"fit_intercept": True}, {"fit_intercept": False}]


def test_version_is_a_hash_of_regressor_py(method_dir):
    a = SRBenchMethod(method_dir).version()
    (method_dir / "regressor.py").write_text(REGRESSOR_PY + "\n# changed\n")
    assert a.startswith("regressor.py@") and SRBenchMethod(method_dir).version() != a


def test_not_a_method_folder_is_a_clear_error(tmp_path):
    method = SRBenchMethod(tmp_path)
    ok, why = method.availability()
    assert not ok and "regressor.py" in why
    with pytest.raises(SRBenchError, match="not an SRBench method folder"):
        method.module()
    (tmp_path / "regressor.py").write_text("x = 1\n")
    with pytest.raises(SRBenchError, match="does not define 'est'"):
        SRBenchMethod(tmp_path).module()


def test_hyper_params_grid_expands_and_is_capped():
    grid = [{"a": (1, 2, 3), "b": (True, False)}]
    assert len(expand_hyper_params(grid)) == 4
    assert expand_hyper_params({"a": 1}) == [{"a": 1}]
    assert expand_hyper_params(None) == []


@pytest.mark.slow
def test_method_dir_runs_through_srtui_run(method_dir, tmp_path):
    ws = tmp_path / "ws"
    env = {**os.environ, "SRTUI_WORKSPACE": str(ws)}
    run = subprocess.run(
        [sys.executable, "-m", "srtui", "run", "smoke", "--method-dir", str(method_dir), "--methods", "TimedPoly",
         "--tasks", "smoke-interaction", "--time-limit", "30", "--workspace", str(ws)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )
    (row,) = [r for r in json.loads(out.stdout) if r["method"] == "TimedPoly"]
    assert row["status"] == "ok", row
    assert row["r2_test"] > 0.999999 and row["fidelity_r2"] > 0.999999
