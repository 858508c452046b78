"""Per-dialect tables: how each method prints its models, and what its operators compute.

A dialect is data, not code that rewrites strings: a set of token rules (applied by
``srtui.engine.expression.tokens`` on Python tokens, never by regex on raw text), a variable numbering
scheme, and a function table that maps each printed function name to its arity and to the
sympy tree that computes *exactly* what the method computes. A protected operator is one
unevaluated sympy function (``pdiv``, ``plog``, ``pinv``, ``rcbrt``) that
``srtui.engine.expression.evaluate`` computes with numpy exactly as the method does: its argument
appears once in the tree, so nesting costs linear time and memory (a ``Piecewise`` repeats its
argument in the condition and sympy folds nested ones exponentially).

Sources of the semantics (checked numerically against the installed packages in the tests):

- gplearn 0.4.3 ``gplearn/functions.py``: div/log/inv are protected at ``|x| > 0.001``, sqrt and
  log take ``abs``; programs print as prefix calls with ``X0..Xn`` (from 0) and ``%.3f`` constants.
- pyoperon 0.6 ``get_model_string``: infix with ``^`` for powers, ``X1..Xn`` (from 1) unless
  names are passed; ``cbrt`` is the real cube root.
- ffx 2.1 ``str2``: infix with ``^``, ``log10``, hinge ``max(0, ...)``.
- bingo (nasa/bingo ``string_generation.py`` CONSOLE_PRINT_MAP and ``operator_eval.py``):
  ``)(`` for products, ``^`` for powers, ``|x|`` for abs, ``X_0..`` from 0; log and sqrt take abs.
- itea (itea-python 1.1.2 ``ITExpr.to_str``): ``w*f(x_0^2 * x_1^-1) + ... + b`` with transformation
  names ``id`` (identity), ``sqrt.abs``, log, exp, sin, cos, tanh...; the Haskell ITEA prints
  capitalised names (``Id``, ``SqrtAbs``).
- pysr (SymbolicRegression.jl ``string_tree``): infix with ``^``, ``x0..`` from 0, ``square``,
  ``cube``, ``neg``, ``inv``.
- srbench: what an SRBench method folder's ``model()`` returns, a sympy-style string over the
  feature names (SRBench reads it with ``parse_expr``, whose ``^`` is a power); its gplearn folder
  prints gplearn's programs with capitalised names (``Add``, ``Div``, ``Log``...), which compute
  gplearn's protected operators. A method that drops the DataFrame's column names (ffx 2.1 from
  PyPI; SRBench installs a fork that keeps them) prints ``X0..`` in the order of the columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import sympy as sp

Builder = Callable[..., sp.Expr]

#: threshold of gplearn's protected operators (``np.abs(x) > 0.001``)
GPLEARN_EPS = 0.001


def _pow(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return sp.Pow(a, b, evaluate=False)


def _neg(a: sp.Expr) -> sp.Expr:
    if isinstance(a, sp.Number):
        return -a
    return sp.Mul(sp.S.NegativeOne, a, evaluate=False)


def _div(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return sp.Mul(a, _pow(b, sp.S.NegativeOne), evaluate=False)


def _fn(f: Callable[..., sp.Expr]) -> Builder:
    return lambda a: f(a, evaluate=False)


def _log_base(base: int) -> Builder:
    return lambda a: _div(sp.log(a, evaluate=False), sp.log(sp.Integer(base), evaluate=False))


def _minmax(f: Callable[..., sp.Expr]) -> Builder:
    return lambda *args: f(*args, evaluate=False)


def _sigmoid(a: sp.Expr) -> sp.Expr:
    return _div(sp.S.One, sp.Add(sp.S.One, sp.exp(_neg(a), evaluate=False), evaluate=False))


class ProtectedOperator(sp.Function):
    """An operator sympy never evaluates or rewrites (sympy's default ``Application.eval``
    returns None: nothing to override); ``NUMPY`` (below) computes it."""


# -- gplearn's protected operators, computed as gplearn/functions.py computes them --------------
class pdiv(ProtectedOperator):  # lower case: printed like the model's own operator names
    """gplearn's ``div``: ``a / b`` where ``|b| > 0.001``, else 1."""

    nargs = 2


class plog(ProtectedOperator):
    """gplearn's ``log``: ``log|a|`` where ``|a| > 0.001``, else 0."""

    nargs = 1


class pinv(ProtectedOperator):
    """gplearn's ``inv``: ``1 / a`` where ``|a| > 0.001``, else 0."""

    nargs = 1


class rcbrt(ProtectedOperator):
    """The real cube root of numpy.cbrt / std::cbrt (sympy's cbrt is the principal root)."""

    nargs = 1


def _gp_div(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return pdiv(a, b, evaluate=False)


def _gp_log(a: sp.Expr) -> sp.Expr:
    return plog(a, evaluate=False)


def _gp_inv(a: sp.Expr) -> sp.Expr:
    return pinv(a, evaluate=False)


def _real_cbrt(a: sp.Expr) -> sp.Expr:
    return rcbrt(a, evaluate=False)


def _sqrt_abs(a: sp.Expr) -> sp.Expr:
    return sp.sqrt(sp.Abs(a, evaluate=False), evaluate=False)


def _log_abs(a: sp.Expr) -> sp.Expr:
    return sp.log(sp.Abs(a, evaluate=False), evaluate=False)


def _identity(a: sp.Expr) -> sp.Expr:
    return a


#: name -> (arity, builder); arity -1 means "two or more" (max/min)
COMMON: dict[str, tuple[int, Builder]] = {
    "sin": (1, _fn(sp.sin)),
    "cos": (1, _fn(sp.cos)),
    "tan": (1, _fn(sp.tan)),
    "exp": (1, _fn(sp.exp)),
    "log": (1, _fn(sp.log)),
    "sqrt": (1, lambda a: sp.sqrt(a, evaluate=False)),
    "abs": (1, _fn(sp.Abs)),
    "tanh": (1, _fn(sp.tanh)),
    "sinh": (1, _fn(sp.sinh)),
    "cosh": (1, _fn(sp.cosh)),
    "asin": (1, _fn(sp.asin)),
    "acos": (1, _fn(sp.acos)),
    "atan": (1, _fn(sp.atan)),
    "asinh": (1, _fn(sp.asinh)),
    "acosh": (1, _fn(sp.acosh)),
    "atanh": (1, _fn(sp.atanh)),
    "arcsin": (1, _fn(sp.asin)),
    "arccos": (1, _fn(sp.acos)),
    "arctan": (1, _fn(sp.atan)),
    "sign": (1, _fn(sp.sign)),
    "erf": (1, _fn(sp.erf)),
    "square": (1, lambda a: _pow(a, sp.Integer(2))),
    "cube": (1, lambda a: _pow(a, sp.Integer(3))),
    "cbrt": (1, _real_cbrt),
    "log10": (1, _log_base(10)),
    "log2": (1, _log_base(2)),
    "exp2": (1, lambda a: _pow(sp.Integer(2), a)),
    "pow": (2, _pow),
    "max": (-1, _minmax(sp.Max)),
    "min": (-1, _minmax(sp.Min)),
}


@dataclass(frozen=True)
class Dialect:
    name: str
    #: print ``^`` for powers (translated to ``**`` at token level)
    caret_power: bool = False
    #: bingo: ``)(`` is a product and ``|x|`` is abs
    juxtaposed_products: bool = False
    abs_bars: bool = False
    #: itea-python: ``sqrt.abs(`` is one function name
    dotted_names: dict[tuple[str, str], str] = field(default_factory=dict)
    #: variable numbering when the model does not use the feature names: (prefix, first index)
    numbering: tuple[tuple[str, int], ...] = ()
    functions: dict[str, tuple[int, Builder]] = field(default_factory=lambda: dict(COMMON))


def _with(**extra: tuple[int, Builder]) -> dict[str, tuple[int, Builder]]:
    table = dict(COMMON)
    table.update(extra)
    return table


_GPLEARN = _with(
    add=(2, lambda a, b: sp.Add(a, b, evaluate=False)),
    sub=(2, lambda a, b: sp.Add(a, _neg(b), evaluate=False)),
    mul=(2, lambda a, b: sp.Mul(a, b, evaluate=False)),
    div=(2, _gp_div),
    sqrt=(1, _sqrt_abs),
    log=(1, _gp_log),
    inv=(1, _gp_inv),
    neg=(1, _neg),
    sig=(1, _sigmoid),
    max=(2, _minmax(sp.Max)),
    min=(2, _minmax(sp.Min)),
)

_ITEA = _with(
    id=(1, _identity),
    sqrtabs=(1, _sqrt_abs),
    sqrtAbs=(1, _sqrt_abs),
    SqrtAbs=(1, _sqrt_abs),
    Id=(1, _identity),
    Sin=COMMON["sin"],
    Cos=COMMON["cos"],
    Tan=COMMON["tan"],
    Tanh=COMMON["tanh"],
    Sqrt=COMMON["sqrt"],
    Log=COMMON["log"],
    Exp=COMMON["exp"],
)

#: gplearn's function names as SRBench's gplearn folder capitalises them
_SRBENCH = _with(**{name.title(): entry for name, entry in _GPLEARN.items()})

DIALECT_TABLE: dict[str, Dialect] = {
    "python": Dialect("python"),
    "pyoperon": Dialect(
        "pyoperon",
        caret_power=True,
        numbering=(("X", 1),),
        functions=_with(logabs=(1, _log_abs), sqrtabs=(1, _sqrt_abs)),
    ),
    "gplearn": Dialect("gplearn", numbering=(("X", 0),), functions=_GPLEARN),
    "ffx": Dialect("ffx", caret_power=True, numbering=(("x", 0),)),
    "bingo": Dialect(
        "bingo",
        caret_power=True,
        juxtaposed_products=True,
        abs_bars=True,
        numbering=(("X_", 0),),
        functions=_with(log=(1, _log_abs), sqrt=(1, _sqrt_abs)),
    ),
    "itea": Dialect(
        "itea",
        caret_power=True,
        dotted_names={("sqrt", "abs"): "sqrtabs"},
        numbering=(("x_", 0), ("x", 0)),
        functions=_ITEA,
    ),
    "srbench": Dialect("srbench", caret_power=True, numbering=(("X", 0),), functions=_SRBENCH),
    "pysr": Dialect(
        "pysr",
        caret_power=True,
        numbering=(("x", 0),),
        functions=_with(
            neg=(1, _neg),
            inv=(1, lambda a: _pow(a, sp.S.NegativeOne)),
            relu=(1, lambda a: sp.Max(sp.S.Zero, a, evaluate=False)),
        ),
    ),
}

DIALECTS: tuple[str, ...] = tuple(DIALECT_TABLE)


@cache
def feature_symbol(name: str) -> sp.Symbol:
    """The sympy symbol of a feature: ``Symbol(name, real=True)`` everywhere in srtui."""
    return sp.Symbol(name, real=True)
