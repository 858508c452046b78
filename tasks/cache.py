"""Cache of built tasks in the workspace (``<cache>/tasks/NAME-vVERSION.npz``).

A builder's version string goes into the file name, so changing a generator means bumping its
version and the old cache file is simply never read again.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from srtui.engine.protocols import PARSE_EXACT
from srtui.engine.untrusted import UntrustedFileError, read_file, write_file
from srtui.tasks.catalogue import TaskContext, TaskEntry, register
from srtui.tasks.datafiles import RemoteFile, sources, unchanged
from srtui.tasks.model import Task

_ARRAYS = ("X_train", "y_train", "X_test", "y_test", "train_index", "test_index")
_OPTIONAL = ("dates_train", "dates_test")


def cache_path(context: TaskContext, name: str, version: str) -> Path | None:
    if context.cache_dir is None:
        return None
    return Path(context.cache_dir) / "tasks" / f"{name}-v{version}.npz"


def _meta(task: Task) -> dict[str, Any]:
    return {
        "name": task.name,
        "track": task.track,
        "feature_names": list(task.feature_names),
        "target_name": task.target_name,
        "difficulty": task.difficulty,
        "ground_truth": task.ground_truth,
        "irrelevant_features": sorted(task.irrelevant_features),
        "shortcut_features": sorted(task.shortcut_features),
        "split": task.split,
        "noise": task.noise,
        "property": task.property,
        "provenance": task.provenance,
        "description": task.description,
    }


def save(task: Task, path: Path, sources: list[list[object]] | None = None) -> None:
    arrays = {k: getattr(task, k) for k in _ARRAYS}
    for k in _OPTIONAL:
        value = getattr(task, k)
        if value is not None:
            arrays[k] = np.asarray(value, dtype=str)
    buf = io.BytesIO()
    meta = {**_meta(task), "sources": sources or []}
    np.savez(buf, meta=np.array(json.dumps(meta)), **arrays)
    # atomic (a concurrent reader sees the old file or the whole new one), never through a link
    write_file(path, buf.getvalue(), atomic=True)


#: the largest cached task read back (the bounded reader refuses a bigger file before reading)
MAX_CACHE_BYTES = 1 << 32


def load(path: Path) -> Task:
    """A cached task, read through the bounded reader; ValueError when it is damaged or when a
    data file it was built from is no longer the very file it read (replaced, rewritten, or put
    back): then it is built again, from the data verified anew."""
    raw = read_file(path, MAX_CACHE_BYTES)
    with np.load(io.BytesIO(raw), allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        arrays = {k: data[k] for k in _ARRAYS}
        optional = {k: data[k] if k in data.files else None for k in _OPTIONAL}
    if not isinstance(meta, dict) or not unchanged(meta.pop("sources", None) or []):
        raise ValueError(f"{path}: a data file it was built from changed")
    meta["irrelevant_features"] = frozenset(meta["irrelevant_features"])
    meta["shortcut_features"] = frozenset(meta["shortcut_features"])
    fields: dict[str, Any] = {**meta, **arrays, **optional}
    return Task(**fields)


def cached(context: TaskContext, name: str, version: str, build: Callable[[], Task]) -> Task:
    """Load ``name`` from the cache, or build it and store it there. A cached build is checked
    each time it is read: damaged, or built from a data file since replaced, it is built anew."""
    path = cache_path(context, name, version)
    if path is not None and (path.exists() or path.is_symlink()):
        try:
            return load(path)
        except (OSError, ValueError, KeyError, TypeError, RecursionError, UntrustedFileError):
            pass  # a damaged cache file (or a FIFO, a link, a stale build) is rebuilt, never trusted
    with sources() as read:
        task = build()
    if path is not None:
        save(task, path, read)
    return task


def builder(name: str, version: str, build: Callable[[], Task]) -> Callable[[TaskContext], Task]:
    """A catalogue entry's build: ``build()`` through the cache of the context it is given."""

    def from_cache(context: TaskContext) -> Task:
        return cached(context, name, version, build)

    return from_cache


def register_generated(name: str, track: str, version: str, build: Callable[[], Task], description: str) -> None:
    """Register a task a generator builds offline (``build()``, through the cache)."""
    register(TaskEntry(name, track, builder(name, version, build), description=description))


def register_loaded(
    name: str,
    track: str,
    version: str,
    build: Callable[[TaskContext], Task],
    description: str,
    files: tuple[RemoteFile, ...],
    by_parse: bool = False,
) -> None:
    """Register a task a loader builds from downloaded ``files`` (``build(context)``, through the
    cache of that context). ``by_parse``: the build reads the numbers as ``context.parse`` says,
    so a parse other than the exact one is cached apart (``NAME-vVERSION+PARSE.npz``)."""

    def from_cache(context: TaskContext) -> Task:
        key = f"{version}+{context.parse}" if by_parse and context.parse != PARSE_EXACT else version
        return cached(context, name, key, lambda: build(context))

    register(TaskEntry(name, track, from_cache, offline=False, description=description, files=files))
