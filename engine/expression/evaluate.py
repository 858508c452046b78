"""Numeric evaluation of parsed expressions with ``sympy.lambdify`` (numpy + scipy.special).

The printer writes every number as a numpy float64 with its exact ``repr``, so constant
sub-expressions follow IEEE rules (``1/0`` -> inf, ``10**400`` -> inf) instead of raising Python
errors, and no constant loses digits in printing. ``Max``/``Min`` broadcast scalars against
arrays. The protected operators (``srtui.engine.expression.dialects.ProtectedOperator``) are numpy
functions of the generated code's namespace, so each argument is printed once. Compiled
functions are cached per (expression, features).
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import sympy as sp
from sympy.printing.numpy import SciPyPrinter

from srtui.engine.expression.dialects import GPLEARN_EPS, feature_symbol
from srtui.engine.expression.errors import ExpressionError


def _num(value: float) -> str:
    return f"float64({value!r})" if np.isfinite(value) else f"float64('{value!r}')"


_FLAT = 32


# -- the protected operators, as the methods compute them (see srtui.engine.expression.dialects) -----
def _pdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.abs(b) > GPLEARN_EPS, np.divide(a, b), 1.0)


def _plog(a: np.ndarray) -> np.ndarray:
    return np.where(np.abs(a) > GPLEARN_EPS, np.log(np.abs(a)), 0.0)


def _pinv(a: np.ndarray) -> np.ndarray:
    return np.where(np.abs(a) > GPLEARN_EPS, np.float64(1.0) / a, 0.0)


def _rcbrt(a: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.sign(a) * np.abs(a) ** (np.float64(1.0) / np.float64(3.0))
    return out


#: name in the generated code -> numpy function, one per ProtectedOperator class
PROTECTED = {"srtui_pdiv": _pdiv, "srtui_plog": _plog, "srtui_pinv": _pinv, "srtui_rcbrt": _rcbrt}


def _balanced(parts: list[str], op: str) -> str:
    while len(parts) > 1:
        parts = [
            f"({parts[i]}) {op} ({parts[i + 1]})" if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)
        ]
    return parts[0]


class _Printer(SciPyPrinter):
    # terms in the order the method wrote them: sorting is slow and can evaluate constants
    def __init__(self, settings: dict[str, object] | None = None) -> None:
        super().__init__({**(settings or {}), "order": "none"})

    def _print_Float(self, expr: sp.Float) -> str:
        return _num(float(expr))

    def _print_Integer(self, expr: sp.Integer) -> str:
        try:
            return _num(float(int(expr)))
        except OverflowError:
            return _num(float("inf") if expr > 0 else float("-inf"))

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f"({self._print_Integer(sp.Integer(expr.p))}/{self._print_Integer(sp.Integer(expr.q))})"

    def _print_Half(self, expr: sp.Rational) -> str:
        return self._print_Rational(expr)

    def _print_ProtectedOperator(self, expr: sp.Function) -> str:
        return f"srtui_{type(expr).__name__}({', '.join(self._print(a) for a in expr.args)})"

    _print_pdiv = _print_plog = _print_pinv = _print_rcbrt = _print_ProtectedOperator

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        # sympy's version runs simplify_logic on every condition: slow, and it can raise
        conds = ", ".join(f"numpy.asarray({self._print(c)}, dtype=bool)" for _, c in expr.args)
        exprs = ", ".join(self._print(e) for e, _ in expr.args)
        return f"numpy.select([{conds}], [{exprs}], default=numpy.nan)"

    def _text(self, e: sp.Basic) -> str:
        return str(self._print(e))  # the base class is untyped (sympy): its result is Any to mypy

    # Add/Mul/Pow are printed directly from the unevaluated tree: sympy's own printers re-sort
    # and re-multiply coefficients (slow, and they can evaluate constants). Long chains print as
    # balanced trees (depth log2(n)) because Python's compiler recurses once per operator.
    @staticmethod
    def _compound(e: sp.Basic) -> bool:
        return isinstance(e, (sp.Add, sp.Mul, sp.Pow))

    def _p(self, e: sp.Basic) -> str:
        s = self._text(e)
        return f"({s})" if self._compound(e) else s

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        parts = [self._print(a) for a in expr.args]
        return _balanced(parts, "+") if len(parts) > _FLAT else " + ".join(parts)

    def _print_Mul(self, expr: sp.Mul) -> str:
        if len(expr.args) > _FLAT:
            return _balanced([self._p(a) for a in expr.args], "*")
        num, den = [], []
        for a in expr.args:
            if isinstance(a, sp.Pow) and a.exp == -1:
                den.append(self._p(a.base))  # print x/y, not x*y**-1: same rounding as the method
            else:
                num.append(self._p(a))
        out = " * ".join(num) if num else "float64(1.0)"
        return out + "".join(f" / {d}" for d in den)

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if exp == sp.S.Half:
            return f"numpy.sqrt({self._print(base)})"
        if exp == -1:
            return f"float64(1.0) / {self._p(base)}"
        return f"{self._p(base)}**{self._p(exp)}"

    def _print_Max(self, expr: sp.Max) -> str:
        return self._fold("maximum", expr.args)

    def _print_Min(self, expr: sp.Min) -> str:
        return self._fold("minimum", expr.args)

    def _fold(self, fn: str, args: tuple[sp.Basic, ...]) -> str:
        out = self._text(args[0])
        for a in args[1:]:
            out = f"{fn}({out}, {self._print(a)})"
        return out


_MODULES = ["scipy", "numpy", {"float64": np.float64, "maximum": np.maximum, "minimum": np.minimum, **PROTECTED}]
_reserved: frozenset[str] | None = None


def _reserved_names() -> frozenset[str]:
    """Names the generated code may reference; a feature with such a name needs dummy args."""
    global _reserved
    if _reserved is None:
        import scipy.special

        _reserved = (
            frozenset(dir(np))
            | frozenset(dir(scipy.special))
            | frozenset(dir(builtins))
            | {
                "numpy",
                "scipy",
                "float64",
                "reduce",
                "select",
                "nan",
                "inf",
                "math",
                "mpmath",
                "sympy",
                *PROTECTED,
            }
        )
    return _reserved


@lru_cache(maxsize=4096)
def compile_expression(expr: sp.Expr, features: tuple[str, ...]) -> Callable[..., object]:
    """``f(*columns)`` for ``expr``; cached, so re-scoring a stored model does not re-lambdify."""
    args = [feature_symbol(f) for f in features]
    if any(f in _reserved_names() or f.startswith("_") for f in features):
        # lambdify puts every symbol into the function's globals by name, so a feature called
        # ``abs`` or ``select`` would shadow the function; rename (numerically the same tree)
        safe = [sp.Symbol(f"srtui_x{i}", real=True) for i in range(len(args))]
        expr = expr.xreplace(dict(zip(args, safe)))
        args = safe
    fn: Callable[..., object]
    try:
        try:
            fn = sp.lambdify(args, expr, modules=_MODULES, printer=_Printer, docstring_limit=0)
        except (SyntaxError, RecursionError):
            # too many nested parentheses for Python's compiler: flatten with common subexpressions
            fn = sp.lambdify(args, expr, modules=_MODULES, printer=_Printer, docstring_limit=0, cse=True)
    except (SyntaxError, RecursionError, MemoryError, ArithmeticError, ValueError, TypeError, KeyError) as exc:
        raise ExpressionError(f"cannot compile expression: {type(exc).__name__}") from None
    return fn


def evaluate_expr(expr: sp.Expr, features: tuple[str, ...], X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1 and len(features) == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != len(features):
        raise ExpressionError(f"X has shape {X.shape}, expected (n, {len(features)}) for features {list(features)}")
    n = X.shape[0]
    f = compile_expression(expr, features)
    cols = [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = f(*cols)
        except ArithmeticError:
            return np.full(n, np.nan)
        except (TypeError, ValueError, NameError) as exc:
            raise ExpressionError(f"cannot evaluate expression: {exc}") from None
        out = np.asarray(out)
        if np.iscomplexobj(out):
            out = np.where(out.imag == 0, out.real, np.nan)
        try:
            res = np.broadcast_to(out.astype(np.float64, copy=False), (n,))
        except ValueError:
            raise ExpressionError(f"expression evaluated to shape {out.shape}, expected ({n},)") from None
    return np.array(res, dtype=np.float64)
