"""Scaling of X and y as a protocol option (SRBench's ``--scale_x --scale_y``, off by default).

A job whose params carry ``SCALING_KEY`` (``"x"``, ``"y"`` or ``"xy"``) is fitted on
standardised data: ``StandardScaler`` statistics of the training rows, or, for a tuning fold, of
the whole training set the folds were cut from (SRBench scales once, before its CV), stored in
the fold's npz as ``scale_x_mean`` ... The worker maps predictions back to y's units; the driver
maps the model string back to the raw features and y (``srtui.engine.expression.rescale``) before the
fidelity check, so the check and the symbolic metrics compare the model with the ground truth in
the task's units. The driver recomputes the statistics from the data itself: nothing the method
wrote is trusted for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from srtui.engine.errors import SrtuiError

SCALING_KEY = "srtui_scaling"
SCALINGS = ("none", "x", "y", "xy")
STAT_KEYS = ("scale_x_mean", "scale_x_scale", "scale_y_mean", "scale_y_scale")


class ScalingError(SrtuiError, ValueError):
    """A scaling option that is not one of SCALINGS; one line for the CLI."""


def check(value: Any) -> str:
    if value not in SCALINGS:
        raise ScalingError(f"scaling must be one of {', '.join(SCALINGS)}, got {value!r}")
    return str(value)


def statistics(X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """StandardScaler's mean_ and scale_ of X's columns and of y (a constant column: scale 1)."""
    mean_x, scale_x = standard_scaler(np.asarray(X, dtype=float))
    mean_y, scale_y = standard_scaler(np.asarray(y, dtype=float).reshape(-1, 1))
    return {"scale_x_mean": mean_x, "scale_x_scale": scale_x, "scale_y_mean": mean_y, "scale_y_scale": scale_y}


def standard_scaler(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean_, scale_) of ``StandardScaler().fit(A)`` for finite float64 rows, bit for bit, with
    numpy alone: the driver plans a scaled search without importing scikit-learn (seconds on a
    loaded machine). Its steps: ``_incremental_mean_and_var`` from nothing seen (the corrected
    two-pass variance), ``_is_constant_feature``, ``_handle_zeros_in_scale``; a test checks the
    equality against scikit-learn."""
    n = A.shape[0]
    total = A.sum(axis=0)
    mean = total / n
    centred = A - total / n
    correction = centred.sum(axis=0)
    var = ((centred**2).sum(axis=0) - correction**2 / n) / n
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = np.sqrt(var)
    scale[constant] = 1.0
    return mean, scale


@dataclass(frozen=True)
class Scaling:
    """The standardisation of one job; ``x``/``y`` None when that side is not scaled."""

    x: tuple[np.ndarray, np.ndarray] | None
    y: tuple[float, float] | None

    @classmethod
    def for_job(cls, option: str | None, data: Mapping[str, np.ndarray]) -> Scaling | None:
        """From the job's option and its data (an npz or TaskArrays-like mapping)."""
        if not option or option == "none":
            return None
        stats = {k: data[k] for k in STAT_KEYS if k in data}
        if len(stats) < len(STAT_KEYS):
            stats = statistics(data["X_train"], data["y_train"])
        x = (np.asarray(stats["scale_x_mean"]), np.asarray(stats["scale_x_scale"])) if "x" in option else None
        y = (float(stats["scale_y_mean"][0]), float(stats["scale_y_scale"][0])) if "y" in option else None
        return cls(x, y)

    def transform_x(self, X: np.ndarray) -> np.ndarray:
        return X if self.x is None else (X - self.x[0]) / self.x[1]

    def transform_y(self, y: np.ndarray) -> np.ndarray:
        return y if self.y is None else (y - self.y[0]) / self.y[1]

    def inverse_y(self, pred: np.ndarray) -> np.ndarray:
        return pred if self.y is None else pred * self.y[1] + self.y[0]

    def model_in_original_units(self, text: str, features: list[str], dialect: str) -> str:
        from srtui.engine.expression.rescale import in_original_units

        x = None if self.x is None else (self.x[0].tolist(), self.x[1].tolist())
        return in_original_units(text, features, dialect, x, self.y)


def pop_option(params: dict[str, Any]) -> str | None:
    """The job's scaling option, taken out of the params the method sees."""
    option = params.pop(SCALING_KEY, None)
    return None if option is None else str(option)


def data_arrays(data: Any) -> dict[str, np.ndarray]:
    """The arrays ``Scaling.for_job`` reads, from an npz or a TaskArrays."""
    if hasattr(data, "files"):
        return {k: data[k] for k in ("X_train", "y_train", *STAT_KEYS) if k in data.files}
    out = {"X_train": data.X_train, "y_train": data.y_train}
    out.update({k: v for k, v in (getattr(data, "scale_stats", None) or {}).items()})
    return out
