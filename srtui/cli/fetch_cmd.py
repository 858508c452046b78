"""`srtui tasks fetch SUITE|TASK...`: the data files a run needs, before it starts."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from srtui.cli.common import CliError
from srtui.engine.textsafe import raw_stream

if TYPE_CHECKING:
    from srtui.tasks.catalogue import TaskContext
    from srtui.tasks.fetch import FetchPlan, FetchResult


def task_names(names: list[str], workspace: Path | None) -> list[str]:
    """Each name is a task, a task pattern or a suite (built in, or a .toml file)."""
    from srtui.tasks.catalogue import builtin_names
    from srtui.tasks.suites import SuiteError, builtin_suite_names, expand_tasks, load_suite

    known = set(builtin_names())
    out: list[str] = []
    for name in names:
        if name in known or any(ch in name for ch in "*?["):
            found = expand_tasks([name], "argument", workspace)
        elif name in builtin_suite_names() or name.endswith(".toml"):
            found = load_suite(name, workspace).tasks
        else:
            raise SuiteError(
                f"{name!r} is neither a task nor a suite (see `srtui tasks list`; suites: "
                + ", ".join(builtin_suite_names())
                + ")"
            )
        out += [t for t in found if t not in out]
    return out


def fetch(names: list[str], context: TaskContext, to: Path | None, workers: int) -> None:
    from srtui.tasks.fetch import needed, plan

    if workers < 1:
        raise CliError(f"--jobs must be at least 1, got {workers}")
    todo = plan(needed(task_names(names, context.workspace), context), context)
    if not todo.files:
        print("these tasks read no data files (they are generated offline)")
        return
    started = time.monotonic()
    result = _with_progress(todo, context, to, workers)
    _summary(todo, result, to, time.monotonic() - started)


def _with_progress(todo: FetchPlan, context: TaskContext, to: Path | None, workers: int) -> FetchResult:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from srtui.tasks.fetch import fetch_files

    sizes = [f.size for f in todo.missing]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    console = Console(file=raw_stream(sys.stderr))
    with Progress(
        TextColumn("files {task.fields[done]}/{task.fields[of]}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        bar = progress.add_task("fetch", total=total, done=0, of=len(todo.files))
        done = [0]

        def on_file(_: object) -> None:
            done[0] += 1
            progress.update(bar, done=done[0])

        return fetch_files(todo, context, to, workers, lambda n: progress.update(bar, advance=n), on_file)


def _summary(todo: FetchPlan, result: FetchResult, to: Path | None, seconds: float) -> None:
    where = f"into {to}" if to is not None else "into the workspace cache"
    parts = [f"{len(result.fetched)} downloaded ({result.bytes / 1e6:.1f} MB) {where}"]
    if result.copied:
        parts.append(f"{len(result.copied)} copied from local copies")
    parts.append(f"{len(result.kept)} already present and verified")
    if result.failed:
        parts.append(f"{len(result.failed)} failed")
    print(f"{len(todo.files)} files: " + ", ".join(parts) + f" in {seconds:.1f} s")
    for line in result.failed:
        print(line, file=sys.stderr)
    if result.failed:
        raise CliError(f"{len(result.failed)} of {len(todo.files)} data files could not be fetched (see above)")
