"""Issue 27: parsing a model costs linear time and memory in its length, in every dialect.

gplearn's protected ``div`` was a sympy ``Piecewise`` whose condition repeats the denominator;
nested in denominators sympy folded it exponentially (a real 254-character gplearn model took 45 s,
deeper ones hours, in the driver). Each protected operator is now one unevaluated function,
computed by numpy with the values the ``Piecewise`` trees gave (compared here on random inputs).
"""

from __future__ import annotations

import random
import time

import numpy as np
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srtui.engine.expression import DIALECTS, parse_expression
from srtui.engine.expression.dialects import DIALECT_TABLE
from srtui.engine.expression.evaluate import evaluate_expr
from srtui.engine.expression.parser import feature_symbol

NAMES = ["a", "b", "c"]
REAL_MODEL = (
    "div(add(div(add(div(add(X0, X0), sub(div(X1, X0), X1)), X1), sub(div(X1, div(add(X0, X0), sub(div(X1, X0), "
    "X1))), X2)), X2), sub(div(X1, div(add(div(add(X0, X0), sub(div(X1, X0), X1)), X1), sub(div(X1, div(add(X0, "
    "X0), sub(div(X1, X0), X1))), X2))), X0))"
)


def test_the_real_254_character_gplearn_model_parses_in_under_a_second() -> None:
    assert len(REAL_MODEL) == 254
    t0 = time.process_time()  # CPU time: the same on a busy machine as on a quiet one
    parsed = parse_expression(REAL_MODEL, NAMES, "gplearn")
    parsed.evaluate(np.random.default_rng(0).uniform(-1, 1, size=(50, 3)))
    assert time.process_time() - t0 < 1.0


# -- the values: today's Piecewise trees, built here the way dialects.py built them ---------------
_EPS = sp.Float(0.001)


def _old(name: str, args: list[sp.Expr]) -> sp.Expr:
    a = args[0]
    if name == "div":
        b = args[1]
        quotient = sp.Mul(a, sp.Pow(b, -1, evaluate=False), evaluate=False)
        return sp.Piecewise((quotient, sp.Abs(b) > _EPS), (sp.S.One, True))
    if name == "log":
        return sp.Piecewise((sp.log(sp.Abs(a), evaluate=False), sp.Abs(a) > _EPS), (sp.S.Zero, True))
    if name == "inv":
        return sp.Piecewise((sp.Pow(a, -1, evaluate=False), sp.Abs(a) > _EPS), (sp.S.Zero, True))
    if name == "cbrt":
        return sp.Mul(sp.sign(a), sp.Pow(sp.Abs(a), sp.Rational(1, 3), evaluate=False), evaluate=False)
    if name == "add":
        return sp.Add(a, args[1], evaluate=False)
    if name == "mul":
        return sp.Mul(a, args[1], evaluate=False)
    raise AssertionError(name)


def _gplearn(name: str, args: list[np.ndarray]) -> np.ndarray:
    """gplearn 0.4.3 functions.py, written out (the method's own values)."""
    a = args[0]
    with np.errstate(all="ignore"):
        if name == "div":
            return np.where(np.abs(args[1]) > 0.001, np.divide(a, args[1]), 1.0)
        if name == "log":
            return np.where(np.abs(a) > 0.001, np.log(np.abs(a)), 0.0)
        if name == "inv":
            return np.where(np.abs(a) > 0.001, 1.0 / a, 0.0)
        return np.add(a, args[1]) if name == "add" else np.multiply(a, args[1])


def _random_program(
    rng: random.Random, depth: int, X: np.ndarray, old: bool = False
) -> tuple[str, sp.Expr | None, np.ndarray]:
    """A gplearn program, the tree the old constructors gave for it (if ``old``; deep ones raise
    in sympy), and gplearn's values."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.3:
            value = rng.choice([0.0, 0.001, -0.001, 0.0011, rng.uniform(-2, 2)])
            return repr(value), sp.Float(value), np.full(len(X), value)
        i = rng.randrange(3)
        return f"X{i}", feature_symbol(NAMES[i]), X[:, i]
    name = rng.choice(["div", "log", "inv", "add", "mul", "div", "log"])
    arity = 2 if name in ("div", "add", "mul") else 1
    kids = [_random_program(rng, depth - 1, X, old) for _ in range(arity)]
    text = f"{name}({', '.join(k[0] for k in kids)})"
    tree = _old(name, [k[1] for k in kids if k[1] is not None]) if old else None
    return text, tree, _gplearn(name, [k[2] for k in kids])


def _inputs(rng: np.random.Generator) -> np.ndarray:
    X = rng.uniform(-2, 2, size=(300, 3))
    X[:30] = rng.choice([0.0, 0.001, -0.001, 0.0009, 0.0011, 1e-300, np.nan, np.inf, -np.inf], size=(30, 3))
    return X


def test_protected_operators_give_gplearns_values_on_random_programs_and_inputs() -> None:
    rng = random.Random(27)
    X = _inputs(np.random.default_rng(27))
    for _ in range(300):
        text, _, expected = _random_program(rng, 5, X)
        # equal up to the order of additions (the printer writes a + (b + c) as a + b + c)
        np.testing.assert_allclose(parse_expression(text, NAMES, "gplearn").evaluate(X), expected, rtol=1e-12)
        titled = text.replace("div(", "Div(").replace("log(", "Log(").replace("inv(", "Inv(")
        titled = titled.replace("add(", "Add(").replace("mul(", "Mul(")
        np.testing.assert_allclose(parse_expression(titled, NAMES, "srbench").evaluate(X), expected, rtol=1e-12)


def test_protected_operators_give_todays_values_where_today_was_right() -> None:
    """Two levels deep (where sympy's folding of nested ``Piecewise`` did not yet go wrong) the
    values equal the old trees' up to the last bit (their evaluated Abs rewrote ``|k*x|`` as
    ``k*|x|``). Deeper, the old trees gave nan or 0 where gplearn gives a number (e.g.
    ``inv(div(0.52, 0.0))`` is 1, the old tree said 0; ``inv(div(x, x))`` at ``x = inf`` is 0, the
    old tree said nan): there the values are gplearn's (above)."""
    rng = random.Random(5)
    X = _inputs(np.random.default_rng(5))
    X = X[np.isfinite(X).all(axis=1)]  # inf/inf = nan inside a protected operator: see above
    for _ in range(300):
        text, old_tree, _ = _random_program(rng, 2, X, old=True)
        new = parse_expression(text, NAMES, "gplearn").evaluate(X)
        assert old_tree is not None
        old = evaluate_expr(old_tree, tuple(NAMES), X)
        np.testing.assert_allclose(new, old, rtol=1e-12, atol=0, equal_nan=True, err_msg=text)


def test_real_cube_root_gives_todays_values() -> None:
    X = _inputs(np.random.default_rng(3))
    old = evaluate_expr(_old("cbrt", [feature_symbol("a")]), tuple(NAMES), X)
    for dialect in ("python", "pyoperon", "pysr"):
        new = parse_expression("cbrt(a)", NAMES, dialect).evaluate(X)
        np.testing.assert_array_equal(new, old)


# -- every dialect's operators, nested at random: time at most linear in the length ---------------
def _operators(dialect: str) -> list[tuple[str, int]]:
    table = DIALECT_TABLE[dialect].functions
    ops = [(name, 2 if arity == -1 else arity) for name, arity in ((n, e[0]) for n, e in table.items())]
    power = "^" if DIALECT_TABLE[dialect].caret_power else "**"
    return ops + [(op, -2) for op in ("+", "-", "*", "/", power)]


def _nested(dialect: str, plan: list[tuple[int, int]], leaf: str) -> str:
    """``plan`` = (operator index, argument position) per level: the nested part goes there."""
    ops = _operators(dialect)
    text = leaf
    for op_index, position in plan:
        name, arity = ops[op_index % len(ops)]
        if arity == -2:
            text = f"({text}) {name} {leaf}" if position % 2 else f"{leaf} {name} ({text})"
            continue
        args = [leaf] * max(arity, 1)
        args[position % len(args)] = text
        text = f"{name}({', '.join(args)})"
    return text


def _cost(text: str, dialect: str) -> float:
    X = np.linspace(-2, 2, 30).reshape(10, 3)
    t0 = time.process_time()  # CPU time: a busy machine does not move it
    parsed = parse_expression(text, NAMES, dialect)
    parsed.evaluate(X)
    return time.process_time() - t0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(DIALECTS),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 1)), min_size=8, max_size=8),
)
def test_nesting_any_dialects_operators_costs_linear_time(dialect: str, block: list[tuple[int, int]]) -> None:
    """The same random block of 8 nestings, repeated 2 and 8 times: 4x the length must cost far
    less than the 2**48-fold an exponential construction would; the budget leaves room for a
    loaded machine (and a cold compile cache) but not for any super-linear growth."""
    short, long = _nested(dialect, block * 2, "a"), _nested(dialect, block * 8, "a")
    assert len(long) <= 4.5 * len(short) + 20
    _cost(short, dialect)  # warm: imports, printer set-up
    t_short = min(_cost(short, dialect) for _ in range(2))
    t_long = _cost(long, dialect)
    assert t_long < 12 * t_short + 0.5, (dialect, len(long), t_short, t_long)
    assert t_long < 2.0, (dialect, len(long), t_long)


# -- the check of a model runs in a process of its own under a deadline, never in the driver ------
def test_a_model_check_past_its_deadline_is_recorded_with_its_accuracy(workspace, tmp_path) -> None:
    from conftest import results_json, srtui

    folder = tmp_path / "methods" / "longmodel"
    folder.mkdir(parents=True)
    # a linear fit whose model string takes far more than the deadline's CPU time to read
    (folder / "regressor.py").write_text(
        "from sklearn.linear_model import LinearRegression\n"
        "est = LinearRegression()\n"
        "def model(est, X=None):\n"
        "    return ' + '.join(f'{i}.5*sin(x0 + {i})' for i in range(900))\n"
    )
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        "longmodel",
        "--method-dir",
        str(folder),
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "--workspace",
        str(workspace),
        env={"SRTUI_CHECK_TIMEOUT_S": "0.05"},  # 50 ms of the checker's CPU: this model takes about 0.4 s
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["method"]: r for r in results_json(workspace)}
    linear = rows["longmodel"]
    assert linear["status"] == "ok" and linear["r2_test"] > 0.9, linear
    assert "model check was stopped (timeout" in linear["model_error"], linear
    assert linear["fidelity_r2"] is None
