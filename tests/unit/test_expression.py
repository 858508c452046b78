"""The safe expression parser: accepted grammar, rejections, tree conventions, evaluation,
protected operators and the fidelity check."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sympy as sp
from numpy.typing import ArrayLike

from srtui.engine.expression import (
    DIALECTS,
    MAX_DEPTH,
    ExpressionError,
    ParsedExpression,
    compile_expression,
    feature_symbol,
    fidelity_check,
    parse_expression,
    to_sympy_tree,
)

F = ["x0", "x1", "x2"]
RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 3, size=(50, 3))


def ev(text: str, x: ArrayLike, features=("a", "b"), dialect: str = "python") -> np.ndarray:
    return parse_expression(text, list(features), dialect).evaluate(np.atleast_2d(np.asarray(x, dtype=float)))


def test_ground_truth_string_evaluates_like_numpy():
    p = parse_expression("0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1", F)
    want = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    np.testing.assert_allclose(p.evaluate(X), want, rtol=0, atol=1e-12)
    assert p.evaluate(X).dtype == np.float64
    assert p.features == tuple(F) and p.text == "0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1"


def test_symbols_are_real_and_shared():
    p = parse_expression("x0 + x1", F)
    assert p.expr is not None and p.expr.free_symbols == {feature_symbol("x0"), feature_symbol("x1")}
    assert all(s.is_real for s in p.expr.free_symbols)
    q = parse_expression("x1 + x0", F)
    assert q.expr is not None and sp.simplify(p.expr - q.expr) == 0


def test_tree_keeps_the_methods_structure():
    # no collecting of like terms, no constant folding: the size metric sees the printed tree
    p = parse_expression("x0 + x0", F)
    assert isinstance(p.expr, sp.Add) and len(p.expr.args) == 2
    q = parse_expression("2*3*x0", F)
    assert isinstance(q.expr, sp.Mul) and len(q.expr.args) == 3
    # chains are flattened to n-ary nodes; a literal's minus sign is part of the literal
    r = parse_expression("x0 + x1 - x2 + 4", F)
    assert isinstance(r.expr, sp.Add) and len(r.expr.args) == 4
    assert parse_expression("-2.5", F).expr == sp.Float(-2.5)
    assert parse_expression("x0 + x1*x2", F).n_nodes == 5
    assert parse_expression("sin(x0)", F).n_nodes == 2


def test_numbers_and_constants():
    assert ev("1e-3 + 2E2 + 7", [[0, 0]])[0] == pytest.approx(207.001)
    np.testing.assert_allclose(ev("pi + e", [[0, 0]]), [math.pi + math.e])
    # a feature named like a constant is the feature
    np.testing.assert_allclose(ev("e * 2", [[3.0]], features=["e"]), [6.0])


def test_function_whitelist_and_arity():
    x = np.array([[0.3, 0.7]])
    a, b = 0.3, 0.7
    cases = {
        "sin(a)+cos(b)+tan(a)": np.sin(a) + np.cos(b) + np.tan(a),
        "exp(a)+log(b)+sqrt(b)+abs(-a)": np.exp(a) + np.log(b) + np.sqrt(b) + a,
        "tanh(a)+asin(a)+acos(a)+atan(b)+sinh(a)+cosh(b)": np.tanh(a)
        + np.arcsin(a)
        + np.arccos(a)
        + np.arctan(b)
        + np.sinh(a)
        + np.cosh(b),
        "pow(a, b) + max(a, b, 0.5) + min(a, b) + sign(-b)": a**b + 0.7 + 0.3 - 1,
        "erf(a) + square(b) + cube(a)": 0.328626759 + b**2 + a**3,
        "log10(b) + log2(b) + exp2(a)": np.log10(b) + np.log2(b) + 2**a,
    }
    for text, want in cases.items():
        np.testing.assert_allclose(ev(text, x), [want], rtol=1e-8, err_msg=text)
    with pytest.raises(ExpressionError, match="takes 1 argument"):
        parse_expression("sin(a, b)", ["a", "b"])
    with pytest.raises(ExpressionError, match="at least 2"):
        parse_expression("max(a)", ["a", "b"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("__import__('os').system('true')", "named functions"),
        ("a.real", "attribute"),
        ("a[0]", "subscripts"),
        ("lambda: 1", "lambda"),
        ("a if b else 1", "conditional"),
        ("a < b", "comparisons"),
        ("a and b", "boolean"),
        ("'abc'", "string"),
        ("f'{a}'", "f-strings"),
        ("[a, b]", "list"),
        ("(a, b)", "tuples"),
        ("[i for i in a]", "comprehensions"),
        ("(y := a)", "assignment"),
        ("a ^ b", "xor"),
        ("a // b", "floor division"),
        ("a % b", "modulo"),
        ("~a", "unary operator"),
        ("not a", "unary operator"),
        ("True", "not a number"),
        ("1j", "complex"),
        ("1e999", "not finite"),
        ("q + a", "unknown name 'q'"),
        ("foo(a)", "unknown function 'foo'"),
        ("id(a)", "unknown function 'id'"),  # sympify would call Python's built-in id here
        ("sin", "used without arguments"),
        ("sin(a, key=1)", "keyword"),
        ("sin(*a)", "starred"),
        ("a +", "syntax error"),
        ("", "empty"),
        ("a $ b", "unexpected character"),
        ("a\x00", "unexpected character|unreadable"),
    ],
)
def test_rejections_are_one_line_expression_errors(text, message):
    with pytest.raises(ExpressionError, match=message) as info:
        parse_expression(text, ["a", "b"])
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_features_and_dialects():
    with pytest.raises(ExpressionError, match="identifier"):
        parse_expression("a", ["a-b"])
    with pytest.raises(ExpressionError, match="identifier"):
        parse_expression("a", ["lambda"])
    with pytest.raises(ExpressionError, match="unique"):
        parse_expression("a", ["a", "a"])
    with pytest.raises(ExpressionError, match="unknown dialect"):
        parse_expression("a", ["a"], "nope")
    with pytest.raises(ExpressionError, match="string"):
        parse_expression(3.0, ["a"])  # type: ignore[arg-type]
    assert set(DIALECTS) >= {"python", "pyoperon", "gplearn", "ffx", "bingo", "itea", "pysr"}


def test_too_large_keeps_text_and_refuses_to_evaluate():
    text = " + ".join(["x0"] * 3000)
    p = parse_expression(text, F, max_chars=1000)
    assert p.too_large and p.expr is None and p.text == text and p.n_nodes == 0
    with pytest.raises(ExpressionError, match="too large"):
        p.evaluate(X)
    with pytest.raises(ExpressionError, match="too large"):
        fidelity_check(p, X, X[:, 0], X[:, 0])


@pytest.mark.parametrize(
    "text",
    [
        "-" * 5000 + "x0",
        "sin(" * (MAX_DEPTH + 5) + "x0" + ")" * (MAX_DEPTH + 5),
        "(" * 1000 + "x0" + ")" * 1000,
        "x0**" * 300 + "x0",
        "abs(" * 6000 + "x0" + ")" * 6000,
    ],
)
def test_deep_nesting_is_an_expression_error_not_a_recursion_error(text):
    with pytest.raises(ExpressionError, match=r"nested|syntax"):
        parse_expression(text, F, max_chars=100_000)


def test_long_flat_sums_and_products_parse():
    n = 4000  # ffx prints long sums; 19,999 characters
    text = " + ".join(["x0"] * n)
    p = parse_expression(text, F)
    assert p.expr is not None and len(p.expr.args) == n
    np.testing.assert_allclose(p.evaluate(X[:3]), n * X[:3, 0])
    q = parse_expression("*".join(["1.0001"] * 2500) + "*x1", F)
    np.testing.assert_allclose(q.evaluate(X[:3]), 1.0001**2500 * X[:3, 1], rtol=1e-10)


def test_constant_broadcasts_and_floating_errors_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(parse_expression("2", F).evaluate(X[:4]), [2.0] * 4)
        out = parse_expression("log(x0) + 1/(x1 - x1) + exp(1000*x2)", F).evaluate(X)
        assert out.shape == (50,) and not np.isfinite(out).any()
        np.testing.assert_array_equal(parse_expression("1/0 + x0", F).evaluate(X[:2]), [np.inf, np.inf])
        assert np.isinf(parse_expression("10**400 * x0", F).evaluate(X[:2])).all()
        assert np.isnan(parse_expression("0**-1 - 0**-1 + x0", F).evaluate(X[:2])).all()
    with pytest.raises(ExpressionError, match="shape"):
        parse_expression("x0", F).evaluate(np.zeros((3, 2)))


def test_features_that_shadow_numpy_names_still_evaluate():
    names = ["select", "maximum", "float64", "e", "abs", "numpy"]
    x = np.array([[1.0, 2.0, 3.0, 4.0, -5.0, 6.0]])
    got = ev("max(select, maximum) + float64*e + abs(abs) + numpy", x, names)
    np.testing.assert_allclose(got, [2.0 + 12.0 + 5.0 + 6.0])


def test_max_min_broadcast_scalars_and_cbrt_is_real():
    x = np.array([[-8.0, 1.0], [27.0, -1.0]])
    np.testing.assert_allclose(ev("max(a, 0.5) + min(0.0, b)", x), [0.5 - 0.0, 27.0 - 1.0])
    np.testing.assert_allclose(ev("cbrt(a)", x), [-2.0, 3.0])


class TestGplearnProtectedOperators:
    """Exact values of gplearn's protected operators (gplearn/functions.py, threshold 0.001)."""

    @staticmethod
    def g(text, rows):
        return ev(text, np.array(rows, dtype=float), dialect="gplearn")

    def test_div(self):
        rows = [[3.0, 0.0], [3.0, 0.001], [3.0, -0.001], [3.0, 0.0011], [3.0, -1e-4], [3.0, np.nan], [3.0, 2.0]]
        np.testing.assert_array_equal(self.g("div(a, b)", rows), [1.0, 1.0, 1.0, 3.0 / 0.0011, 1.0, 1.0, 1.5])

    def test_log(self):
        rows = [[0.0, 0], [0.001, 0], [-0.001, 0], [0.002, 0], [-math.e, 0], [1e-300, 0]]
        np.testing.assert_array_equal(self.g("log(a)", rows), [0.0, 0.0, 0.0, np.log(0.002), 1.0, 0.0])

    def test_inv_sqrt_neg_sig(self):
        rows = [[0.0, 0], [0.0005, 0], [-4.0, 0], [0.01, 0]]
        np.testing.assert_array_equal(self.g("inv(a)", rows), [0.0, 0.0, -0.25, 1 / 0.01])
        np.testing.assert_array_equal(self.g("sqrt(a)", rows), [0.0, np.sqrt(0.0005), 2.0, np.sqrt(0.01)])
        np.testing.assert_array_equal(self.g("neg(a)", rows), [-0.0, -0.0005, 4.0, -0.01])
        np.testing.assert_allclose(self.g("sig(a)", rows), 1 / (1 + np.exp(-np.array([0.0, 0.0005, -4.0, 0.01]))))

    def test_nested_protection_in_one_tree(self):
        got = self.g("add(div(a, sub(b, b)), log(mul(a, 0.0)))", [[5.0, 2.0]])
        np.testing.assert_array_equal(got, [1.0 + 0.0])

    def test_prefix_tree_is_one_protected_function(self):
        p = parse_expression("div(X0, X1)", ["a", "b"], "gplearn")
        assert p.expr is not None and type(p.expr).__name__ == "pdiv" and not p.expr.has(sp.Piecewise)
        assert p.expr.free_symbols == {feature_symbol("a"), feature_symbol("b")}


def test_bingo_log_and_sqrt_take_abs():
    np.testing.assert_allclose(ev("log(X_0) + sqrt(X_1)", [[-math.e, -4.0]], dialect="bingo"), [3.0])


def test_compiled_functions_are_cached():
    p = parse_expression("sin(x0) * x1", F)
    assert compile_expression(p.expr, p.features) is compile_expression(p.expr, p.features)


class TestFidelity:
    def test_exact_model_has_fidelity_one(self):
        p = parse_expression("2*x0 - x1", F)
        y = 2 * X[:, 0] - X[:, 1] + RNG.normal(0, 0.1, len(X))
        res = fidelity_check(p, X, y, 2 * X[:, 0] - X[:, 1])
        assert res["fidelity_r2"] == pytest.approx(1.0) and not res["expression_mismatch"]
        assert 0.9 < res["r2_test_expr"] < 1.0 and res["max_abs_diff"] < 1e-12

    def test_wrong_expression_is_flagged(self):
        p = parse_expression("2*x0", F)
        res = fidelity_check(p, X, X[:, 1], 2 * X[:, 0] - X[:, 1])
        assert res["expression_mismatch"] and res["fidelity_r2"] < 0.999 and res["max_abs_diff"] > 1

    def test_constant_method_prediction_uses_exact_match(self):
        p = parse_expression("3.5", F)
        ok = fidelity_check(p, X, X[:, 0], np.full(len(X), 3.5))
        assert ok["fidelity_r2"] == 1.0 and not ok["expression_mismatch"]
        bad = fidelity_check(p, X, X[:, 0], np.full(len(X), 3.0))
        assert bad["fidelity_r2"] == 0.0 and bad["expression_mismatch"]

    def test_nonfinite_values_are_a_mismatch_not_a_crash(self):
        p = parse_expression("log(x0)", F)  # nan for negative x0
        pred = np.log(np.abs(X[:, 0]))
        res = fidelity_check(p, X, pred, pred)
        assert res["expression_mismatch"] and np.isnan(res["fidelity_r2"]) and np.isnan(res["r2_test_expr"])
        assert res["n_nonfinite"] == int((X[:, 0] < 0).sum())
        # the same nan rows on both sides agree
        same = fidelity_check(p, X, pred, p.evaluate(X))
        assert not same["expression_mismatch"]

    def test_row_count_mismatch_is_an_error(self):
        with pytest.raises(ExpressionError, match="rows"):
            fidelity_check(parse_expression("x0", F), X, X[:3, 0], X[:, 0])


def test_parsed_expression_is_frozen():
    p = parse_expression("x0", F)
    assert isinstance(p, ParsedExpression)
    with pytest.raises(AttributeError):
        p.text = "x1"  # type: ignore[misc]


def test_to_sympy_tree():
    assert to_sympy_tree("x0*x1", F) == parse_expression("x0*x1", F).expr
    with pytest.raises(ExpressionError, match="too large"):
        to_sympy_tree("x0 + " * 5000 + "x0", F)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_comment_cannot_hide_part_of_a_model(dialect):
    """``c # <anything>`` would show text that is never evaluated (a display spoof): refused."""
    with pytest.raises(ExpressionError, match="comment"):
        parse_expression("1.5 # \u202e)1x(nis*9999 + ", ["x1"], dialect)
