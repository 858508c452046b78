"""Fetch the data files of tasks before a run: in parallel, resumable, every file checksummed.

``needed(names)`` lists the files a set of tasks reads (``TaskEntry.files``); ``plan`` sorts them
into present (a verified local copy: ``--data-dir``, ``$SRTUI_DATA_DIR``, the cache) and missing;
``fetch_files`` downloads the missing ones (HTTP Range resumes a ``.part`` an interrupted transfer
left) into the workspace cache, or writes all of them into ``--to DIR`` (the layout ``--data-dir``
reads, for a machine without internet), copying the local ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from srtui.tasks.catalogue import TaskContext, TaskError, entry
from srtui.tasks.datafiles import RemoteFile, Verified, cache_target, download, find_local, sha256_file, verify


@dataclass
class FetchPlan:
    present: list[tuple[RemoteFile, Path]] = field(default_factory=list)
    missing: list[RemoteFile] = field(default_factory=list)

    @property
    def files(self) -> list[RemoteFile]:
        return [f for f, _ in self.present] + self.missing


@dataclass
class FetchResult:
    fetched: list[RemoteFile] = field(default_factory=list)
    copied: list[RemoteFile] = field(default_factory=list)
    kept: list[RemoteFile] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # one line each
    bytes: int = 0


def needed(names: Iterable[str], context: TaskContext) -> list[RemoteFile]:
    """The data files the tasks read, each once (by its relative path)."""
    files: dict[str, RemoteFile] = {}
    for name in names:
        for remote in entry(name, context).files:
            files.setdefault(remote.rel, remote)
    return list(files.values())


def plan(files: Iterable[RemoteFile], context: TaskContext) -> FetchPlan:
    """Which files have a local copy (not yet verified: fetching verifies) and which do not."""
    out = FetchPlan()
    for remote in files:
        path = find_local(remote, context)
        if path is None:
            out.missing.append(remote)
        else:
            out.present.append((remote, path))
    return out


def fetch_files(
    todo: FetchPlan,
    context: TaskContext,
    to: Path | None = None,
    workers: int = 4,
    on_bytes: Callable[[int], None] | None = None,
    on_file: Callable[[RemoteFile], None] | None = None,
) -> FetchResult:
    """Download the missing files (into ``to`` or the cache) and, with ``to``, copy the present
    ones there; every file ends checked against its sha256. A file that fails is reported in one
    line and does not stop the others."""
    result = FetchResult()

    def one(remote: RemoteFile, local: Path | None) -> None:
        target = to / remote.rel if to is not None else cache_target(remote, context)
        try:
            if target is None:
                raise TaskError(f"no workspace cache to download {remote.rel} into (give --to DIR)")
            if local is not None:
                found, _, _ = verify(remote, local, context)  # a wrong local copy is refused, never copied
                _keep_or_copy(remote, found, None if to is None else target, result)
            else:
                download(remote, target, context, on_bytes)
                result.fetched.append(remote)
                result.bytes += target.stat().st_size
        except (TaskError, OSError) as exc:
            result.failed.append(str(exc))
        if on_file is not None:
            on_file(remote)

    jobs = [(remote, path) for remote, path in todo.present] + [(remote, None) for remote in todo.missing]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(lambda job: one(*job), jobs))
    return result


def _keep_or_copy(remote: RemoteFile, local: Verified, target: Path | None, result: FetchResult) -> None:
    """A verified local copy stays where it is, or its verified bytes are written to ``target``
    (``--to DIR``)."""
    if target is None or local.path.resolve() == target.resolve():
        result.kept.append(remote)
        return
    data = local.data
    if target.is_file() and sha256_file(target) == hashlib.sha256(data).hexdigest():
        result.kept.append(remote)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".copy")
    partial.unlink(missing_ok=True)
    with open(partial, "xb") as out:  # O_EXCL: never through a link put there
        out.write(data)  # the bytes verified, not the file read again
    partial.replace(target)
    result.copied.append(remote)


def missing_before_run(names: Iterable[str], context: TaskContext, command: str) -> str | None:
    """The one line a run says before any job when data files of its tasks are missing: how
    many, and ``command``, which fetches them; None when every file is here."""
    files = needed(names, context)
    missing = plan(files, context).missing
    if not missing:
        return None
    line = (
        f"{len(missing)} of the {len(files)} data files this run reads are missing (e.g. {missing[0].rel}); "
        f"fetch them first: {command} (or add --to DIR on a machine with internet, then run with --data-dir DIR)"
    )
    return line + _where_looked(missing[0], context)


def _where_looked(remote: RemoteFile, context: TaskContext) -> str:
    """For a --data-dir that lacks a file: the layouts srtui reads under it, and a copy of the file
    lying in the folder itself (a flat folder), which is not one of them."""
    if context.data_dir is None:
        return ""
    base = Path(context.data_dir)
    layouts = " or ".join(str(base / rel) for rel in remote.layouts)
    flat = base / Path(remote.rel).name
    found = f"; {flat} is there, but a flat folder is none of these layouts" if flat.is_file() else ""
    return f"; under --data-dir srtui reads {layouts}{found}"
