"""srtui's stand-in for SRBench's ``experiment/symbolic_utils.py``, for method folders that import it.

A folder run from an SRBench checkout imports SRBench's own module (its ``experiment/`` comes
first on ``sys.path``); a folder on its own finds this one, which provides what SRBench 2.0's
method folders import from it: ``complexity(expr)``, the node count of a sympy tree in
pre-order (the same count as srtui's ``size``, srtui.results.metrics.expr_metrics.node_count).
"""

from __future__ import annotations

import sympy


def complexity(expr: sympy.Basic) -> int:
    return sum(1 for _ in sympy.preorder_traversal(expr))
