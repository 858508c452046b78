"""Properties of the safe parser: any input either parses or raises ExpressionError (never any
other exception), trees of allowed nodes always parse and evaluate, and no payload ever runs."""

from __future__ import annotations

import ast
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srtui.engine.expression import (
    DIALECTS,
    ExpressionError,
    ParsedExpression,
    parse_expression,
)

FEATURES = ["x0", "x1", "x2"]
X = np.random.default_rng(0).uniform(-2, 2, size=(7, 3))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parse_or_error(text: str, dialect: str = "python") -> ParsedExpression | None:
    try:
        p = parse_expression(text, FEATURES, dialect)
    except ExpressionError as exc:
        assert str(exc) and "\n" not in str(exc)
        return None
    assert isinstance(p, ParsedExpression)
    return p


# -- random strings ------------------------------------------------------------------------------
ALPHABET = st.sampled_from(
    [*list("x012.e+-*/^|()[], _'\"abcdsinlogXpw:;=<>!@#$%&~`{}\\\n\t"), "x0", "sin(", "**", "id(", "__"]
)


@SETTINGS
@given(st.lists(ALPHABET, max_size=40).map("".join), st.sampled_from(DIALECTS))
def test_random_strings_parse_or_raise_expression_error(text, dialect):
    p = parse_or_error(text, dialect)
    if p is not None:
        out = p.evaluate(X)
        assert out.dtype == np.float64 and out.shape == (len(X),)


@SETTINGS
@given(st.text(max_size=60), st.sampled_from(DIALECTS))
def test_random_unicode_parse_or_raise_expression_error(text, dialect):
    parse_or_error(text, dialect)


# -- random ASTs of allowed and forbidden nodes ----------------------------------------------------
ALLOWED_FUNCS = {
    "sin": 1,
    "cos": 1,
    "exp": 1,
    "log": 1,
    "sqrt": 1,
    "abs": 1,
    "tanh": 1,
    "pow": 2,
    "max": 2,
    "min": 2,
    "square": 1,
}
leaf_allowed = st.one_of(
    st.sampled_from([*FEATURES, "pi", "e"]).map(lambda n: ast.Name(n, ast.Load())),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: ast.Constant(abs(v))),
    st.integers(0, 100).map(ast.Constant),
)


def _allowed_node(children):
    binop = st.builds(
        lambda left, op, right: ast.BinOp(left, op, right),
        children,
        st.sampled_from([ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.Pow()]),
        children,
    )
    unary = st.builds(lambda op, o: ast.UnaryOp(op, o), st.sampled_from([ast.USub(), ast.UAdd()]), children)
    call = st.sampled_from(sorted(ALLOWED_FUNCS)).flatmap(
        lambda f: st.lists(children, min_size=ALLOWED_FUNCS[f], max_size=ALLOWED_FUNCS[f]).map(
            lambda args: ast.Call(ast.Name(f, ast.Load()), args, [])
        )
    )
    return st.one_of(binop, unary, call)


allowed_trees = st.recursive(leaf_allowed, _allowed_node, max_leaves=25)

leaf_forbidden = st.one_of(
    st.just(ast.Name("__import__", ast.Load())),
    st.just(ast.Name("os", ast.Load())),
    st.just(ast.Constant("rm -rf /")),
    st.just(ast.Constant(True)),
    st.just(ast.Constant(1j)),
    st.just(ast.Name("id", ast.Load())),
)


def _any_node(children):
    return st.one_of(
        _allowed_node(children),
        st.builds(lambda v: ast.Attribute(v, "system", ast.Load()), children),
        st.builds(lambda v, i: ast.Subscript(v, i, ast.Load()), children, children),
        st.builds(lambda b: ast.Lambda(ast.arguments([], [], None, [], [], None, []), b), children),
        st.builds(lambda a, b: ast.Compare(a, [ast.Lt()], [b]), children, children),
        st.builds(lambda a, b: ast.BinOp(a, ast.BitXor(), b), children, children),
        st.builds(lambda a, b: ast.BinOp(a, ast.FloorDiv(), b), children, children),
        st.builds(lambda f, a: ast.Call(f, [a], []), children, children),
        st.builds(lambda a: ast.Call(ast.Name("eval", ast.Load()), [a], []), children),
        st.builds(lambda a: ast.Call(ast.Name("sin", ast.Load()), [a], [ast.keyword("k", a)]), children),
        st.builds(lambda a, b: ast.Tuple([a, b], ast.Load()), children, children),
        st.builds(lambda a, b, c: ast.IfExp(a, b, c), children, children, children),
        st.builds(lambda a: ast.ListComp(a, [ast.comprehension(ast.Name("i", ast.Store()), a, [], 0)]), children),
    )


any_trees = st.recursive(st.one_of(leaf_allowed, leaf_forbidden), _any_node, max_leaves=25)


def _unparse(node: ast.expr) -> str:
    return ast.unparse(ast.fix_missing_locations(ast.Expression(node)))


@SETTINGS
@given(allowed_trees)
def test_trees_of_allowed_nodes_always_parse_and_evaluate(tree):
    text = _unparse(tree)
    p = parse_expression(text, FEATURES, max_chars=100_000)
    out = p.evaluate(X)
    assert out.dtype == np.float64 and out.shape == (len(X),)
    assert p.n_nodes >= 1


@SETTINGS
@given(any_trees, st.sampled_from(DIALECTS))
def test_trees_with_forbidden_nodes_parse_or_raise(tree, dialect):
    text = _unparse(tree)
    p = parse_or_error(text, dialect)
    if p is not None:
        p.evaluate(X)


# -- payloads: nothing is ever executed --------------------------------------------------------------
def _payloads(path: str) -> list[str]:
    return [
        f"__import__('os').system('touch {path}')",
        f"open('{path}', 'w').write('x')",
        f"eval(\"__import__('os').system('touch {path}')\")",
        f"exec(\"open('{path}','w')\")",
        f"().__class__.__bases__[0].__subclasses__()[0]('{path}')",
        f"(lambda: __import__('os').system('touch {path}'))()",
        f"[__import__('os').system('touch {path}') for _ in x0]",
        f"x0 + __import__('os').system('touch {path}')",
        f"sin(x0) if __import__('os').system('touch {path}') else x1",
        f"Function('system')('touch {path}')",
        f"x0 ^ __import__('os').system('touch {path}')",
        f"|__import__('os').system('touch {path}')|",
        f"id(__import__('os').system('touch {path}'))",
        f"sqrt.abs(__import__('os').system('touch {path}'))",
        f"div(X0, __import__('os').system('touch {path}'))",
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_payloads_never_execute(tmp_path, dialect):
    marker = tmp_path / "PWNED"
    for payload in _payloads(str(marker)):
        with pytest.raises(ExpressionError):
            parse_expression(payload, FEATURES, dialect)
        assert not marker.exists(), payload
    # features named like dangerous builtins are plain variables, never calls
    p = parse_expression("__import__ + eval * 2", ["__import__", "eval"], dialect)
    np.testing.assert_allclose(p.evaluate(np.array([[1.0, 2.0]])), [5.0])
    assert not marker.exists()


@SETTINGS
@given(allowed_trees, st.integers(0, 14), st.sampled_from(DIALECTS))
def test_payload_inside_valid_expressions_never_executes(tmp_path_factory, tree, which, dialect):
    marker = tmp_path_factory.mktemp("pwn") / "PWNED"
    payload = _payloads(str(marker))[which]
    text = f"({_unparse(tree)}) + ({payload})"
    parse_or_error(text, dialect)
    assert not os.path.exists(marker)
