"""The task catalogue: every task srtui knows, by name, built on demand.

Each module of tasks/generators/ and tasks/loaders/ registers its tasks here when imported
(``srtui.tasks.cache.register_generated`` / ``register_loaded``, or :func:`register`), and
``_load_builtin`` imports every module of the two packages: adding a task family is adding one
module. Each entry says its track and whether building it needs downloaded data, so `tasks list`
works offline and instantly.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from srtui.engine.errors import did_you_mean
from srtui.engine.extensions import import_every_module
from srtui.engine.names import quoted
from srtui.tasks.entry import TaskContext, TaskEntry, TaskError
from srtui.tasks.model import Task

if TYPE_CHECKING:
    from srtui.tasks.loaders.user import Declared

_REGISTRY: dict[str, TaskEntry] = {}
#: task name -> the module that registered it
_MODULE: dict[str, str] = {}
#: one line each about what the catalogue cannot do (`tasks list` prints them)
_NOTES: list[str] = []
_LOADED = False


def register(entry: TaskEntry) -> None:
    if entry.name in _REGISTRY:
        raise RuntimeError(f"task {entry.name!r} registered twice")
    _REGISTRY[entry.name] = entry
    module = _registering_module()
    if module:
        _MODULE[entry.name] = module


def _registering_module() -> str:
    """The module of tasks/generators/ or tasks/loaders/ whose import registers a task: the
    innermost module body of theirs on the stack (a helper of another module may do the
    registering; a module imported before the catalogue loads the rest is still named)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if frame.f_code.co_name == "<module>" and name.startswith(("srtui.tasks.generators.", "srtui.tasks.loaders.")):
            return name
        frame = frame.f_back
    return ""


def register_note(text: str) -> None:
    _NOTES.append(text)


def notes() -> list[str]:
    _load_builtin()
    return list(_NOTES)


def _load_builtin() -> None:
    """Import every module of tasks/generators/ and tasks/loaders/ (generators first, each
    package's modules by name): each registers its tasks on import, never building data."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from srtui.tasks import generators, loaders

    for package in (generators, loaders):
        import_every_module(package)


def modules() -> dict[str, list[TaskEntry]]:
    """Each module of tasks/generators/ and tasks/loaders/ that registers tasks, with its entries
    by name (`srtui tasks list --modules`, the docs table of docs/suites-tasks.md)."""
    _load_builtin()
    out: dict[str, list[TaskEntry]] = {}
    for name in sorted(_MODULE):  # a task registered from elsewhere (a test's) is no module's
        out.setdefault(_MODULE[name], []).append(_REGISTRY[name])
    return dict(sorted(out.items()))


def docs_table() -> str:
    """The table of docs/suites-tasks.md "Task modules", generated from the registry."""
    rows = ["| module | tracks | tasks | data | first task |", "| --- | --- | --- | --- | --- |"]
    for module, found in modules().items():
        tracks = ", ".join(f"`{t}`" for t in sorted({e.track for e in found}))
        data = sorted({"offline" if e.offline else "download" for e in found}, reverse=True)
        rows.append(f"| `{module}` | {tracks} | {len(found)} | {', '.join(data)} | `{found[0].name}` |")
    return "\n".join(rows) + "\n"


def _user_entries(context: TaskContext | None) -> dict[str, TaskEntry]:
    if context is None or context.workspace is None:
        return {}
    from srtui.tasks.loaders.user import user_entries

    return {e.name: e for e in user_entries(context.workspace)}


def entries(context: TaskContext | None = None) -> list[TaskEntry]:
    """Every built-in task, plus the workspace's user tasks when ``context.workspace`` is set."""
    _load_builtin()
    merged = {**_user_entries(context), **_REGISTRY}
    return sorted(merged.values(), key=lambda e: (e.track, e.name))


def add_user_task(
    workspace: Path, name: str, csv: Path, target: str, test: Path | None = None, declared: Declared | None = None
) -> Task:
    """Store a user task (:func:`srtui.tasks.loaders.user.add_user_task`) under a name no built-in task has."""
    from srtui.tasks.loaders import user

    declared = user.Declared() if declared is None else declared
    return user.add_user_task(workspace, name, csv, target, test, declared, reserved=set(builtin_names()))


def builtin_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def entry(name: str, context: TaskContext | None = None) -> TaskEntry:
    _load_builtin()
    if name in _REGISTRY:
        return _REGISTRY[name]
    user = _user_entries(context)
    if name in user:
        return user[name]
    raise TaskError(f"unknown task {quoted(name)} (see `srtui tasks list`){did_you_mean(name, [*_REGISTRY, *user])}")


def get_task(name: str, context: TaskContext | None = None) -> Task:
    context = context or TaskContext()
    return entry(name, context).build(context)
