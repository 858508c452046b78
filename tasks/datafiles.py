"""Real data files: find a local copy, or download once into the workspace cache, checksummed.

Every remote file has a *relative path* (the layout of the shared data folder, e.g.
``srbench2022/realworld/135_NY_value_cases_14_14_train.csv``) and a URL. Lookup order:
``--data-dir`` (``TaskContext.data_dir``), ``$SRTUI_DATA_DIR``, the workspace cache
(``<cache>/data/``). A file found nowhere is downloaded into the cache (the only network access
of the task layer). Checksums (sha256) of files we could see are shipped in ``data/checksums.json``;
for the others the first download's checksum is recorded (trust on first use) and checked after.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tasks.catalogue import TaskContext, TaskError

_CHECKSUMS = Path(__file__).parent / "data" / "checksums.json"
TOFU_FILE = "checksums-tofu.json"


@dataclass(frozen=True)
class RemoteFile:
    rel: str  # relative path under a data dir
    url: str
    #: the publisher's own checksum and size (PMLB's Git LFS pointer); else ``checksums.json``
    sha256: str | None = None
    size: int | None = None
    #: other relative paths read in place under a data dir (a PMLB checkout, a pmlb cache)
    alternatives: tuple[str, ...] = ()
    #: (environment variable, path under it): a mirror URL that replaces ``url`` when set
    mirror: tuple[str, str] | None = None

    @property
    def known_sha256(self) -> str | None:
        return self.sha256 or shipped_checksums().get(self.rel)

    @property
    def layouts(self) -> tuple[str, ...]:
        return (self.rel, *self.alternatives)

    def source_url(self) -> str:
        """Where a download reads from now: the mirror if its variable is set, else ``url``."""
        if self.mirror is not None and os.environ.get(self.mirror[0]):
            return os.environ[self.mirror[0]].rstrip("/") + "/" + self.mirror[1]
        return self.url


@lru_cache(maxsize=1)
def shipped_checksums() -> dict[str, str]:
    checksums: dict[str, str] = json.loads(_CHECKSUMS.read_text())  # a file of the package
    return checksums


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_dirs(context: TaskContext) -> list[Path]:
    dirs = []
    if context.data_dir is not None:
        dirs.append(Path(context.data_dir))
    env = os.environ.get("SRTUI_DATA_DIR")
    if env:
        dirs.append(Path(env))
    if context.cache_dir is not None:
        dirs.append(Path(context.cache_dir) / "data")
    return dirs


def _tofu_path(context: TaskContext) -> Path | None:
    return Path(context.cache_dir) / "data" / TOFU_FILE if context.cache_dir is not None else None


def _tofu_read(context: TaskContext) -> dict[str, str]:
    path = _tofu_path(context)
    if path is None or not path.is_file():
        return {}
    pinned: dict[str, str] = json.loads(path.read_text())  # name -> sha256, written on first download
    return pinned


def cache_target(remote: RemoteFile, context: TaskContext) -> Path | None:
    """Where a download of ``remote`` goes: the workspace cache."""
    return Path(context.cache_dir) / "data" / remote.rel if context.cache_dir is not None else None


def _expected(remote: RemoteFile, context: TaskContext) -> tuple[str | None, str]:
    if remote.known_sha256 is not None:
        return remote.known_sha256, "sha256 shipped with srtui"
    return _tofu_read(context).get(remote.rel), "sha256 recorded on first download (trust on first use)"


def refusal(remote: RemoteFile, path: Path, digest: str, expected: str, target: Path | None, what: str = "") -> str:
    """The one line that refuses a file whose sha256 is not the expected one."""
    with path.open("rb") as fh:
        lfs = fh.read(len(LFS_MAGIC)) == LFS_MAGIC
    found = "is a Git LFS pointer, not the data (git lfs pull)" if lfs else f"has sha256 {digest}"
    where = f"{target} or " if target is not None else ""
    return (
        f"refusing {what or path}: it {found}, expected sha256 {expected} for {remote.rel}; place the file from "
        f"{remote.url} at {where}{remote.rel} under --data-dir / SRTUI_DATA_DIR"
    )


LFS_MAGIC = b"version https://git-lfs"


def verify(remote: RemoteFile, path: Path, context: TaskContext) -> tuple[str, str]:
    """(sha256, how it was verified) of a local file; a mismatch is refused in one line."""
    digest = sha256_file(path)
    expected, how = _expected(remote, context)
    if expected is None:
        return digest, "unverified local copy (no checksum known)"
    if digest != expected:
        raise TaskError(refusal(remote, path, digest, expected, cache_target(remote, context)))
    return digest, how


def find_local(remote: RemoteFile, context: TaskContext) -> Path | None:
    """The first local copy of ``remote`` (each data dir, each layout), not yet verified."""
    for base in data_dirs(context):
        for rel in remote.layouts:
            path = base / rel
            if path.is_file():
                return path
    return None


def locate(remote: RemoteFile, context: TaskContext, download: bool = True) -> tuple[Path, dict[str, str]]:
    """The local path of a remote file (downloading it once if needed) and its provenance."""
    path = find_local(remote, context)
    if path is not None:
        digest, how = verify(remote, path, context)
        return path, {"url": remote.url, "file": remote.rel, "sha256": digest, "checksum": how}
    target = cache_target(remote, context)
    if not download or target is None or os.environ.get("SRTUI_OFFLINE"):
        raise TaskError(_missing_message(remote, target))
    fetch(remote, target, context)
    return locate(remote, context, download=False)


def _missing_message(remote: RemoteFile, target: Path | None, reason: str = "offline") -> str:
    where = f"place it at {target}" if target is not None else "place it under a data directory"
    return (
        f"data file {remote.rel} is missing and could not be downloaded ({reason}) from {remote.source_url()}; "
        f"{where}, or point --data-dir / SRTUI_DATA_DIR at a folder holding {remote.rel}"
    )


def fetch(remote: RemoteFile, target: Path, context: TaskContext) -> None:
    """Download one file with a progress bar (the task layer's only network access)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    with Progress(
        TextColumn(f"download {Path(remote.rel).name}"),
        BarColumn(),
        DownloadColumn(),
        transient=True,
        disable=not sys.stderr.isatty(),
    ) as progress:
        bar = progress.add_task("dl", total=remote.size)
        download(remote, target, context, lambda n: progress.update(bar, advance=n))


def download(
    remote: RemoteFile, target: Path, context: TaskContext, on_bytes: Callable[[int], None] | None = None
) -> None:
    """Download ``remote`` to ``target``, resuming a ``.part`` left by an interrupted transfer
    (HTTP Range); checked against the expected sha256 (or recorded, trust on first use) before it
    is renamed into place. A failed transfer keeps its ``.part`` for the next try."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    have = partial.stat().st_size if partial.is_file() else 0
    if on_bytes is not None and have:
        on_bytes(have)
    try:
        _transfer(remote, partial, have, on_bytes)
    except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise TaskError(_missing_message(remote, target, f"download failed: {reason}")) from None
    digest = sha256_file(partial)
    expected, _ = _expected(remote, context)
    if expected is not None and digest != expected:
        line = refusal(remote, partial, digest, expected, target, f"the download from {remote.source_url()}")
        partial.unlink(missing_ok=True)  # a wrong file cannot be resumed
        raise TaskError(line)
    partial.replace(target)
    if expected is None:
        tofu = _tofu_read(context)
        tofu[remote.rel] = digest
        path = _tofu_path(context)
        assert path is not None
        path.write_text(json.dumps(tofu, indent=1, sort_keys=True))


def _transfer(remote: RemoteFile, partial: Path, have: int, on_bytes: Callable[[int], None] | None) -> None:
    """Append the rest of the file to ``partial`` (from byte ``have``), at most its known size."""
    cap = (remote.size if remote.size is not None else MAX_DOWNLOAD) - have
    request = urllib.request.Request(remote.source_url(), headers={"Range": f"bytes={have}-"} if have else {})
    try:
        resp = urllib.request.urlopen(request, timeout=60)  # a fixed https URL or the mirror the user set
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left to send: the part is whole (the checksum says)
            return
        raise
    with resp, partial.open("ab" if have and resp.status == 206 else "wb") as out:
        if have and resp.status != 206:  # the server ignored the range: start again
            cap += have
        for block in _blocks(resp):
            cap -= len(block)
            if cap < 0:
                raise ValueError(f"the server sent more than the expected {remote.size or MAX_DOWNLOAD} bytes")
            out.write(block)
            if on_bytes is not None:
                on_bytes(len(block))


def _blocks(resp: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body in blocks; a connection cut short yields what came (kept for a resume), then fails."""
    while block := resp.read(1 << 16):
        yield block
    if resp.length:  # bytes the server announced and never sent
        raise http.client.IncompleteRead(b"", resp.length)


MAX_DOWNLOAD = 1 << 32  # a file of unknown size: 4 GiB at most
