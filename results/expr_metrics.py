"""Metrics of one expression (and of one expression against a ground truth).

Every model string is read through ``engine.expression.parse_expression`` only. The expensive
operations (simplify, the symbolic-solution check, the tree edit distance) are plain functions of
JSON-able payloads so they can run in :class:`results.pool.TimedPool` workers under a deadline;
:func:`run_op` is the worker entry point.

Definitions (hand-checked in tests/test_metrics_expr.py):

- size: nodes of the sympy tree in pre-order (every operator, function, symbol and number counts
  1), as SRBench's ``complexity``; ``size`` is the tree as parsed (SRBench 2.0), ``size_simplified``
  after ``sympy.simplify`` (SRBench 2022 rules).
- simplicity = round(-log5(size), 1) (SRBench 2022).
- symbolic solution (SRBench 2021): the model is not a constant, and ``truth - model`` is a
  constant or ``truth / model`` is a non-zero constant, after ``simplify`` and SRBench's rounding
  of floats (|c| < 1e-4 -> 0, else ``Float(round(c, 3), 3)``).
- tree edit distance: ordered trees, unit costs (APTED), between the simplified trees, divided by
  the truth's node count and capped at 1 (the normalised edit distance of SRSD, Matsubara et al.).
- diversity: Shannon entropy (natural log) of the node labels of the parsed tree, numbers all
  labelled ``const``.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Any, Sequence

import sympy as sp

from engine.expression import ExpressionError, ParsedExpression, parse_expression

Tree = tuple  # (label, child, child, ...)


def expr_hash(text: str, features: Sequence[str], dialect: str = "python") -> str:
    """Identity of a model string as the parser sees it (names and dialect change its meaning)."""
    h = hashlib.sha256("\x1f".join([dialect, ",".join(features), text]).encode())
    return h.hexdigest()[:24]


def parse(text: str, features: Sequence[str], dialect: str = "python") -> ParsedExpression:
    return parse_expression(text, list(features), dialect or "python")


def node_count(expr: sp.Basic) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def simplicity(size: float | None) -> float | None:
    if size is None or not size or size < 1 or math.isnan(size):
        return None
    return round(-math.log(size, 5), 1) + 0.0  # + 0.0: no -0.0 for size 1


def _label(node: sp.Basic, numbers: bool = True) -> str:
    if node.is_Symbol:
        return str(node)
    if node.is_Number or isinstance(node, sp.NumberSymbol):
        if not numbers:
            return "const"
        if isinstance(node, sp.Float):
            return repr(round(float(node), 3))
        return str(node)
    return type(node).__name__


def to_tree(expr: sp.Basic) -> Tree:
    """The sympy tree as nested tuples of labels (picklable; what APTED compares)."""
    if not expr.args or expr.is_Number:
        return (_label(expr),)
    return (_label(expr), *(to_tree(a) for a in expr.args))


def tree_size(tree: Tree) -> int:
    return 1 + sum(tree_size(c) for c in tree[1:])


def diversity(expr: sp.Basic) -> float:
    counts = Counter(_label(n, numbers=False) for n in sp.preorder_traversal(expr))
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values()) + 0.0


def used_features(expr: sp.Basic) -> set[str]:
    return {str(s) for s in expr.free_symbols}


def feature_absence(used: set[str], unwanted: Sequence[str]) -> float | None:
    """Share of the unwanted (irrelevant or shortcut) features the model leaves out."""
    unwanted = list(unwanted)
    if not unwanted:
        return None
    return sum(1 for f in unwanted if f not in used) / len(unwanted)


def round_floats(expr: sp.Basic) -> sp.Basic:
    """SRBench's ``round_floats``: tiny floats become 0, the others ``Float(round(c, 3), 3)``."""
    subs = {}
    for a in sp.preorder_traversal(expr):
        if isinstance(a, sp.Float):
            subs[a] = sp.Integer(0) if abs(a) < 1e-4 else sp.Float(round(float(a), 3), 3)
    return expr.xreplace(subs) if subs else expr


def _is_constant(expr: sp.Basic) -> bool:
    return not expr.free_symbols


# --- the operations run in pool workers --------------------------------------------------------

def simplify_op(text: str, features: Sequence[str], dialect: str) -> dict[str, Any]:
    p = parse(text, features, dialect)
    if p.too_large:
        return {"too_large": True}
    s = sp.simplify(p.expr)
    # "_expr" travels back through the pool's pipe only (never into the cache): the symbolic-
    # solution check of the same model starts from it instead of simplifying the model again
    return {"size_simplified": node_count(s), "tree": to_tree(s), "constant": _is_constant(s),
            "simplified": str(s), "_expr": s}


def solution_op(
    text: str, truth: str, features: Sequence[str], dialect: str, simplified: sp.Basic | None = None
) -> dict[str, Any]:
    """SRBench 2022's check; ``simplified`` is the model's simplified tree when already known."""
    model = parse(text, features, dialect)
    if model.too_large:
        return {"symbolic_solution": False, "why": "model too large"}
    true = parse(truth, features, "python").expr
    m = simplified if simplified is not None else sp.simplify(model.expr)
    if _is_constant(round_floats(m)):
        return {"symbolic_solution": False, "why": "constant model"}
    diff = round_floats(sp.simplify(true - m))
    if _is_constant(diff):
        return {"symbolic_solution": True, "why": f"truth - model = {diff}"}
    frac = round_floats(sp.simplify(true / m))
    if _is_constant(frac) and frac != 0:
        return {"symbolic_solution": True, "why": f"truth / model = {frac}"}
    return {"symbolic_solution": False, "why": "neither difference nor ratio is constant"}


def _apted_tree(tree: Tree):
    from apted.helpers import Tree as ATree

    return ATree(tree[0], *(_apted_tree(c) for c in tree[1:]))


def ted_op(model_tree: Tree, truth_tree: Tree) -> dict[str, Any]:
    from apted import APTED

    d = APTED(_apted_tree(model_tree), _apted_tree(truth_tree)).compute_edit_distance()
    n = tree_size(truth_tree)
    return {"ted": int(d), "ted_norm": min(1.0, d / n)}


def run_op(payload: dict[str, Any]) -> dict[str, Any]:
    """Worker entry: ``{"op": "simplify"|"solution"|"ted", ...arguments}``."""
    op = payload["op"]
    if op == "simplify":
        return simplify_op(payload["text"], payload["features"], payload["dialect"])
    if op == "solution":
        return solution_op(payload["text"], payload["truth"], payload["features"], payload["dialect"],
                           payload.get("simplified"))
    if op == "ted":
        return ted_op(tuple_tree(payload["model_tree"]), tuple_tree(payload["truth_tree"]))
    raise ValueError(f"unknown operation {op!r}")


def tuple_tree(tree) -> Tree:
    """Trees come back from JSON (the cache) as lists; make them tuples again."""
    return (tree[0], *(tuple_tree(c) for c in tree[1:]))


__all__ = [
    "ExpressionError", "expr_hash", "parse", "node_count", "simplicity", "to_tree", "tree_size",
    "diversity", "used_features", "feature_absence", "round_floats", "simplify_op", "solution_op",
    "ted_op", "run_op",
]
