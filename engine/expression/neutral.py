"""One neutral rendering of a model, for readers who must not recognise the method that wrote it.

Each method writes its models in its own hand: protected operators (gplearn's ``div``/``log``,
pyoperon's and bingo's ``sqrt(|x|)``), ``X0``/``x_0``/feature names, ``**`` or ``^``, constants
as ``%.3f`` or with 17 digits, its own term order and parentheses. An expert who has seen the
methods recognises them. This module removes every such choice from the parsed tree
(:func:`srtui.engine.expression.parse_expression`, the one parser; never the raw string):

- protected operators become the plain operation (``pdiv(a, b)`` is ``a/b``, ``plog(a)`` is
  ``log(a)``, ``sqrt(|a|)`` is ``sqrt(a)``...); :data:`FOOTNOTE`, shown with *every* model of
  every method, says that division, log and square root may be protected;
- variables are the task's feature names (the parser maps ``X0``/``X1``/``x_0`` to them);
- the tree is rebuilt with sympy's own evaluation (numbers folded, like terms collected,
  ``-1*(a + b)`` distributed), so one sympy printer gives one term order and one spacing;
- every constant is rounded to :data:`SIGNIFICANT` significant digits and printed in one format
  (:func:`format_number`); a rounded constant that is a whole number below 1000 is an integer,
  so ``2.0``, ``2.000`` and ``2.0000001`` all read ``2``.

The rendering is algebraically the model the method returned (up to the rounding of constants
and the protection the footnote names). Hostile input can take sympy long to rebuild or print:
callers run :func:`neutral_forms` under a deadline (``srtui.reviews.items`` does).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import sympy as sp
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.stringpict import prettyForm
from sympy.printing.str import StrPrinter

from srtui.engine.expression.dialects import GPLEARN_EPS, pdiv, pinv, plog, rcbrt
from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.parser import parse_expression

#: significant digits of every constant shown, whatever the method printed
SIGNIFICANT = 3
#: the one note shown under every model of every method
FOOTNOTE = (
    "Division, log and square root may be protected (as the method defines it): "
    "near or below zero they give a finite value, not an error."
)
#: function names the neutral one-line form writes (sympy's names; ``max``/``min`` as written here)
FUNCTIONS = frozenset(
    {"sin", "cos", "tan", "exp", "log", "sqrt", "Abs", "tanh", "sinh", "cosh", "asin", "acos", "atan"}
    | {"asinh", "acosh", "atanh", "sign", "erf", "max", "min", "Piecewise"}
)
#: a rounded constant below this that is a whole number is shown as an integer
_INTEGER_BELOW = 1000


def format_number(value: float, digits: int = SIGNIFICANT) -> str:
    """``digits`` significant digits, positional below 1000 and from 0.0001 (``0.500``, ``12.3``,
    ``0.00123``), else ``1.36e-11`` / ``4.57e6``: one format whatever the method printed."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(float(f"{value:.{digits - 1}e}"))))
    if -4 <= exponent < 3:
        return f"{value:.{max(0, digits - 1 - exponent)}f}"
    mantissa, exp = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exp)}"


def _rounded(value: float) -> sp.Expr:
    r = float(format_number(value))
    if r == int(r) and abs(r) < _INTEGER_BELOW:
        return sp.Integer(int(r))
    return sp.Float(r)


def _protected_at(arg: sp.Expr) -> bool:
    """A constant argument where gplearn's protection applies (|a| <= 0.001): the value is known."""
    return bool(arg.is_number) and arg.is_real is not False and abs(float(arg)) <= GPLEARN_EPS


def _plain_operations(e: sp.Expr) -> sp.Expr:
    """The tree with protected operators as the plain operation, rebuilt with sympy's evaluation."""
    if not e.args:
        return e
    args = [_plain_operations(a) for a in e.args]
    if isinstance(e, (pdiv, pinv, plog)) and _protected_at(args[-1]):
        return sp.Integer(1) if isinstance(e, pdiv) else sp.Integer(0)  # gplearn's value there, not zoo
    if isinstance(e, pdiv):
        return args[0] / args[1]
    if isinstance(e, pinv):
        return 1 / args[0]
    if isinstance(e, plog):  # of a constant, the value the method computes (log|a|, never I*pi)
        return sp.log(sp.Abs(args[0]) if args[0].is_number else args[0])
    if isinstance(e, rcbrt):
        return sp.cbrt(args[0])
    if isinstance(e, sp.log) and isinstance(args[0], sp.Abs):
        return sp.log(args[0].args[0])
    if isinstance(e, sp.Pow) and isinstance(args[0], sp.Abs) and args[1] == sp.Rational(1, 2):
        return sp.sqrt(args[0].args[0])
    return e.func(*args)


def _numbers(e: sp.Expr) -> sp.Expr:
    """Every constant rounded: numeric subtrees (``log(10)``, ``pi``, ``2/5``) as one number;
    an exponent that is a small fraction stays one (``x**0.5`` and ``sqrt(x)`` print alike)."""
    if isinstance(e, sp.Integer):
        return e
    if e.is_number:
        try:
            value = complex(e)
        except (TypeError, ValueError):
            return e
        if value.imag != 0 or not math.isfinite(value.real):
            return e
        return _rounded(value.real)
    if isinstance(e, sp.Pow):
        base, exp = _numbers(e.args[0]), e.args[1]
        if exp.is_number and not exp.is_Integer:
            value = float(exp)
            frac = sp.Rational(value).limit_denominator(6)
            exp = frac if abs(float(frac) - value) < 1e-9 else _rounded(value)
        return base**exp
    if not e.args:
        return e
    return e.func(*[_numbers(a) for a in e.args])


def neutral_tree(expr: sp.Expr) -> sp.Expr:
    """The parsed model (:func:`srtui.engine.expression.parse_expression`'s tree) as it is shown."""
    return _numbers(_plain_operations(expr))


def size(expr: sp.Expr) -> int:
    """Nodes of the tree (every operator, function, variable and number once), as SRBench counts."""
    return sum(1 for _ in sp.preorder_traversal(expr))


class _NeutralStr(StrPrinter):  # type: ignore[misc]  # sympy ships no types
    def _print_Float(self, expr: Any) -> str:
        return format_number(float(expr))

    def _print_Max(self, expr: Any) -> str:
        return f"max({self.stringify(expr.args, ', ')})"

    def _print_Min(self, expr: Any) -> str:
        return f"min({self.stringify(expr.args, ', ')})"


class _NeutralPretty(PrettyPrinter):  # type: ignore[misc]
    def _print_Float(self, expr: Any) -> Any:
        return prettyForm(format_number(float(expr)))

    def _print_Max(self, expr: Any) -> Any:  # sympy's own falls back to str(): its numbers unrounded
        return self._print_Function(expr, func_name="max")

    def _print_Min(self, expr: Any) -> Any:
        return self._print_Function(expr, func_name="min")

    def _print_Symbol(self, expr: Any, bold_name: bool = False) -> Any:
        return prettyForm(expr.name)  # feature names as written: no subscripts made of '_' or digits


def plain(expr: sp.Expr) -> str:
    """One line, sympy's order and spacing (``0.500 + 2*x0 - 3*x1``)."""
    return str(_NeutralStr({"order": None}).doprint(expr))


def pretty(expr: sp.Expr, unicode: bool = True) -> str:
    """sympy's 2-D print (fractions, powers), never wrapped (the screen wraps it)."""
    return str(_NeutralPretty({"use_unicode": unicode, "wrap_line": False}).doprint(expr))


@lru_cache(maxsize=1)
def _black_box() -> dict[str, Any]:
    return {"expression": "", "expression_ascii": "", "plain": "", "size": None, "black_box": True}


def neutral_forms(text: str, features: tuple[str, ...], dialect: str, black_box_chars: int) -> dict[str, Any]:
    """{expression, expression_ascii, plain, size, black_box}: the model as shown (unicode and ASCII
    2-D prints, one line), its size counted on that tree; ``black_box`` (and empty forms) for a
    model the parser refuses or one of ``black_box_chars`` characters or more on one line.
    Unbounded on hostile input: run it under a deadline."""
    if not text or len(text) >= 20 * black_box_chars:
        return dict(_black_box())
    try:
        parsed = parse_expression(text, features, dialect or "python")
    except ExpressionError:
        return dict(_black_box())
    if parsed.expr is None:
        return dict(_black_box())
    try:
        tree = neutral_tree(parsed.expr)
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return dict(_black_box())
    line = plain(tree)
    if len(line) >= black_box_chars:
        return dict(_black_box())
    return {
        "expression": pretty(tree, True),
        "expression_ascii": pretty(tree, False),
        "plain": line,
        "size": size(tree),
        "black_box": False,
    }


__all__ = ["FOOTNOTE", "FUNCTIONS", "SIGNIFICANT", "format_number", "neutral_forms", "neutral_tree", "plain"]
