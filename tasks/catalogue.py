"""The task catalogue: every task srtui knows, by name, built on demand.

Generators register themselves here at import time (see ``_load_builtin``); each entry says its
track and whether building it needs downloaded data, so `tasks list` works offline and instantly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tasks.model import Task


class TaskError(ValueError):
    """A task that cannot be found or built; the message is one line for the CLI."""


@dataclass(frozen=True)
class TaskEntry:
    name: str
    track: str
    build: Callable[["TaskContext"], Task]
    offline: bool = True
    description: str = ""


@dataclass(frozen=True)
class TaskContext:
    """Where a task may read local data from and cache what it builds or downloads."""

    cache_dir: Path | None = None
    data_dir: Path | None = None


_REGISTRY: dict[str, TaskEntry] = {}
_LOADED = False


def register(entry: TaskEntry) -> None:
    if entry.name in _REGISTRY:
        raise RuntimeError(f"task {entry.name!r} registered twice")
    _REGISTRY[entry.name] = entry


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from tasks.generators import smoke  # noqa: F401  (registers on import)


def entries() -> list[TaskEntry]:
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda e: (e.track, e.name))


def entry(name: str) -> TaskEntry:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise TaskError(f"unknown task {name!r} (see `srtui tasks list`)") from None


def get_task(name: str, context: TaskContext | None = None) -> Task:
    return entry(name).build(context or TaskContext())
