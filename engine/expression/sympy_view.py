"""The tree sympy's own parser would build from a model string: what SRBench's metrics count.

SRBench reads model strings with ``sympy.parse_expr`` (evaluate=True), so numeric products are
folded (``2*3*x1`` is ``6*x1``), ``a - 1.5*b`` has one Float ``-1.5``, ``2/5`` is one Rational,
``x3/x3`` is 1 and ``0*x3`` vanishes. This module builds that same tree from the same ``ast``
walk as :mod:`srtui.engine.expression.parser` (allow-list, dialect tokens, numbering), evaluating each
operation with sympy's own Python operators in Python's order; nothing in the string is run.

Differences from the parser's exact-semantics tree (see docs/scoring.md, fidelity table):

- symbols are plain ``Symbol(name)`` (SRBench's ``local_dict``), not ``real=True``;
- float literals are ``Float(literal text)`` as sympy's ``auto_number`` makes them;
- protected operators read as SRBench reads them: gplearn's ``add/sub/mul/div`` are plain
  operators, every dialect's abs-taking log/sqrt is SRBench's ``PLOG``/``PSQRT`` (log/sqrt of the
  argument; of its absolute value only for a negative number literal), ``inv``/``neg`` plain;
- ``plain_log_protected`` (SRBench 2021 renames every ``log``/``sqrt`` to PLOG/PSQRT) applies the
  same to the python dialect's log/sqrt; ``pi_value`` replaces the name ``pi`` by that literal
  (SRBench 2021 and 2.0's size replace ``pi`` with ``3.1415926535``).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Sequence

import sympy as sp

from srtui.engine.expression.dialects import DIALECT_TABLE
from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.parser import _BAD_BINOPS, _ast_parse, _check_features, _numbering, _Walker
from srtui.engine.expression.tokens import translate

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}

#: operators of one precedence level: a left-nested run of them is one chain (one nesting level)
_CHAINS = {ast.Add: "sum", ast.Sub: "sum", ast.Mult: "product", ast.Div: "product"}


def plog(a: sp.Expr) -> sp.Expr:
    """SRBench's PLOG: log of the argument (of its absolute value for a negative Float)."""
    return sp.log(abs(a) if isinstance(a, sp.Float) and a < 0 else a)


def psqrt(a: sp.Expr) -> sp.Expr:
    return sp.sqrt(abs(a) if isinstance(a, sp.Float) and a < 0 else a)


def _log_base(base: int) -> Callable[..., sp.Expr]:
    return lambda a: sp.log(a, base)


#: sympy names of the functions srtui's dialects print (evaluated like sympy's parser would)
COMMON: dict[str, Callable[..., sp.Expr]] = {
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "abs": sp.Abs,
    "tanh": sp.tanh,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "asin": sp.asin,
    "acos": sp.acos,
    "atan": sp.atan,
    "asinh": sp.asinh,
    "acosh": sp.acosh,
    "atanh": sp.atanh,
    "arcsin": sp.asin,
    "arccos": sp.acos,
    "arctan": sp.atan,
    "sign": sp.sign,
    "erf": sp.erf,
    "square": lambda a: a**2,
    "cube": lambda a: a**3,
    "cbrt": sp.cbrt,
    "log10": _log_base(10),
    "log2": _log_base(2),
    "exp2": lambda a: sp.Integer(2) ** a,
    "pow": operator.pow,
    "max": sp.Max,
    "min": sp.Min,
}
#: protected operators, read as SRBench's clean-up reads them
PROTECTED: dict[str, Callable[..., sp.Expr]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "log": plog,
    "sqrt": psqrt,
    "logabs": plog,
    "sqrtabs": psqrt,
    "sqrtAbs": psqrt,
    "SqrtAbs": psqrt,
    "inv": lambda a: 1 / a,
    "neg": operator.neg,
    "sig": lambda a: 1 / (1 + sp.exp(-a)),
    "relu": lambda a: sp.Max(0, a),
    "id": lambda a: a,
    "Id": lambda a: a,
    "Sin": sp.sin,
    "Cos": sp.cos,
    "Tan": sp.tan,
    "Tanh": sp.tanh,
    "Sqrt": sp.sqrt,
    "Log": sp.log,
    "Exp": sp.exp,
}
#: dialects whose log/sqrt are the protected (abs-taking) ones
_PROTECTED_LOG = {"gplearn", "bingo"}


def _functions(dialect: str, plain_log_protected: bool) -> dict[str, Callable[..., sp.Expr]]:
    table = dict(COMMON)
    known = DIALECT_TABLE[dialect].functions
    table.update({k: v for k, v in PROTECTED.items() if k in known and k not in ("log", "sqrt")})
    if dialect in _PROTECTED_LOG or plain_log_protected:
        table.update(log=plog, sqrt=psqrt)
    return {k: v for k, v in table.items() if k in known}


class _SympyBuilder(_Walker):
    def __init__(
        self,
        src: str,
        feats: tuple[str, ...],
        rename: dict[str, str],
        functions: dict[str, Callable[..., sp.Expr]],
        pi_value: str | None,
        dialect: str,
    ):
        self.src, self.functions, self.dialect = src, functions, dialect
        self.src_bytes = src.encode("utf-8")  # ast's column offsets count UTF-8 bytes
        self.names: dict[str, sp.Expr] = {f: sp.Symbol(f) for f in feats}
        self.names.update({k: sp.Symbol(v) for k, v in rename.items()})
        self.constants = {"pi": sp.Float(pi_value) if pi_value else sp.pi, "e": sp.E}

    def build(self, node: ast.AST, depth: int = 0) -> sp.Expr:
        self._check_depth(depth)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise ExpressionError(
                    _BAD_BINOPS.get(type(node.op), f"operator {type(node.op).__name__} is not allowed")
                )
            if type(node.op) in _CHAINS:
                return self._chain(node, depth)
            return self._apply(op, self.build(node.left, depth + 1), self.build(node.right, depth + 1))
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, depth)
        return self._leaf(node, depth)

    def _negate(self, operand: ast.AST, depth: int) -> sp.Expr:
        return self._apply(operator.neg, self.build(operand, depth + 1))

    def _chain(self, node: ast.BinOp, depth: int) -> sp.Expr:
        """``a + b - c + ...`` (or ``a * b / c ...``) evaluated left to right, as Python (and so
        sympy's parser) does, walking the left spine iteratively: a long flat sum such as an FFX
        model of 2,000 nodes is one level of nesting, as in the parser, not one per term."""
        group = _CHAINS[type(node.op)]
        rights: list[tuple[Callable[..., sp.Expr], ast.AST]] = []
        cur: ast.AST = node
        while isinstance(cur, ast.BinOp) and _CHAINS.get(type(cur.op)) == group:
            rights.append((_BINOPS[type(cur.op)], cur.right))
            cur = cur.left
        value = self.build(cur, depth + 1)
        for op, right in reversed(rights):
            value = self._apply(op, value, self.build(right, depth + 1))
        return value

    @staticmethod
    def _apply(fn: Callable[..., sp.Expr], *args: sp.Expr) -> sp.Expr:
        try:
            return fn(*args)
        except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
            raise ExpressionError(
                f"cannot evaluate the expression as sympy does: {' '.join(str(exc).split())[:120]}"
            ) from None

    def _number(self, node: ast.Constant) -> sp.Expr:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ExpressionError(f"{v!r} is not a number")
        if isinstance(v, int):
            return sp.Integer(v)
        text = self._segment(node) or repr(v)
        try:
            return sp.Float(text.replace("_", ""))  # sympy's auto_number: Float of the literal text
        except (ValueError, TypeError):
            return sp.Float(v)

    def _segment(self, node: ast.expr) -> str | None:
        """The literal's text. ``ast.get_source_segment`` splits the whole source into lines on
        every call, quadratic over a model of a thousand numbers (an FFX model: seconds); a
        one-line source is sliced by the node's byte offsets instead."""
        if node.lineno == node.end_lineno == 1 and node.end_col_offset is not None:
            return self.src_bytes[node.col_offset : node.end_col_offset].decode("utf-8", "replace")
        return ast.get_source_segment(self.src, node)

    def _name(self, name: str) -> sp.Expr:
        if name in self.names:
            return self.names[name]
        if name in self.constants:
            return self.constants[name]
        raise ExpressionError(f"unknown name {name!r}")

    def _call(self, node: ast.Call, depth: int) -> sp.Expr:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise ExpressionError("only plain calls of named functions are allowed")
        fn = self.functions.get(node.func.id)
        if fn is None:
            raise ExpressionError(f"unknown function {node.func.id!r} in dialect {self.dialect!r}")
        return self._apply(fn, *[self.build(a, depth + 1) for a in node.args])


def parse_sympy_view(
    text: str,
    features: Sequence[str],
    dialect: str = "python",
    *,
    plain_log_protected: bool = False,
    pi_value: str | None = None,
    max_chars: int = 20_000,
) -> sp.Expr:
    """The sympy tree ``sympy.parse_expr`` would build from ``text`` as SRBench reads it.

    Raises ExpressionError for anything the safe parser refuses (or a too long string).
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression")
    if len(text) > max_chars:
        raise ExpressionError(f"expression of {len(text)} characters is too large")
    feats = _check_features(features)
    d = DIALECT_TABLE.get(dialect)
    if d is None:
        raise ExpressionError(f"unknown dialect {dialect!r}")
    src = translate(text, d)
    tree = _ast_parse(src)
    builder = _SympyBuilder(
        src, feats, _numbering(tree, feats, d), _functions(dialect, plain_log_protected), pi_value, dialect
    )
    return builder.build(tree.body)
