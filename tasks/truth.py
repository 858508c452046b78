"""Ground truth: formulas stored as strings, read only through the one safe parser."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from srtui.tasks.entry import TaskError
from srtui.tasks.model import Task

if TYPE_CHECKING:
    from srtui.engine.expression import ParsedExpression


def parse_truth(text: str, features: list[str]) -> ParsedExpression:
    """Parse a ground-truth formula over ``features`` (srtui.engine.expression, Python dialect)."""
    from srtui.engine.expression import ExpressionError, parse_expression

    try:
        return parse_expression(text, list(features), dialect="python")
    except ExpressionError as exc:
        raise TaskError(f"ground truth {text!r} cannot be read: {exc}") from None


def evaluate_truth(task: Task, X: np.ndarray) -> np.ndarray:
    if task.ground_truth is None:
        raise TaskError(f"task {task.name} has no ground truth")
    return np.asarray(parse_truth(task.ground_truth, task.feature_names).evaluate(X), dtype=float)
