"""Helpers shared by generators and loaders: one full table plus a split makes a Task."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from srtui.tasks.model import Task


def make_task(
    name: str,
    track: str,
    features: list[str],
    target: str,
    X: np.ndarray,
    y: np.ndarray,
    train_index: np.ndarray,
    test_index: np.ndarray,
    y_test_override: np.ndarray | None = None,
    dates: np.ndarray | None = None,
    **fields: Any,
) -> Task:
    """Cut the full table ``X, y`` into train/test rows (``y_test_override`` e.g. noiseless)."""
    X = np.ascontiguousarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    train_index = np.asarray(train_index, dtype=np.int64)
    test_index = np.asarray(test_index, dtype=np.int64)
    y_test = y[test_index] if y_test_override is None else np.asarray(y_test_override, dtype=float)
    return Task(
        name=name,
        track=track,
        feature_names=list(features),
        target_name=target,
        X_train=X[train_index],
        y_train=y[train_index],
        X_test=X[test_index],
        y_test=y_test,
        train_index=train_index,
        test_index=test_index,
        dates_train=None if dates is None else np.asarray(dates, dtype=str)[train_index],
        dates_test=None if dates is None else np.asarray(dates, dtype=str)[test_index],
        **fields,
    )


def stable_seed(*parts: object) -> int:
    """A seed derived from names (not Python's salted hash), for generators with no seed axis."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def shuffled_split(n: int, train_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split of ``n`` rows (SRBench's 75/25), indices sorted."""
    perm = np.random.default_rng(seed).permutation(n)
    n_train = round(n * train_fraction)
    return np.sort(perm[:n_train]), np.sort(perm[n_train:])
