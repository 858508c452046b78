"""Small offline tasks for the smoke suite and self-tests."""

from __future__ import annotations

import numpy as np

from tasks.catalogue import TaskEntry, register
from tasks.model import Task


def interaction(seed: int = 42, n: int = 200) -> Task:
    """y = 0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1 on uniform [-3, 3]^3, 75/25 split (issue #3's check)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    y = 0.4 * X[:, 0] * X[:, 1] - 1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    n_train = int(n * 0.75)
    idx = np.arange(n)
    return Task(
        name="smoke-interaction",
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
        ground_truth="0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1",
        split=f"first {n_train} rows train, last {n - n_train} test",
        property="exact_rediscovery",
        provenance={"source": "generated", "generator": "tasks.generators.smoke.interaction", "seed": seed},
        description="Interaction term plus linear terms; no noise.",
    )


def linear(seed: int = 7, n: int = 120) -> Task:
    """y = 2*x0 - 3*x1 + 0.5 on uniform [-1, 1]^2 with one irrelevant feature x2."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = 2 * X[:, 0] - 3 * X[:, 1] + 0.5
    n_train = n // 2
    idx = np.arange(n)
    return Task(
        name="smoke-linear",
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
        ground_truth="2*x0 - 3*x1 + 0.5",
        irrelevant_features=frozenset({"x2"}),
        split=f"first {n_train} rows train, last {n - n_train} test",
        property="feature_absence",
        provenance={"source": "generated", "generator": "tasks.generators.smoke.linear", "seed": seed},
        description="A linear target with one irrelevant feature.",
    )


register(TaskEntry("smoke-interaction", "smoke", lambda ctx: interaction(), description=interaction.__doc__ or ""))
register(TaskEntry("smoke-linear", "smoke", lambda ctx: linear(), description=linear.__doc__ or ""))
