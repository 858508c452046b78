"""Does the parsed expression compute what the method itself predicts? (the fidelity check)"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.parser import ParsedExpression
from srtui.engine.r2 import r2_score

#: below this fidelity R2 the stored expression is flagged as not being the method's model
FIDELITY_THRESHOLD = 0.999
#: a method prediction whose spread is below this share of its magnitude counts as constant
#: (float32 methods jitter around 1e-7)
_CONSTANT_RTOL = 1e-6


class FidelityCheck(TypedDict):
    """What ``fidelity_check`` measured (see there)."""

    r2_test_expr: float
    fidelity_r2: float
    max_abs_diff: float
    n_nonfinite: int
    expression_mismatch: bool


def fidelity_check(parsed: ParsedExpression, X: np.ndarray, y: np.ndarray, method_pred: np.ndarray) -> FidelityCheck:
    """Compare the expression's predictions on ``X`` with ``y`` and with the method's own.

    Returns ``r2_test_expr`` (R2 of the expression vs ``y``; nan if the expression gives a
    non-finite value on any row), ``fidelity_r2`` (R2 of the expression vs ``method_pred``; when
    the method predicts a constant, 1.0 if the expression matches it to 1e-6 relative, else
    0.0; nan if the two disagree on which rows are finite), ``max_abs_diff``, ``n_nonfinite``
    (rows where the expression is nan/inf) and ``expression_mismatch`` (fidelity_r2 < 0.999 or
    nan). Raises ExpressionError if the expression is too large or shapes disagree.
    """
    expr_pred = parsed.evaluate(X)
    y = np.asarray(y, dtype=np.float64).ravel()
    m = np.asarray(method_pred, dtype=np.float64).ravel()
    n = len(expr_pred)
    if len(y) != n or len(m) != n:
        raise ExpressionError(f"fidelity check: {n} rows of X but {len(y)} targets and {len(m)} method predictions")

    fin_e = np.isfinite(expr_pred)
    fin_m = np.isfinite(m)
    n_nonfinite = int(n - fin_e.sum())
    r2_test = r2_score(y, expr_pred) if n_nonfinite == 0 and np.isfinite(y).all() else float("nan")

    both = fin_e & fin_m
    if np.any(fin_e != fin_m):
        fidelity, max_diff = float("nan"), float("inf")
    else:
        e, mm = expr_pred[both], m[both]
        max_diff = float(np.max(np.abs(e - mm))) if both.any() else 0.0
        scale = float(np.max(np.abs(mm))) if both.any() else 0.0
        if not both.any():
            fidelity = 1.0  # both are non-finite on every row: they agree
        elif np.ptp(mm) <= _CONSTANT_RTOL * max(1.0, scale):
            fidelity = 1.0 if max_diff <= _CONSTANT_RTOL * max(1.0, scale) else 0.0
        else:
            fidelity = r2_score(mm, e)
    return {
        "r2_test_expr": r2_test,
        "fidelity_r2": fidelity,
        "max_abs_diff": max_diff,
        "n_nonfinite": n_nonfinite,
        "expression_mismatch": not (fidelity >= FIDELITY_THRESHOLD),
    }
