"""Turn a finished job's outcome into its record: accuracy from the method's own predictions,
the model string read through the one safe parser, and the fidelity check.

Runs in the driver (the data are there, whatever the backend). The model string is untrusted:
it is only ever read by ``engine.expression.parse_expression``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.launcher import JobOutcome
from engine.scaling import STAT_KEYS, Scaling


@dataclass
class TaskArrays:
    """The data of one task as the driver holds it (from the npz in the workspace cache)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    feature_names: list[str]
    #: engine.scaling.STAT_KEYS of a tuning fold (the whole training set's scalers), if stored
    scale_stats: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str) -> TaskArrays:
        from engine.untrusted import open_regular

        with open_regular(Path(path)) as fh, np.load(fh, allow_pickle=False) as z:
            return cls(
                X_train=z["X_train"],
                y_train=z["y_train"],
                X_test=z["X_test"],
                y_test=z["y_test"],
                train_index=z["train_index"],
                test_index=z["test_index"],
                feature_names=[str(n) for n in z["feature_names"]],
                scale_stats={k: z[k] for k in STAT_KEYS if k in z.files},
            )


def r2(y: np.ndarray, yhat: np.ndarray) -> float | None:
    """Coefficient of determination; None when predictions are not all finite."""
    from engine.expression.fidelity import r2_score

    if yhat is None or len(yhat) != len(y) or not np.all(np.isfinite(yhat)):
        return None
    return r2_score(np.asarray(y, dtype=np.float64), np.asarray(yhat, dtype=np.float64))


def errors(y: np.ndarray, yhat: np.ndarray | None) -> tuple[float | None, float | None]:
    """(MSE, MAE); None for both when predictions are missing or not all finite."""
    if yhat is None or len(yhat) != len(y) or not np.all(np.isfinite(yhat)):
        return None, None
    diff = y - yhat
    return float(np.mean(diff**2)), float(np.mean(np.abs(diff)))


def evaluate_outcome(outcome: JobOutcome, data: TaskArrays, scaler: Scaling | None = None) -> dict[str, Any]:
    """Metric fields of the job record; may turn an ok outcome into invalid_model. A model fitted
    on standardised data (``scaler``) is first mapped back to the task's units."""
    fields: dict[str, Any] = {}
    if outcome.status != "ok" or outcome.train_pred is None or outcome.test_pred is None:
        return fields
    if len(outcome.train_pred) != len(data.y_train) or len(outcome.test_pred) != len(data.y_test):
        outcome.status, outcome.error = "error", "predictions do not match the data's row counts"
        return fields
    fields["r2_train"] = r2(data.y_train, outcome.train_pred)
    fields["r2_test"] = r2(data.y_test, outcome.test_pred)
    fields["mse_train"], fields["mae_train"] = errors(data.y_train, outcome.train_pred)
    fields["mse_test"], fields["mae_test"] = errors(data.y_test, outcome.test_pred)
    if outcome.model is None:
        return fields  # black-box: scored on accuracy only

    from engine.expression import ExpressionError, fidelity_check, parse_expression

    try:
        if scaler is not None:
            outcome.pareto = pareto_in_original_units(outcome.pareto, data.feature_names, outcome.dialect, scaler)
            printed = outcome.model
            outcome.model = scaler.model_in_original_units(printed, data.feature_names, outcome.dialect or "python")
            outcome.notes = {**(outcome.notes or {}), "model_as_printed": printed}
        parsed = parse_expression(outcome.model, data.feature_names, outcome.dialect)
    except ExpressionError as exc:
        outcome.status = "invalid_model"
        fields["model_error"] = str(exc)
        outcome.error = f"model rejected by the safe parser: {exc}"
        return fields
    if parsed.too_large:
        fields["model_too_large"] = 1
        return fields
    fields["model_too_large"] = 0
    check = fidelity_check(parsed, data.X_test, data.y_test, outcome.test_pred)
    fields["r2_test_expr"] = check.get("r2_test_expr")
    fields["fidelity_r2"] = check.get("fidelity_r2")
    fields["max_abs_diff"] = check.get("max_abs_diff")
    fields["expression_mismatch"] = int(bool(check.get("expression_mismatch")))
    return fields


def pareto_in_original_units(
    pareto: list[dict[str, Any]], features: list[str], dialect: str | None, scaler: Scaling
) -> list[dict[str, Any]]:
    """The method's alternative models mapped back to the task's units like its final model.

    Each mapped point keeps the string the method printed under ``expression_as_printed``. A
    point that cannot be mapped (cut at the size cap, or unreadable) keeps its printed string,
    marked ``units: "standardised"`` with the reason, so it is never shown as if in raw units.
    Its ``loss`` stays the method's own figure, on the standardised target."""
    out = []
    for point in pareto:
        printed = point.get("expression")
        if not isinstance(printed, str) or point.get("too_large"):
            why = "cut at the size cap: not mapped" if point.get("too_large") else "no expression"
            out.append({**point, "units": "standardised", "units_error": why})
            continue
        try:
            mapped = scaler.model_in_original_units(printed, features, dialect or "python")
        except (ValueError, RecursionError) as exc:  # ExpressionError is a ValueError; one point, not the job
            out.append({**point, "units": "standardised", "units_error": str(exc)[:200]})
            continue
        out.append({**point, "expression": mapped, "expression_as_printed": printed})
    return out
