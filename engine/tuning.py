"""Protocols as data, and hyper-parameter tuning expanded into ordinary jobs.

A protocol fixes how a (task, method, seed) is run. With a search, each configuration of the
method's grid (its defaults, then its ``hyper_params``) is fitted on every cross-validation fold
of the training set as an ordinary engine job (same limits, resumable, on any backend); the
configuration with the best mean validation R2 is then fitted on the whole training set: the one
*final* job per (task, method, seed).

Folds are scikit-learn's ``KFold(n_splits, shuffle=True, random_state=seed)`` (reproduced here so
the driver does not import scikit-learn; tests check the equality), and the choice is
``GridSearchCV``'s: the highest mean score, the first configuration on ties, a configuration with
a failed fold (no score) ranked last.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


class ProtocolError(ValueError):
    """An unknown protocol; one line for the CLI."""


@dataclass(frozen=True)
class Protocol:
    name: str
    search: str | None  # None: no tuning (the method's defaults, or the suite's params)
    folds: int = 0
    description: str = ""


PROTOCOLS = {
    "none": Protocol("none", None, description="one fit per (task, method, seed) with the given params"),
    "srbench2025": Protocol(
        "srbench2025", "grid", 5,
        "SRBench 2.0: grid search over the method's defaults + hyper_params, 5-fold shuffled CV on the "
        "training set, R2; the best configuration refitted on the whole training set",
    ),
}
#: named here so the error can say what is missing rather than "unknown"
NOT_YET = {"srbench2021": "SRBench 2021's halving grid search (HalvingGridSearchCV) is not implemented yet"}


def get_protocol(name: str) -> Protocol:
    if name in PROTOCOLS:
        return PROTOCOLS[name]
    if name in NOT_YET:
        raise ProtocolError(f"protocol {name!r}: {NOT_YET[name]}")
    raise ProtocolError(f"unknown protocol {name!r} (protocols: {', '.join(PROTOCOLS)})")


def configurations(default_params: dict[str, Any], hyper_params: Sequence[dict[str, Any]],
                   base: dict[str, Any]) -> list[dict[str, Any]]:
    """The grid: the defaults (``base``: the suite's params over the method's), then each of
    ``hyper_params`` over ``base``; repeats dropped, order kept."""
    grid, seen = [], set()
    for extra in [{}, *hyper_params]:
        params = {**base, **extra}
        key = json.dumps({**default_params, **params}, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            grid.append(params)
    return grid


def kfold(n_rows: int, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train rows, validation rows) of ``KFold(n_splits, shuffle=True, random_state=seed)``."""
    if not 2 <= n_splits <= n_rows:
        raise ProtocolError(f"cannot make {n_splits} folds of {n_rows} training rows")
    order = np.arange(n_rows)
    np.random.RandomState(seed % 2**32).shuffle(order)
    sizes = np.full(n_splits, n_rows // n_splits)
    sizes[: n_rows % n_splits] += 1
    folds, start = [], 0
    for size in sizes:
        validation = np.sort(order[start : start + size])  # KFold yields the rows in order
        mask = np.ones(n_rows, dtype=bool)
        mask[validation] = False
        folds.append((np.arange(n_rows)[mask], validation))
        start += size
    return folds


def best_configuration(scores: Sequence[Sequence[float | None]]) -> tuple[int, list[float]]:
    """(index of the chosen configuration, mean score of each); ``scores[c][f]`` is the
    validation R2 of configuration c on fold f (None: the fold job failed)."""
    means = []
    for row in scores:
        values = [math.nan if s is None else float(s) for s in row]
        means.append(math.nan if not values or any(math.isnan(v) for v in values) else float(np.mean(values)))
    finite = [(m, -i) for i, m in enumerate(means) if not math.isnan(m)]
    if not finite:
        return 0, means  # every configuration failed somewhere: the defaults, as GridSearchCV's rank 1
    return -max(finite)[1], means
