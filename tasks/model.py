"""The task model: one regression problem with its data, split, ground truth and provenance."""

from __future__ import annotations

import builtins
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The task property a track scores beside accuracy and simplicity (SRBench 2022 rules).
PROPERTIES = (
    "exact_rediscovery",  # symbolic solution up to an additive/multiplicative constant
    "feature_absence",  # share of irrelevant (or shortcut) features left out of the model
    "extrapolation",  # test R2 on an out-of-range test split
    "noise_robustness",  # test R2 relative to the noiseless variant
    "trust",  # expert trust score (real-world track)
    "accuracy",  # nothing beyond accuracy (black-box / qualification)
)


@dataclass
class Task:
    name: str
    track: str
    feature_names: list[str]
    target_name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    #: row numbers of the train/test rows in the task's full table, so stored predictions can be
    #: lined up with the data (plots, re-scoring) without a re-run
    train_index: np.ndarray
    test_index: np.ndarray
    difficulty: str | None = None
    #: ground-truth expression over ``feature_names`` (read through srtui.engine.expression), if known
    ground_truth: str | None = None
    irrelevant_features: frozenset[str] = frozenset()
    shortcut_features: frozenset[str] = frozenset()
    split: str = ""
    noise: float = 0.0
    property: str = "accuracy"
    provenance: dict[str, Any] = field(default_factory=dict)
    #: ISO dates of the rows for time-series tasks (real-world track), else None
    dates_train: np.ndarray | None = None
    dates_test: np.ndarray | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.property not in PROPERTIES:
            raise ValueError(f"task {self.name}: unknown property {self.property!r}")
        n_feat = len(self.feature_names)
        for part in ("X_train", "X_test"):
            arr = getattr(self, part)
            if arr.ndim != 2 or arr.shape[1] != n_feat:
                raise ValueError(f"task {self.name}: {part} has shape {arr.shape}, expected (*, {n_feat})")
        if len(self.y_train) != len(self.X_train) or len(self.y_test) != len(self.X_test):
            raise ValueError(f"task {self.name}: X and y row counts differ")

    @builtins.property  # the field `property` shadows the builtin inside this class body
    def n_features(self) -> int:
        return len(self.feature_names)

    def fingerprint(self) -> str:
        """A stable hash of everything a method sees: names and the exact bytes of the arrays.

        Part of every job spec, so a change of data (noise level, split, generator seed) makes a
        new job instead of silently resuming an old one.
        """
        h = hashlib.sha256()
        h.update("\x1f".join([self.target_name, *self.feature_names]).encode())
        for arr in (self.X_train, self.y_train, self.X_test, self.y_test, self.train_index, self.test_index):
            a = np.ascontiguousarray(arr)
            h.update(str(a.dtype).encode() + str(a.shape).encode())
            h.update(a.tobytes())
        return h.hexdigest()[:20]

    def summary(self) -> dict[str, Any]:
        """A JSON-able description (no arrays) for `tasks show` and the store."""
        return {
            "name": self.name,
            "track": self.track,
            "difficulty": self.difficulty,
            "n_train": len(self.y_train),
            "n_test": len(self.y_test),
            "features": list(self.feature_names),
            "target": self.target_name,
            "ground_truth": self.ground_truth,
            "irrelevant_features": sorted(self.irrelevant_features),
            "shortcut_features": sorted(self.shortcut_features),
            "split": self.split,
            "noise": self.noise,
            "property": self.property,
            "provenance": self.provenance,
            "time_series": self.dates_train is not None,
            "description": self.description,
        }
