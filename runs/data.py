"""Task data as the jobs read it: one npz file per task (or tuning fold) in the workspace cache.

Written atomically (a temporary file renamed into place), so a job never reads half a file and
two drivers writing the same task agree; the same arrays make the same bytes, so a file in place
is checked (srtui.engine.task_files), and written only if a job changed it.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.task_files import TASK_FILES
from srtui.engine.untrusted import open_regular

if TYPE_CHECKING:  # numpy loads when data is written, not when `srtui status` imports runs
    import numpy as np

    from srtui.engine.outcome_check import TaskArrays
    from srtui.tasks.model import Task


#: a data file's row arrays, in TaskArrays' order
ROWS = ("X_train", "y_train", "X_test", "y_test", "train_index", "test_index")


def write_task_data(task: Task, path: Path) -> None:
    from srtui.engine.outcome_check import TaskArrays

    rows = (task.X_train, task.y_train, task.X_test, task.y_test, task.train_index, task.test_index)
    write_arrays(path, TaskArrays(*rows, feature_names=task.feature_names))


def write_arrays(path: Path, data: TaskArrays) -> None:
    """A job's data file (``TaskArrays.load`` reads it): a task's rows, a protocol's split or a
    tuning fold with its training rows' scaling statistics. Written unless ``path`` already holds
    these bytes; the driver keeps them and hands every job a checked copy (srtui.engine.task_files)."""
    import numpy as np

    rows = (data.X_train, data.y_train, data.X_test, data.y_test, data.train_index, data.test_index)
    # Any: numpy's stubs check savez's **arrays against its allow_pickle flag
    arrays: dict[str, Any] = {
        **dict(zip(ROWS, rows)),
        "feature_names": np.array(data.feature_names, dtype=str),
        **data.scale_stats,
    }
    TASK_FILES.ensure(path, npz_bytes(arrays))


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """An ``.npz`` as numpy's savez writes it, but the same bytes for the same arrays (a fixed
    date in the zip): a file already in place is checked by its sha256, not rewritten."""
    import zipfile  # here: a dry run writes no data

    import numpy as np

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(value), allow_pickle=False)
    return buf.getvalue()


@functools.lru_cache(maxsize=64)
def row_indices(data_path: str) -> tuple[np.ndarray, np.ndarray]:
    """A task's train/test row numbers, read once per data file rather than once per job, from
    the bytes the driver wrote (a job may have changed the file)."""
    import numpy as np

    known = TASK_FILES.true_bytes(data_path)
    with (
        io.BytesIO(known[0]) if known else open_regular(Path(data_path)) as fh,
        np.load(fh, allow_pickle=False) as z,
    ):
        return z["train_index"], z["test_index"]


@functools.lru_cache(maxsize=64)
def targets(data_path: str) -> tuple[np.ndarray, np.ndarray]:
    """A task's train/test targets (what its jobs' accuracy is taken against), read once per data
    file, from the bytes the driver wrote."""
    import numpy as np

    known = TASK_FILES.true_bytes(data_path)
    with (
        io.BytesIO(known[0]) if known else open_regular(Path(data_path)) as fh,
        np.load(fh, allow_pickle=False) as z,
    ):
        return z["y_train"], z["y_test"]
