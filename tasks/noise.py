"""Target noise, as each benchmark defines it."""

from __future__ import annotations

import math

import numpy as np


def srbench2022_sigma(y: np.ndarray, r: float, ddof: int = 1) -> float:
    """The competition's noise scale: s = std(y) * sqrt(r / (1 - r)), so the noise is a share r of
    the noisy target's variance.

    ``ddof = 1`` is what the competition's files use (``pandas.Series.std`` over the whole
    noiseless target, train rows then test rows); its shortcut features use numpy's ``ddof = 0``.
    Computed the way each of those computes it, so the files are reproduced to the last bit.
    """
    if not 0 <= r < 1:
        raise ValueError(f"noise ratio must be in [0, 1), got {r}")
    if ddof == 1:
        import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

        spread = float(pd.Series(y).std())
    else:
        spread = float(np.std(y))
    return spread * math.sqrt(r / (1.0 - r))


def add_srbench2022_noise(y: np.ndarray, r: float, seed: int) -> np.ndarray:
    """The competition's target noise: ``y + default_rng(seed).normal(0, s, len(y))``, a *fresh*
    generator from the task's seed (the one that drew the inputs starts the same way)."""
    if r == 0:
        return y.copy()
    return y + np.random.default_rng(seed).normal(0.0, srbench2022_sigma(y, r), len(y))


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
