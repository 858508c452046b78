"""Task data as the jobs read it: one npz file per task (or tuning fold) in the workspace cache.

Written atomically (a temporary file renamed into place), so a job never reads half a file and
two drivers writing the same task agree.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from engine.untrusted import open_regular, write_file

if TYPE_CHECKING:  # numpy loads when data is written, not when `srtui status` imports runs
    import numpy as np

    from tasks.model import Task


class DataArrays(TypedDict):
    """A job's data file: its rows (a task's split, a protocol's split or a tuning fold)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    feature_names: list[str]


def write_task_data(task: Task, path: Path) -> None:
    write_arrays(
        path,
        {
            "X_train": task.X_train,
            "y_train": task.y_train,
            "X_test": task.X_test,
            "y_test": task.y_test,
            "train_index": task.train_index,
            "test_index": task.test_index,
            "feature_names": task.feature_names,
        },
    )


def write_arrays(path: Path, arrays: Mapping[str, Any]) -> None:
    """``arrays``: a ``DataArrays``, with the scaling statistics when the protocol scales."""
    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "feature_names": np.array(arrays["feature_names"], dtype=str)})
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    write_file(tmp, buf.getvalue())  # never through a link planted in cache/
    os.replace(tmp, path)  # replaces a link in its place, never writes through it


@functools.lru_cache(maxsize=64)
def row_indices(data_path: str) -> tuple[np.ndarray, np.ndarray]:
    """A task's train/test row numbers, read once per data file rather than once per job."""
    import numpy as np

    with open_regular(Path(data_path)) as fh, np.load(fh, allow_pickle=False) as z:
        return z["train_index"], z["test_index"]
