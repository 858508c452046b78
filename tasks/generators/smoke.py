"""Small offline tasks for the smoke suite and self-tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from srtui.tasks.catalogue import TaskEntry, register
from srtui.tasks.model import Task


def _first_rows(name: str, kind: str, seed: int, X: np.ndarray, y: np.ndarray, n_train: int, **fields: Any) -> Task:
    """Features x0..x2, the first ``n_train`` rows train, the rest test."""
    n = len(y)
    idx = np.arange(n)
    return Task(
        name=name,
        track="smoke",
        feature_names=["x0", "x1", "x2"],
        target_name="y",
        X_train=X[:n_train],
        y_train=y[:n_train],
        X_test=X[n_train:],
        y_test=y[n_train:],
        train_index=idx[:n_train],
        test_index=idx[n_train:],
        difficulty="easier",
        split=f"first {n_train} rows train, last {n - n_train} test",
        provenance={"source": "generated", "generator": f"srtui.tasks.generators.smoke.{kind}", "seed": seed},
        **fields,
    )


def interaction(seed: int = 42, n: int = 200) -> Task:
    """y = 0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1 on uniform [-3, 3]^3, 75/25 split (issue #3's check)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    y = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    return _first_rows(
        "smoke-interaction",
        "interaction",
        seed,
        X,
        y,
        int(n * 0.75),
        ground_truth="0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1",
        property="exact_rediscovery",
        description="Interaction term plus linear terms; no noise.",
    )


def linear(seed: int = 7, n: int = 120) -> Task:
    """y = 2*x0 - 3*x1 + 0.5 on uniform [-1, 1]^2 with one irrelevant feature x2."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = 2 * X[:, 0] - 3 * X[:, 1] + 0.5
    return _first_rows(
        "smoke-linear",
        "linear",
        seed,
        X,
        y,
        n // 2,
        ground_truth="2*x0 - 3*x1 + 0.5",
        irrelevant_features=frozenset({"x2"}),
        property="feature_absence",
        description="A linear target with one irrelevant feature.",
    )


register(TaskEntry("smoke-interaction", "smoke", lambda ctx: interaction(), description=interaction.__doc__ or ""))
register(TaskEntry("smoke-linear", "smoke", lambda ctx: linear(), description=linear.__doc__ or ""))
