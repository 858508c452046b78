"""The one safe expression parser: model string -> sympy tree, without evaluating anything.

Pipeline: dialect token rules (``tokens.translate``) -> ``ast.parse(mode="eval")`` -> a walk over
an allow-list of node types that builds the sympy tree directly with sympy constructors.
Nothing in the string is ever run: no Python or sympy string evaluation is used anywhere.

Tree conventions (what the size metric sees):

- Features are ``sympy.Symbol(name, real=True)``; every caller gets the same symbols from
  :func:`feature_symbol`, so ground truth and models compare equal when they should.
- Construction uses ``evaluate=False``: no constant folding, no collecting of like terms, so
  ``x + x`` stays two terms and ``2*3*x`` keeps its three factors. Chains of ``+``/``-`` and of
  ``*``/``/`` are flattened into one n-ary ``Add``/``Mul`` (as sympy does; SRBench counts nodes
  of sympy trees), ``a - b`` is ``Add(a, Mul(-1, b))`` and ``a / b`` is ``Mul(a, Pow(b, -1))``.
- A minus sign written in front of a number is part of the number (``-2.5`` is one node).
- Dialect identities (itea ``id(x)``) are dropped; a protected operator is one unevaluated
  function (``pdiv``...; see ``dialects``), so nesting costs linear time.
- ``ParsedExpression.n_nodes`` is the size of the tree *as the method printed it* (every
  literal, variable, operator and call counts 1), independent of the sympy expansion.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import sys
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from srtui.engine.expression.dialects import DIALECT_TABLE, DIALECTS, Dialect, _neg, _pow, feature_symbol
from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.tokens import translate

#: nesting limit of the built tree (flattened +/* chains count once)
MAX_DEPTH = 100
#: a long flat chain (ffx with many bases) needs Python's recursion limit raised during ast.parse
_PARSE_RECURSION_LIMIT = 60_000
_parse_lock = threading.Lock()

_REJECTED = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambda",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
    ast.IfExp: "conditional expressions",
    ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments",
    ast.JoinedStr: "f-strings",
    ast.Dict: "dict displays",
    ast.Set: "set displays",
    ast.List: "list displays",
    ast.Tuple: "tuples",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slices",
}
_BAD_BINOPS = {
    ast.BitXor: "'^' is bitwise xor in Python: write powers as '**' (or parse with the method's dialect)",
    ast.FloorDiv: "floor division '//' is not allowed",
    ast.Mod: "modulo '%' is not allowed",
    ast.MatMult: "matrix product '@' is not allowed",
    ast.BitOr: "'|' is not allowed (bingo's |x| needs dialect 'bingo')",
    ast.BitAnd: "'&' is not allowed",
    ast.LShift: "'<<' is not allowed",
    ast.RShift: "'>>' is not allowed",
}
_CONSTANTS = {"pi": sp.pi, "e": sp.E}


@dataclass(frozen=True)
class ParsedExpression:
    text: str  # the raw string as given
    expr: sp.Expr | None  # None when too_large
    features: tuple[str, ...]
    too_large: bool = False
    dialect: str = "python"
    n_nodes: int = 0  # size of the tree as the method printed it (0 when too_large)

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        """float64 predictions, one per row of ``X`` (columns in ``features`` order).

        Floating errors give nan/inf silently; raises ExpressionError if too_large or if ``X``
        does not have one column per feature.
        """
        from srtui.engine.expression.evaluate import evaluate_expr

        if self.too_large or self.expr is None:
            raise ExpressionError(f"expression of {len(self.text)} characters is too large to evaluate")
        return evaluate_expr(self.expr, self.features, X)

    def __str__(self) -> str:
        return self.text if self.expr is None else str(self.expr)


def _check_features(features: Sequence[str]) -> tuple[str, ...]:
    if isinstance(features, str):
        raise ExpressionError("features must be a sequence of names, not one string")
    feats = tuple(features)
    for f in feats:
        if not isinstance(f, str) or not f.isidentifier() or keyword.iskeyword(f):
            raise ExpressionError(f"feature name {f!r} is not a Python identifier")
    if len(set(feats)) != len(feats):
        raise ExpressionError("feature names are not unique")
    return feats


def _refuse_lookalikes(text: str) -> None:
    """Python reads identifiers NFKC-normalised, so a fullwidth ``ｘ０`` would silently become
    ``x0``: a model must name its variables exactly, so any such character is an error."""
    if text.isascii() or unicodedata.normalize("NFKC", text) == text:
        return
    bad = next(ch for ch in text if unicodedata.normalize("NFKC", ch) != ch)
    raise ExpressionError(
        f"character {bad!r} (U+{ord(bad):04X}) would be read as "
        f"{unicodedata.normalize('NFKC', bad)!r}; write the model in plain characters"
    )


def _ast_parse(src: str) -> ast.Expression:
    try:
        return ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise ExpressionError(f"unreadable expression: {exc}") from None
    except (RecursionError, MemoryError):
        pass
    # A long flat sum nests deeply in Python's AST; allow it under a raised limit (the parser's
    # own stack guard still stops pathological nesting with MemoryError).
    with _parse_lock:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _PARSE_RECURSION_LIMIT))
        try:
            return ast.parse(src, mode="eval")
        except (RecursionError, MemoryError):
            raise ExpressionError("expression is nested too deeply") from None
        except SyntaxError as exc:
            raise ExpressionError(f"syntax error: {exc.msg}") from None
        finally:
            sys.setrecursionlimit(old)


def _numbering(tree: ast.AST, feats: tuple[str, ...], dialect: Dialect) -> dict[str, str]:
    """Map ``X1``-style names to features, only when the model does not use the feature names."""
    if not dialect.numbering:
        return {}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unknown = names - set(feats)
    for prefix, base in dialect.numbering:
        pat = re.compile(re.escape(prefix) + r"(\d+)\Z")
        if not any(pat.match(n) for n in unknown):
            continue
        rename = {}
        for n in names:
            m = pat.match(n)
            if m:
                idx = int(m.group(1)) - base
                if not 0 <= idx < len(feats):
                    raise ExpressionError(
                        f"{n} refers to feature #{idx + 1} but there are "
                        f"{len(feats)} features ({dialect.name} numbering)"
                    )
                rename[n] = feats[idx]
        return rename
    return {}


def numbered_names(text: str, features: Sequence[str], dialect: str) -> dict[str, str]:
    """The dialect's ``X1``-style names in ``text`` and the features they stand for ({} if none)."""
    d = DIALECT_TABLE.get(dialect)
    if d is None:
        raise ExpressionError(f"unknown dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    return _numbering(_ast_parse(translate(text, d)), _check_features(features), d)


class _Walker:
    """What this module's builder and srtui.engine.expression.sympy_view's walk alike: the depth guard,
    unary signs, the leaves (numbers, names, calls) and the refusal of every other node; each
    builds its own operators, numbers, names and calls."""

    def build(self, node: ast.AST, depth: int) -> sp.Expr:
        raise NotImplementedError

    def _negate(self, operand: ast.AST, depth: int) -> sp.Expr:
        raise NotImplementedError

    def _number(self, node: ast.Constant) -> sp.Expr:
        raise NotImplementedError

    def _name(self, name: str) -> sp.Expr:
        raise NotImplementedError

    def _call(self, node: ast.Call, depth: int) -> sp.Expr:
        raise NotImplementedError

    @staticmethod
    def _check_depth(depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"expression is nested deeper than {MAX_DEPTH} levels")

    def _unary(self, node: ast.UnaryOp, depth: int) -> sp.Expr:
        if isinstance(node.op, ast.UAdd):
            return self.build(node.operand, depth + 1)
        if isinstance(node.op, ast.USub):
            return self._negate(node.operand, depth)
        raise ExpressionError(f"unary operator {type(node.op).__name__} is not allowed")

    def _leaf(self, node: ast.AST, depth: int) -> sp.Expr:
        if isinstance(node, ast.Constant):
            return self._number(node)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        what = _REJECTED.get(type(node), f"{type(node).__name__} nodes")
        raise ExpressionError(f"{what} not allowed in an expression")


class _Builder(_Walker):
    def __init__(self, feats: tuple[str, ...], dialect: Dialect, rename: dict[str, str]):
        self.symbols = {f: feature_symbol(f) for f in feats}
        self.feats = feats
        self.dialect = dialect
        self.rename = rename
        self.nodes = 0

    def build(self, node: ast.AST, depth: int) -> sp.Expr:
        self._check_depth(depth)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.Add, ast.Sub)):
                return self._chain(node, (ast.Add, ast.Sub), depth)
            if isinstance(node.op, (ast.Mult, ast.Div)):
                return self._chain(node, (ast.Mult, ast.Div), depth)
            if isinstance(node.op, ast.Pow):
                self.nodes += 1
                return _pow(self.build(node.left, depth + 1), self.build(node.right, depth + 1))
            raise ExpressionError(_BAD_BINOPS.get(type(node.op), f"operator {type(node.op).__name__} is not allowed"))
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, depth)
        return self._leaf(node, depth)

    def _negate(self, operand: ast.AST, depth: int) -> sp.Expr:
        if isinstance(operand, ast.Constant):
            return -self._number(operand)
        self.nodes += 1
        return _neg(self.build(operand, depth + 1))

    def _chain(self, node: ast.BinOp, ops: tuple[type, type], depth: int) -> sp.Expr:
        # iterative over the left spine, so long sums/products cost no recursion depth
        rights: list[tuple[bool, ast.AST]] = []
        cur: ast.AST = node
        while isinstance(cur, ast.BinOp) and isinstance(cur.op, ops):
            rights.append((isinstance(cur.op, ops[1]), cur.right))
            cur = cur.left
        self.nodes += len(rights)
        args = [self.build(cur, depth + 1)]
        for inverse, right in reversed(rights):
            arg = self.build(right, depth + 1)
            if inverse:
                arg = _neg(arg) if ops[0] is ast.Add else _pow(arg, sp.S.NegativeOne)
            args.append(arg)
        cls = sp.Add if ops[0] is ast.Add else sp.Mul
        return cls(*args, evaluate=False)

    def _number(self, node: ast.Constant) -> sp.Expr:
        v = node.value
        self.nodes += 1
        if isinstance(v, bool) or v is None or v is Ellipsis:
            raise ExpressionError(f"{v!r} is not a number")
        if isinstance(v, int):
            return sp.Integer(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ExpressionError(f"number {v!r} is not finite")
            return sp.Float(v)
        if isinstance(v, complex):
            raise ExpressionError("complex numbers are not allowed")
        raise ExpressionError("string literals are not allowed in an expression")

    def _name(self, name: str) -> sp.Expr:
        self.nodes += 1
        sym = self.symbols.get(name)
        if sym is not None:
            return sym
        if name in self.rename:
            return self.symbols[self.rename[name]]
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in self.dialect.functions:
            raise ExpressionError(f"function {name!r} used without arguments")
        shown = ", ".join(self.feats[:8]) + (", ..." if len(self.feats) > 8 else "")
        raise ExpressionError(f"unknown name {name!r} (features: {shown or 'none'})")

    def _call(self, node: ast.Call, depth: int) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            raise ExpressionError("only calls of named functions are allowed (no attributes, no calls of calls)")
        name = node.func.id
        if node.keywords:
            raise ExpressionError(f"keyword arguments are not allowed (in call of {name!r})")
        entry = self.dialect.functions.get(name)
        if entry is None:
            raise ExpressionError(f"unknown function {name!r} in dialect {self.dialect.name!r}")
        arity, builder = entry
        n = len(node.args)
        if (arity == -1 and n < 2) or (arity >= 0 and n != arity):
            want = "at least 2" if arity == -1 else str(arity)
            raise ExpressionError(f"function {name!r} takes {want} argument(s), got {n}")
        self.nodes += 1
        args = [self.build(a, depth + 1) for a in node.args]
        try:
            return builder(*args)
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise ExpressionError(f"cannot build {name}(...): {exc}") from None


def parse_expression(
    text: str, features: Sequence[str], dialect: str = "python", *, max_chars: int = 20_000
) -> ParsedExpression:
    """Parse a model string over ``features`` printed in ``dialect``; see the module doc."""
    if not isinstance(text, str):
        raise ExpressionError(f"expression must be a string, not {type(text).__name__}")
    feats = _check_features(features)
    d = DIALECT_TABLE.get(dialect)
    if d is None:
        raise ExpressionError(f"unknown dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    if len(text) > max_chars:
        return ParsedExpression(text, None, feats, too_large=True, dialect=dialect)
    if not text.strip():
        raise ExpressionError("empty expression")
    _refuse_lookalikes(text)
    if "#" in text:  # Python would read the rest as a comment: shown, but never evaluated
        raise ExpressionError("'#' would hide the rest of the model from its evaluation (a comment)")
    tree = _ast_parse(translate(text, d))
    builder = _Builder(feats, d, _numbering(tree, feats, d))
    expr = builder.build(tree.body, 0)
    return ParsedExpression(text, expr, feats, dialect=dialect, n_nodes=builder.nodes)


def to_sympy_tree(text: str, features: Sequence[str], dialect: str = "python") -> sp.Expr:
    """Just the sympy tree of ``text`` (ExpressionError if it cannot be had, e.g. too large)."""
    parsed = parse_expression(text, features, dialect)
    if parsed.expr is None:
        raise ExpressionError(f"expression of {len(text)} characters is too large to parse")
    return parsed.expr
