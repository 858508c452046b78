"""SRBench's ``hyper_params`` as configurations, the way scikit-learn's ``ParameterGrid`` lists
them, without importing scikit-learn.

The driver expands a method folder's literal grid while it plans (``srtui run --dry-run``
included): importing scikit-learn for it cost 1.7 s of a 2.3 s plan, and 16 s under load (issue
56). The order is ``ParameterGrid``'s (each table's keys sorted, the last key varying fastest),
which is the order SRBench's searches saw; ``tests/unit/test_param_grid.py`` checks it against
scikit-learn's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any


def configurations(grid: Any, limit: int | None = None) -> list[dict[str, Any]]:
    """The configurations of ``grid`` (a table of value lists, or a list of them; a value that
    is no list or tuple stands for itself), the first ``limit`` of them (None: all)."""
    if not grid:
        return []
    tables = [grid] if isinstance(grid, dict) else grid
    if isinstance(tables, (str, bytes)) or not hasattr(tables, "__iter__"):
        raise TypeError(f"Parameter grid should be a dict or a list, got: {grid!r} of type {type(grid).__name__}")
    return list(itertools.islice(_each(list(tables)), limit))


def _each(tables: list[Any]) -> Iterator[dict[str, Any]]:
    checked = []
    for table in tables:  # all checked before the first is listed, as ParameterGrid does
        if not isinstance(table, dict):
            raise TypeError(f"Parameter grid is not a dict ({table!r})")
        values = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in table.items()}
        for key, options in values.items():
            if not options:
                raise ValueError(f"Parameter grid for parameter {key!r} need to be a non-empty sequence, got: []")
        checked.append(sorted(values.items()))
    for items in checked:
        if not items:
            yield {}
            continue
        keys = [key for key, _ in items]
        for combo in itertools.product(*(values for _, values in items)):
            yield dict(zip(keys, combo, strict=True))
