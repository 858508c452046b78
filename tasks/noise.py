"""Target noise, as each benchmark defines it."""

from __future__ import annotations

import numpy as np


def srbench2022_sigma(y: np.ndarray, r: float) -> float:
    """The competition's noise scale: N(0, s) with s = std(y) * sqrt(r / (1 - r)).

    With this s the noise makes up a share r of the noisy target's variance (var_n / var_total = r).
    """
    if not 0 <= r < 1:
        raise ValueError(f"noise ratio must be in [0, 1), got {r}")
    return float(np.std(y) * np.sqrt(r / (1 - r)))


def add_srbench2022_noise(y: np.ndarray, r: float, rng: np.random.Generator) -> np.ndarray:
    if r == 0:
        return y.copy()
    return y + rng.normal(0.0, srbench2022_sigma(y, r), size=y.shape)


def add_rms_noise(y: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """SRBench (2021) ground-truth noise: N(0, level * RMS(y)) added to each value."""
    if level == 0:
        return y.copy()
    rms = float(np.sqrt(np.mean(np.square(y))))
    return y + rng.normal(0.0, level * rms, size=y.shape)


def add_relative_noise(y: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Multiplicative noise y * (1 + level * N(0, 1)): 'x % noise' of the first-principles laws."""
    if level == 0:
        return y.copy()
    return y * (1.0 + level * rng.normal(size=y.shape))
