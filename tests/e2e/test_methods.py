"""Method adapters, called directly on tiny data: accuracy, exact expressions, determinism."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from srtui.engine.expression import parse_expression
from srtui.engine.methods import registry
from srtui.engine.methods.base import FittedModel, Method
from srtui.engine.spec import FitBudget

NAMES = ["a", "b", "c"]


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    y = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    return X, y


def _r2(y, p):
    return 1 - np.sum((y - p) ** 2) / np.sum((y - np.mean(y)) ** 2)


def _fit(name, X, y, budget=10.0, seed=3, **params) -> FittedModel:
    method = registry.load(name)
    return method.fit(X, y, NAMES, seed, FitBudget(budget), {**method.default_params, **params})


def _expr_pred(fitted: FittedModel, X):
    assert fitted.expression is not None
    return parse_expression(fitted.expression, NAMES, fitted.dialect).evaluate(X)


def test_registry_lists_every_decided_name_and_loads_lazily():
    expected = {
        "linear",
        "lasso",
        "ridge",
        "poly2",
        "dummy",
        "rf",
        "gbr",
        "mlp",
        "knn",
        "pyoperon",
        "gplearn",
        "ffx",
        "sgd",
        "rils-rols",
        "hroch",
        "feyn",
        "bingo",
        "itea",
    }
    assert expected <= set(registry.names())
    assert not any(n.startswith("probe-") for n in registry.names())
    for name in registry.names():
        m = registry.load(name)
        assert isinstance(m, Method) and m.name == name
        assert m.family in ("sr", "baseline", "blackbox")
        # SRBench 2.0: at most 4 besides the defaults, unless the method's contract tags say why
        assert len(m.hyper_params) <= m.contract.max_configurations, name
        assert m.licence


def test_unknown_method_is_a_one_line_error():
    with pytest.raises(registry.MethodError, match="unknown method 'nope'"):
        registry.load("nope")


def _of_family(family: str) -> list[str]:
    """The registry's installed methods of ``family`` running in this interpreter (no hand list)."""
    return [n for n in registry.names() if (m := registry.load(n)).family == family and m.environment is None]


@pytest.mark.parametrize("name", _of_family("baseline"))
def test_symbolic_baselines_export_their_exact_model(name):
    X, y = _data()
    fitted = _fit(name, X, y)
    Xt, _ = _data(seed=1)
    np.testing.assert_allclose(_expr_pred(fitted, Xt), fitted.predict(Xt), rtol=1e-9, atol=1e-9)


def test_poly2_recovers_the_interaction_and_linear_does_not():
    X, y = _data()
    Xt, yt = _data(seed=1)
    assert _r2(yt, _fit("poly2", X, y).predict(Xt)) > 0.999999
    assert _r2(yt, _fit("linear", X, y).predict(Xt)) < 0.99


@pytest.mark.parametrize("name", _of_family("blackbox"))
def test_black_box_baselines_return_no_expression_and_are_seeded(name):
    X, y = _data()
    a, b = _fit(name, X, y, seed=5), _fit(name, X, y, seed=5)
    assert a.expression is None and registry.load(name).family == "blackbox"
    assert _r2(y, a.predict(X)) > 0.8
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_pyoperon_fits_uses_feature_names_keeps_front_and_is_deterministic():
    X, y = _data()
    a = _fit("pyoperon", X, y, generations=10, population_size=200, pool_size=200)
    b = _fit("pyoperon", X, y, generations=10, population_size=200, pool_size=200)
    assert a.expression == b.expression
    assert a.expression is not None and "X1" not in a.expression and any(n in a.expression for n in NAMES)
    assert _r2(y, a.predict(X)) > 0.99
    expr = _expr_pred(a, X)
    assert _r2(a.predict(X), expr) > 0.999999
    assert len(a.pareto) >= 2
    for p in a.pareto:
        parse_expression(p.expression, NAMES, a.dialect)
        assert p.complexity > 0 and p.loss >= 0


def test_pyoperon_honours_its_time_budget():
    X, y = _data(n=300)
    t0 = time.monotonic()
    fitted = _fit("pyoperon", X, y, budget=2.0, generations=100000, max_evaluations=10**9)
    # far below the 100000 generations it would run unbounded; margin for a loaded 2-core host
    assert time.monotonic() - t0 < 2.0 + 10
    assert fitted.notes["max_time"] == 1


def test_ffx_prints_its_model_exactly_and_keeps_the_front():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(60, 2))
    y = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 1
    method = registry.load("ffx")
    a, b = (method.fit(X, y, NAMES[:2], 3, FitBudget(10.0), {}) for _ in range(2))
    assert a.expression == b.expression
    assert _r2(y, a.predict(X)) > 0.99 and a.expression is not None
    expr = parse_expression(a.expression, NAMES[:2], a.dialect).evaluate(X)
    np.testing.assert_allclose(expr, a.predict(X), rtol=1e-9, atol=1e-9)
    assert len(a.pareto) >= 2 and a.pareto[-1].expression == a.expression


def test_ffx_basis_printer_covers_every_operator():
    from ffx.core.bases import OperatorBase, ProductBase, SimpleBase
    from ffx.core.constants import OP_ABS, OP_GTH, OP_LOG10, OP_LTH, OP_MAX0, OP_MIN0
    from ffx.core.models import FFXModel

    from srtui.engine.methods.ffx_adapter import model_expression

    x0, x1 = SimpleBase(0, 1), SimpleBase(1, 0.5)
    bases_n = [
        OperatorBase(x0, OP_ABS),
        OperatorBase(x0, OP_MAX0),
        OperatorBase(x0, OP_MIN0),
        OperatorBase(SimpleBase(2, 1), OP_LOG10),
        OperatorBase(x0, OP_GTH, thr=0.123456789),
        OperatorBase(x0, OP_LTH, thr=-1.987654321),
        ProductBase(x0, x1),
        SimpleBase(1, -1.0),
    ]
    model = FFXModel([0.5] + [1.1 + i for i in range(len(bases_n))], bases_n, [0.25], [SimpleBase(2, 1)], NAMES)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(-2, 2, 50), rng.uniform(0.5, 2, 50), rng.uniform(0.5, 2, 50)])
    expr = model_expression(model, NAMES)
    np.testing.assert_allclose(parse_expression(expr, NAMES, "python").evaluate(X), model.simulate(X), rtol=1e-12)


def test_gplearn_translates_every_program_of_a_population_exactly():
    """All built-in operators, data near gplearn's 0.001 protection threshold: exact agreement."""
    from gplearn.genetic import SymbolicRegressor

    from srtui.engine.methods.gplearn_adapter import program_to_expression

    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(200, 3))
    X[:20] = rng.uniform(-0.002, 0.002, size=(20, 3))  # both sides of |x| > 0.001
    y = X[:, 0] / (X[:, 1] + 2) + np.log(np.abs(X[:, 2]) + 1)
    ops = ("add", "sub", "mul", "div", "sqrt", "log", "abs", "neg", "inv", "max", "min", "sin", "cos", "tan")
    est = SymbolicRegressor(population_size=300, generations=2, function_set=ops, random_state=0, n_jobs=1)
    est.fit(X, y)
    checked = 0
    for prog in est._programs[-1]:
        expr = program_to_expression(prog.program, NAMES)
        got = parse_expression(expr, NAMES, "gplearn").evaluate(X)
        want = prog.execute(X)
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-9, atol=1e-9, err_msg=expr)
        checked += 1
    assert checked == 300


def test_gplearn_translation_keeps_full_precision_constants():
    from gplearn.functions import _function_map

    from srtui.engine.methods.gplearn_adapter import GplearnError, program_to_expression

    prog = [_function_map["add"], 0, _function_map["div"], 0.123456789012345, 2]
    assert program_to_expression(prog, NAMES) == "add(a, div(0.123456789012345, c))"
    assert program_to_expression([1], NAMES) == "b"
    with pytest.raises(GplearnError):
        program_to_expression([_function_map["add"], 0], NAMES)


def test_gplearn_adapter_is_deterministic_and_stops_within_budget():
    X, y = _data(n=80)
    kw = dict(population_size=200, generations=4)
    a, b = _fit("gplearn", X, y, **kw), _fit("gplearn", X, y, **kw)
    assert a.expression == b.expression and a.notes["generations"] == 4
    assert _r2(a.predict(X), _expr_pred(a, X)) > 0.999999
    assert a.pareto and all(p.complexity >= 1 for p in a.pareto)
    t0 = time.monotonic()
    slow = _fit("gplearn", X, y, budget=1.5, population_size=300, generations=10000)
    assert time.monotonic() - t0 < 1.5 + 10  # 10000 generations would take minutes; margin for load
    assert 1 <= slow.notes["generations"] < 10000


def test_gplearn_warm_start_growth_equals_one_fit():
    """Growing generations under the budget must not change the result (reproducibility)."""
    from gplearn.fitness import make_fitness
    from gplearn.genetic import SymbolicRegressor

    from srtui.engine.methods.gplearn_adapter import (
        Gplearn,
        affine_fit,
        linear_scaling_mse,
        program_to_expression,
        scaled_expression,
    )

    X, y = _data(n=80)
    params = {k: v for k, v in Gplearn.default_params.items() if k != "linear_scaling"}
    params.update(population_size=200, generations=4)
    metric = make_fitness(function=linear_scaling_mse, greater_is_better=False, wrap=False)
    one = SymbolicRegressor(random_state=3, n_jobs=1, metric=metric, **params).fit(X, y)
    grown = _fit("gplearn", X, y, population_size=200, generations=4, seed=3)
    text = program_to_expression(one._program.program, NAMES)
    assert grown.expression == scaled_expression(*affine_fit(y, one.predict(X)), text)


def test_affine_fit_and_linear_scaling_mse_by_hand():
    from srtui.engine.methods.gplearn_adapter import (
        affine_fit,
        linear_scaling_mse,
        scaled_expression,
    )

    f = np.array([0.0, 1.0, 2.0, 3.0])
    a, b = affine_fit(3 + 2 * f, f)
    assert (a, b) == pytest.approx((3.0, 2.0))
    # y = [0, 1, 1, 3] on f = [0, 1, 2, 3]: cov 1.125 / var 1.25 = slope 0.9, intercept
    # 1.25 - 0.9*1.5 = -0.1; residuals 0.1, 0.2, -0.7, 0.4
    y = np.array([0.0, 1.0, 1.0, 3.0])
    assert affine_fit(y, f) == pytest.approx((-0.1, 0.9))
    assert linear_scaling_mse(y, f, np.ones(4)) == pytest.approx((0.01 + 0.04 + 0.49 + 0.16) / 4)
    # weights: a zero weight drops the row (here the outlier), leaving an exact line
    assert linear_scaling_mse(np.array([0.0, 1.0, 9.0, 3.0]), f, np.array([1.0, 1.0, 0.0, 1.0])) == pytest.approx(0)
    # a constant or non-finite program is scaled to the mean of y, never to NaN
    assert affine_fit(y, np.full(4, 7.0)) == (1.25, 0.0)
    assert affine_fit(y, np.array([0.0, np.inf, 1.0, 2.0])) == (1.25, 0.0)
    assert linear_scaling_mse(y, np.full(4, 7.0), np.ones(4)) == pytest.approx(np.var(y))
    assert scaled_expression(1.25, 0.0, "add(a, b)") == "1.25"
    assert scaled_expression(0.5, -2.0, "add(a, b)") == "0.5 + -2.0*add(a, b)"


def test_gplearn_scaled_model_front_and_plain_mode_are_exact():
    """The model and every front point are their affine fit of a program; losses are their MSE."""
    X, y = _data(n=80)
    fitted = _fit("gplearn", X, y, population_size=200, generations=5)
    np.testing.assert_allclose(_expr_pred(fitted, X), fitted.predict(X), rtol=1e-12, atol=1e-12)
    assert fitted.expression is not None and fitted.notes["scale"] != 0 and " + " in fitted.expression
    for point in fitted.pareto:
        pred = parse_expression(point.expression, NAMES, "gplearn").evaluate(X)
        assert np.mean((y - pred) ** 2) == pytest.approx(point.loss, rel=1e-9, abs=1e-12)
    plain = _fit("gplearn", X, y, population_size=200, generations=3, linear_scaling=False)
    assert plain.expression is not None and "scale" not in plain.notes
    assert not plain.expression.startswith(tuple("0123456789-"))
    np.testing.assert_allclose(_expr_pred(plain, X), plain.predict(X), rtol=1e-12, atol=1e-12)


def test_gplearn_generation_cap_follows_the_nominal_budget():
    """Start-up taken out of the budget must not change the work done (same job, same model)."""
    from srtui.engine.methods.gplearn_adapter import (
        MIN_GENERATIONS,
        PROGRAMS_PER_SECOND,
        generation_cap,
    )

    expected = int(8.0 * PROGRAMS_PER_SECOND / 400)
    assert generation_cap(FitBudget(8.0), 400) == expected
    assert generation_cap(FitBudget(6.3, nominal=8.0), 400) == expected
    assert generation_cap(FitBudget(7.1, nominal=8.0), 400) == expected
    assert generation_cap(FitBudget(0.5), 1000) == MIN_GENERATIONS


def test_listing_does_not_import_method_packages():
    import subprocess

    code = (
        "import sys; from srtui.cli.methods_cmd import method_rows; method_rows(); "
        "print(sorted(m for m in ('pyoperon', 'gplearn', 'ffx', 'sklearn', 'jax') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
