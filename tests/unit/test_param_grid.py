"""srtui's expansion of SRBench's ``hyper_params`` lists scikit-learn's ParameterGrid, in its order,
without importing scikit-learn (issue 56: the driver plans with it)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sklearn.model_selection import ParameterGrid

from srtui.engine.methods.param_grid import configurations
from srtui.engine.methods.srbench_dir import expand_hyper_params

GRIDS: list[Any] = [
    {"alpha": (1e-4, 1e-2, 0.1, 1), "kernel": ("linear", "poly", "rbf"), "gamma": (0.01, 0.1)},
    [{"fit_intercept": (True,)}],
    [{"b": [1, 2], "a": ["x", "y"]}, {}, {"c": (None, 3.5)}],
    ({"n": (1, 2, 3)}, {"m": [[1, 2], [3]]}),
    [{"z": (1,), "a": (2,), "m": (3, 4)}],
]


def _sklearn(grid: Any) -> list[dict[str, Any]]:
    tables = [grid] if isinstance(grid, dict) else grid
    tables = [{k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in t.items()} for t in tables]
    return list(ParameterGrid(tables))


@pytest.mark.parametrize("grid", GRIDS)
def test_configurations_are_parameter_grids_in_its_order(grid: Any) -> None:
    assert configurations(grid) == _sklearn(grid)
    assert expand_hyper_params(grid, None) == _sklearn(grid)
    assert expand_hyper_params(grid) == _sklearn(grid)[:4]  # SRBench 2.0 proposes at most 4


def test_a_single_value_stands_for_itself_and_nothing_is_nothing() -> None:
    assert configurations({"a": 1, "b": "text"}) == [{"a": 1, "b": "text"}]
    assert configurations(None) == configurations({}) == configurations([]) == []


def test_malformed_grids_fail_as_parameter_grid_does() -> None:
    with pytest.raises(TypeError, match="not a dict"):
        configurations([{"a": (1,)}, "b"])
    with pytest.raises(TypeError, match="dict or a list"):
        configurations(3)
    with pytest.raises(ValueError, match="non-empty"):
        configurations([{"a": (1, 2)}, {"b": ()}])


def test_expanding_a_grid_imports_no_scikit_learn() -> None:
    code = (
        "import sys; from srtui.engine.methods.srbench_dir import expand_hyper_params; "
        "assert len(expand_hyper_params({'a': (1, 2), 'b': (3, 4)}, None)) == 4; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
