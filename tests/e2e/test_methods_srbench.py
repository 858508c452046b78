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

from srtui.engine.expression import ExpressionError, parse_expression
from srtui.engine.methods import registry
from srtui.engine.methods.base import FittedModel
from srtui.engine.methods.srbench_dir import SRBenchError, SRBenchMethod, expand_hyper_params
from srtui.engine.methods.srbench_eval import SCALERS_NOTE, ScalerStats, composed, over_task_features
from srtui.engine.spec import MODEL_CAP, FitBudget

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
    fitted = method.fit(X, y, names, 7, FitBudget(30.6), {})
    # SRBench sets the first time attribute the estimator has, in whole seconds; the folder's
    # import already spent some of the budget, and 10% is kept for predicting and printing
    assert fitted.notes["time_attribute"] == "max_time" and fitted.notes["time_set"] in range(20, 28)
    assert method.module().est.max_time == fitted.notes["time_set"]
    assert method.honours_time_limit
    assert fitted.notes["complexity"] == 2 * 9 + 1
    expr = parse_expression(_in_task_units(fitted, names), names, fitted.dialect).evaluate(X)
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


def test_method_dir_runs_through_srtui_run(method_dir, tmp_path):
    ws = tmp_path / "ws"
    env = {**os.environ, "SRTUI_WORKSPACE": str(ws)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--method-dir",
            str(method_dir),
            "--methods",
            "TimedPoly",
            "--tasks",
            "smoke-interaction",
            "--time-limit",
            "30",
            "--workspace",
            str(ws),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    (row,) = [r for r in json.loads(out.stdout) if r["method"] == "TimedPoly"]
    assert row["status"] == "ok", row
    assert row["r2_test"] > 0.999999 and row["fidelity_r2"] > 0.999999


# -- evaluate_model.py's steps, on folders written here --------------------------------------------
STEPS_PY = textwrap.dedent(
    """
    import numpy as np
    from sklearn.linear_model import LinearRegression


    class Recorder(LinearRegression):
        def __init__(self, fit_intercept=True, timeout=99, random_state=None, tag="default"):
            super().__init__(fit_intercept=fit_intercept)
            self.timeout = timeout
            self.random_state = random_state
            self.tag = tag

        def fit(self, X, y):
            self.seen_type_ = type(X).__name__
            self.seen_rows_ = len(y)
            self.seen_y_mean_ = float(np.mean(y))
            self.seen_tag_ = self.tag
            return super().fit(np.asarray(X), y)

        def predict(self, X):
            return super().predict(np.asarray(X))


    est = Recorder()


    def model(est):  # the one-argument form: no X, the folder names features itself
        names = ["u", "v", "w"]
        return " + ".join([repr(float(est.intercept_))] + [f"{float(c)!r}*{n}" for c, n in zip(est.coef_, names)])


    def pre_train(est, X, y):
        est.set_params(tag="pre_train saw %d rows" % len(y))


    eval_kwargs = {"max_train_samples": 50, "pre_train": pre_train, "test_params": {"tag": "test"},
                   "scale_x": False, "scale_y": False, "use_dataframe": USE_DF}
    """
)


def _steps_folder(tmp_path: Path, name: str = "steps", use_df: bool = True, tuned: str | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "regressor.py").write_text(STEPS_PY.replace("USE_DF", repr(use_df)))
    if tuned is not None:
        (folder / "_params.py").write_text(tuned)
    return folder


def _linear_data(n: int = 120):
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 5, size=(n, 3))
    return X, 3.0 * X[:, 0] - 2.0 * X[:, 1] + 0.5 * X[:, 2] + 40.0


def test_evaluate_model_steps_in_srbench_order(tmp_path):
    X, y = _linear_data()
    method = SRBenchMethod(_steps_folder(tmp_path))
    fitted = method.fit(X, y, ["u", "v", "w"], 11, FitBudget(30.0), {"srbench": {"scaling": "folder"}})
    est = method.module().est
    # SRBench subsamples with the global generator it seeded with the job's seed
    np.random.seed(11)
    rows = np.random.choice(np.arange(len(X)), size=50, replace=False)
    assert est.seen_rows_ == 50 and est.seen_y_mean_ == pytest.approx(float(np.mean(y[rows])))
    assert est.seen_type_ == "WritableFrame" and est.random_state == 11
    assert est.seen_tag_ == "pre_train saw 50 rows"  # test_params only in test mode
    assert fitted.notes["time_attribute"] == "timeout" and est.timeout in range(20, 28)
    assert fitted.notes["scale_x"] is False and fitted.notes["scale_y"] is False
    # model(est) with one argument; the string over the names the folder printed
    assert fitted.expression is not None
    parsed = parse_expression(fitted.expression, ["u", "v", "w"], fitted.dialect)
    np.testing.assert_allclose(parsed.evaluate(X), fitted.predict(X), rtol=1e-9)

    test_mode = SRBenchMethod(_steps_folder(tmp_path, "steps2"))
    test_mode.fit(X, y, ["u", "v", "w"], 11, FitBudget(30.0), {"srbench": {"test": True}})
    assert test_mode.module().est.seen_tag_ == "test"


def test_numpy_for_the_methods_srbench_feeds_arrays(tmp_path):
    X, y = _linear_data()
    for folder in (_steps_folder(tmp_path, "a", use_df=False), _steps_folder(tmp_path, "my-bingo")):
        method = SRBenchMethod(folder)
        fitted = method.fit(X, y, ["u", "v", "w"], 1, FitBudget(5.0), {})
        assert method.module().est.seen_type_ == "ndarray" and fitted.notes["use_dataframe"] is False


def test_tuned_params_from_the_folder(tmp_path):
    X, y = _linear_data()
    method = SRBenchMethod(_steps_folder(tmp_path, tuned="params = {'tag': 'tuned', 'timeout': 7}\n"))
    fitted = method.fit(X, y, ["u", "v", "w"], 1, FitBudget(12.0), {"srbench": {"tuned": True}})
    est = method.module().est
    # tuned params come before the time budget, which SRBench sets last
    assert est.seen_tag_ == "tuned" and est.timeout in range(8, 11) and fitted.notes["tuned_params"]["tag"] == "tuned"
    missing = SRBenchMethod(_steps_folder(tmp_path, "untuned"))
    fitted = missing.fit(X, y, ["u", "v", "w"], 1, FitBudget(12.0), {"srbench": {"tuned": True}})
    assert "_params.py" in fitted.notes["tuned_error"]  # SRBench warns and runs it untuned


def test_reference_scaling_maps_predictions_back_and_the_model_to_raw_features(method_dir):
    X, y = _linear_data(200)
    y = y + 0.4 * X[:, 0] * X[:, 1]
    fitted = SRBenchMethod(method_dir).fit(X, y, ["u", "v", "w"], 3, FitBudget(10.0), {})
    assert fitted.notes["scale_x"] and fitted.notes["scale_y"]
    # handed back as printed, over the standardised u, v, w, with the scalers' statistics: the
    # driver composes them (issue 58: the worker needs no parser in a method's environment)
    assert fitted.notes[SCALERS_NOTE]["x"] is not None and fitted.notes[SCALERS_NOTE]["y"] is not None
    np.testing.assert_allclose(fitted.predict(X), y, rtol=1e-9)
    model = _in_task_units(fitted, ["u", "v", "w"])
    assert fitted.expression is not None and model != fitted.expression and "u" in fitted.expression
    parsed = parse_expression(model, ["u", "v", "w"], fitted.dialect)
    np.testing.assert_allclose(parsed.evaluate(X), fitted.predict(X), rtol=1e-9)


def _in_task_units(fitted: FittedModel, names: list[str]) -> str:
    """The model as the driver composes it with the scalers the worker recorded (outcome_check)."""
    assert fitted.expression is not None
    stats = ScalerStats.from_note(fitted.notes.get(SCALERS_NOTE), len(names))
    return composed(fitted.expression, names, stats, MODEL_CAP)


def _ridge_folder(tmp_path: Path, model_returns: str, extra: str = "") -> Path:
    """A folder whose model(est, X) returns the given string."""
    folder = tmp_path / "ridge"
    folder.mkdir()
    (folder / "regressor.py").write_text(
        "from sklearn.linear_model import Ridge\nest = Ridge()\ndef "
        f"model(est, X):\n    return {model_returns!r}\n{extra}"
    )
    return folder


def test_black_box_folders_and_not_implemented(tmp_path):
    X, y = _linear_data()
    folder = _ridge_folder(tmp_path, "not implemented", "def complexity(est):\n    return est.coef_.size + 1\n")
    fitted = SRBenchMethod(folder).fit(X, y, ["u", "v", "w"], 1, FitBudget(5.0), {})
    assert fitted.expression is None and fitted.notes["symbolic_model"] == "not implemented"
    assert fitted.notes["complexity"] == 4.0


def test_numbered_names_become_the_task_features():
    none = ScalerStats()
    assert over_task_features("2*X0 + X2^2", ["u", "v", "w"], "srbench", none) == "2 * u + w ** 2"
    assert over_task_features("2*u", ["u", "v", "w"], "srbench", none) == "2*u"


def test_run_options_in_suite_and_cli(tmp_path, method_dir):
    from srtui.tasks.suites import SuiteError, suite_from_dict

    base = {"tasks": ["smoke-linear"], "methods": ["linear"], "seeds": [1]}
    assert suite_from_dict({**base, "srbench": {"tuned": True}}, "s").srbench == {"tuned": True}
    with pytest.raises(SuiteError, match="scaling must be one of"):
        suite_from_dict({**base, "srbench": {"scaling": "yes"}}, "s")
    with pytest.raises(SuiteError, match="unknown"):
        suite_from_dict({**base, "srbench": {"tunde": True}}, "s")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            "smoke",
            "--method-dir",
            str(method_dir),
            "--methods",
            "TimedPoly",
            "--srbench-scaling",
            "sometimes",
            "--dry-run",
            "--workspace",
            str(tmp_path / "ws"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "scaling must be one of" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_unreadable_model_string_reaches_the_parser_as_printed(tmp_path):
    X, y = _linear_data()
    fitted = SRBenchMethod(_ridge_folder(tmp_path, 'u +* __import__("os")')).fit(
        X, y, ["u", "v", "w"], 1, FitBudget(5.0), {}
    )
    assert fitted.expression == 'u +* __import__("os")'  # the driver's parser rejects it: invalid_model
    with pytest.raises(ExpressionError):
        parse_expression(fitted.expression, ["u", "v", "w"], fitted.dialect)
