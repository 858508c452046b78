"""One job as the views read it: its row, the task's arrays from the workspace's data cache, the
built task (ground truth, dates) and the feature names; and the suites a workspace holds.

Looking at results never touches the network and never follows a link a job may have left.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.errors import SrtuiError
from srtui.engine.workspace import Workspace
from srtui.results.store.queries import Reader
from srtui.results.store.queries import suites as stored_suites

if TYPE_CHECKING:
    from srtui.tasks.model import Task


class DetailError(SrtuiError, ValueError):
    """The run cannot be shown (unknown job, no data); one line."""


def suites(reader: Reader) -> list[str]:
    with reader.lock:
        store = reader.store()
        return [] if store is None else stored_suites(store)


def job_row(reader: Reader, job_id: str) -> dict[str, Any] | None:
    """One job's row; its model is the text, or a ``StoredText`` (read a page at a time through
    ``srtui.views.longtext.read_page``) when it is too long to read whole."""
    from srtui.views.longtext import row_with_long_text

    return row_with_long_text(reader, "jobs", "job_id", job_id, "model")


def _data_path(workspace: Workspace, fingerprint: str) -> Path:
    return workspace.data_cache / f"{fingerprint}.npz"


def task_arrays(workspace: Workspace, fingerprint: str) -> dict[str, np.ndarray] | None:
    from srtui.engine.untrusted import UntrustedFileError, open_regular

    try:  # a job may have put a FIFO or a link there: never followed, never waited on
        with open_regular(_data_path(workspace, fingerprint)) as fh, np.load(fh, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, UntrustedFileError, ValueError):
        return None


@lru_cache(maxsize=32)
def built_task(root: str, name: str) -> Task | None:
    """The built task (ground truth, dates), or None. Tasks that need a download are read only
    from the workspace's task cache: looking at results never touches the network."""
    from srtui.tasks import cache
    from srtui.tasks.catalogue import TaskContext, TaskError, entry, get_task

    context = TaskContext.for_workspace(Path(root))
    try:
        if entry(name, context).offline:
            return get_task(name, context)
        files = sorted((Path(root) / "cache" / "tasks").glob(f"{name}-v*.npz"), key=lambda p: p.stat().st_mtime)
        return cache.load(files[-1]) if files else None
    except (TaskError, OSError, ValueError, KeyError):
        return None


def features_of(workspace: Workspace, job: dict[str, Any]) -> tuple[str, ...] | None:
    arrays = task_arrays(workspace, job["data_fingerprint"])
    if arrays is not None:
        return tuple(str(f) for f in arrays["feature_names"])
    task = built_task(str(workspace.root), job["task"])
    return tuple(task.feature_names) if task is not None else None
