"""Imported by the model checkers' forkserver (``srtui.engine.outcome_check.CHECK_PRELOAD``): a first
``lambdify`` imports sympy's code printers and what they need (about 0.2 s). Done here once, every
checker process forked from the server starts warm, and a run's first results do not wait for it."""

from __future__ import annotations

import numpy as np

from srtui.engine.expression.evaluate import evaluate_expr
from srtui.engine.expression.parser import feature_symbol

try:
    evaluate_expr(feature_symbol("x0") + 1, ("x0",), np.zeros((1, 1)))
except Exception:  # noqa: BLE001 - the server must start whatever this does; the first check pays instead
    pass
