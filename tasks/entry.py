"""What the catalogue holds about a task (its entry), where a task reads its data from (its
context), and the one error of finding or building a task. A module of its own, below the
catalogue, so that the loaders the catalogue reads can import it without an import loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srtui.engine.errors import SrtuiError
from srtui.engine.protocols import PARSE_EXACT
from srtui.tasks.model import Task

if TYPE_CHECKING:
    from srtui.tasks.datafiles import RemoteFile


class TaskError(SrtuiError, ValueError):
    """A task that cannot be found or built; the message is one line for the CLI."""


@dataclass(frozen=True)
class TaskEntry:
    name: str
    track: str
    build: Callable[[TaskContext], Task]
    offline: bool = True
    description: str = ""
    #: the data files the build reads (`srtui tasks fetch` gets them before a run)
    files: tuple[RemoteFile, ...] = ()


@dataclass(frozen=True)
class TaskContext:
    """Where a task may read local data from and cache what it builds or downloads."""

    cache_dir: Path | None = None
    data_dir: Path | None = None
    #: the workspace root, where user tasks live (``<workspace>/tasks/NAME/``)
    workspace: Path | None = None
    #: how PMLB files' numbers are parsed: the run's protocol's ``data_parse`` (srtui.engine.protocols)
    parse: str = PARSE_EXACT

    @classmethod
    def for_workspace(cls, workspace: Path, data_dir: Path | None = None, parse: str = PARSE_EXACT) -> TaskContext:
        return cls(cache_dir=workspace / "cache", data_dir=data_dir, workspace=workspace, parse=parse)
