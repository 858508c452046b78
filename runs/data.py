"""Task data as the jobs read it: one npz file per task (or tuning fold) in the workspace cache.

Written atomically (a temporary file renamed into place), so a job never reads half a file and
two drivers writing the same task agree.
"""

from __future__ import annotations

import functools
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.untrusted import open_regular, write_file

if TYPE_CHECKING:  # numpy loads when data is written, not when `srtui status` imports runs
    import numpy as np

    from engine.evaluate import TaskArrays
    from tasks.model import Task


#: a data file's row arrays, in TaskArrays' order
ROWS = ("X_train", "y_train", "X_test", "y_test", "train_index", "test_index")


def write_task_data(task: Task, path: Path) -> None:
    from engine.evaluate import TaskArrays

    rows = (task.X_train, task.y_train, task.X_test, task.y_test, task.train_index, task.test_index)
    write_arrays(path, TaskArrays(*rows, feature_names=task.feature_names))


def write_arrays(path: Path, data: TaskArrays) -> None:
    """A job's data file (``TaskArrays.load`` reads it): a task's rows, a protocol's split or a
    tuning fold with its training rows' scaling statistics."""
    import numpy as np

    rows = (data.X_train, data.y_train, data.X_test, data.y_test, data.train_index, data.test_index)
    # Any: numpy's stubs check savez's **arrays against its allow_pickle flag
    arrays: dict[str, Any] = {
        **dict(zip(ROWS, rows)),
        "feature_names": np.array(data.feature_names, dtype=str),
        **data.scale_stats,
    }
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    write_file(tmp, buf.getvalue())  # never through a link planted in cache/
    os.replace(tmp, path)  # replaces a link in its place, never writes through it


@functools.lru_cache(maxsize=64)
def row_indices(data_path: str) -> tuple[np.ndarray, np.ndarray]:
    """A task's train/test row numbers, read once per data file rather than once per job."""
    import numpy as np

    with open_regular(Path(data_path)) as fh, np.load(fh, allow_pickle=False) as z:
        return z["train_index"], z["test_index"]
