"""A model fitted on standardised data, mapped back to the task's units on the parser's own tree.

A method that saw ``z = (x - mu) / sd`` and ``t = (y - mu_y) / sd_y`` prints ``t = f(z)``; over
the raw features the model is ``y = sd_y * f((x - mu) / sd) + mu_y``. The substitution is done on
the Python ``ast`` the safe parser reads (the model string after the dialect's token rules, with
the dialect's numbered names resolved): each feature name becomes the tree of ``(x - mu) / sd``,
the whole is wrapped in ``* sd_y + mu_y``, and the tree is printed back (``ast.unparse``: exact
float reprs). Nothing is evaluated and nothing goes through sympy's string parsing; the result is
read again by ``parse_expression`` in the same dialect like any model string.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from srtui.engine.expression.dialects import DIALECT_TABLE
from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.parser import _ast_parse, _check_features, _numbering
from srtui.engine.expression.tokens import translate


def _const(value: float) -> ast.expr:
    if value < 0:  # a negative literal prints as a unary minus; keep it one operand
        return ast.UnaryOp(ast.USub(), ast.Constant(-float(value)))
    return ast.Constant(float(value))


class _Substitute(ast.NodeTransformer):
    def __init__(self, shifts: dict[str, tuple[float, float]], renames: dict[str, str]) -> None:
        self.shifts = shifts
        self.renames = renames

    def visit_Call(self, node: ast.Call) -> ast.AST:
        # a function name is not a variable: only the arguments are rewritten
        node.args = [self.visit(a) for a in node.args]
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        name = self.renames.get(node.id, node.id)
        if name not in self.shifts:
            return ast.Name(name, ast.Load())
        mean, scale = self.shifts[name]
        centred = ast.BinOp(ast.Name(name, ast.Load()), ast.Sub(), _const(mean))
        return ast.BinOp(centred, ast.Div(), _const(scale))


def in_original_units(
    text: str,
    features: Sequence[str],
    dialect: str,
    x_shift: tuple[Sequence[float], Sequence[float]] | None,
    y_shift: tuple[float, float] | None,
) -> str:
    """``text`` (a model over standardised features/target) as a model over the raw ones.

    ``x_shift`` is (means, scales) per feature, ``y_shift`` (mean, scale) of the target; None
    leaves that side as it is. Raises ExpressionError when the string cannot be read.
    """
    feats = _check_features(features)
    d = DIALECT_TABLE.get(dialect)
    if d is None:
        raise ExpressionError(f"unknown dialect {dialect!r}")
    tree = _ast_parse(translate(text, d))
    renames = _numbering(tree, feats, d)
    shifts = {}
    if x_shift is not None:
        means, scales = x_shift
        shifts = {name: (float(means[i]), float(scales[i])) for i, name in enumerate(feats)}
    body = _Substitute(shifts, renames).visit(tree.body)  # numbered names become the features' too
    if y_shift is not None:
        mean, scale = y_shift
        body = ast.BinOp(ast.BinOp(body, ast.Mult(), _const(scale)), ast.Add(), _const(mean))
    return ast.unparse(ast.fix_missing_locations(ast.Expression(body)))
