"""The one safe expression parser: model strings in any method's dialect -> sympy trees.

Model strings are untrusted. They are read with Python's ``ast`` over an allow-list and built
into sympy with constructors; no part of the string is ever run as code. See ``parser`` for the
tree conventions (symbols are ``Symbol(name, real=True)``), ``dialects`` for what each method's
operators compute, ``fidelity`` for the check that a string is the method's real model.
"""

from srtui.engine.expression.dialects import DIALECTS
from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.evaluate import compile_expression
from srtui.engine.expression.fidelity import FIDELITY_THRESHOLD, fidelity_check
from srtui.engine.expression.parser import (
    MAX_DEPTH,
    ParsedExpression,
    feature_symbol,
    parse_expression,
    to_sympy_tree,
)

__all__ = [
    "DIALECTS",
    "FIDELITY_THRESHOLD",
    "MAX_DEPTH",
    "ExpressionError",
    "ParsedExpression",
    "compile_expression",
    "feature_symbol",
    "fidelity_check",
    "parse_expression",
    "to_sympy_tree",
]
