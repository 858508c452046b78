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
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from srtui.engine.untrusted import (
    UntrustedFileError,
    open_dir,
    open_partial,
    read_file_stat,
    rename_checked,
    write_file,
)
from srtui.tasks.entry import TaskContext, TaskError

if TYPE_CHECKING:
    import http.client

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


#: the most bytes a data file of unknown size may have (read, hashed or downloaded)
MAX_DATA_FILE = 1 << 32


def read_data(path: Path, size: int | None = None) -> bytes:
    """A data file's bytes through the one bounded reader (srtui.engine.untrusted.read_file): no link,
    no FIFO or device, its size checked before reading against ``size`` (the manifest's) or
    MAX_DATA_FILE (a 100 GB sparse file is refused at once); one line (TaskError) otherwise.
    Each file read is noted for the task cache (``sources``)."""
    try:
        data, st = read_file_stat(path, MAX_DATA_FILE if size is None else size)
    except UntrustedFileError as exc:
        raise TaskError(f"refusing {exc}") from None
    seen = _SOURCES.get()
    if seen is not None:
        seen.append(signature(path, st))
    return data


#: the data files read while a task is built (srtui.tasks.cache: a cached build is reused only while
#: every one of them is the very file it was built from)
_SOURCES: ContextVar[list[list[object]] | None] = ContextVar("srtui_task_sources", default=None)


def signature(path: Path, st: os.stat_result) -> list[object]:
    """Who a file is: a replaced or rewritten file (even put back as it was) has another."""
    return [str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


@contextmanager
def sources() -> Iterator[list[list[object]]]:
    """The signatures of the data files read inside the block (nested blocks count in the outer)."""
    outer = _SOURCES.get()
    seen: list[list[object]] = []
    token = _SOURCES.set(seen)
    try:
        yield seen
    finally:
        _SOURCES.reset(token)
        if outer is not None:
            outer.extend(seen)


def unchanged(recorded: list[list[object]]) -> bool:
    """Every file of ``recorded`` is still the one it was (``signature``)."""
    for sig in recorded:
        try:
            st = os.stat(str(sig[0]), follow_symlinks=False)
        except (OSError, ValueError, TypeError, IndexError):
            return False
        if signature(Path(str(sig[0])), st) != list(sig):
            return False
    return True


def sha256_file(path: Path, size: int | None = None) -> str:
    return hashlib.sha256(read_data(path, size)).hexdigest()


@dataclass(frozen=True)
class Verified:
    """A data file's bytes as they were hashed (parsed from these, never re-read from ``path``)."""

    path: Path
    data: bytes

    def stream(self) -> io.BytesIO:
        return io.BytesIO(self.data)

    def __str__(self) -> str:
        return str(self.path)


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
    try:  # name -> sha256, written on first download
        pinned = json.loads(read_data(path)[: 1 << 24])
    except ValueError:
        raise TaskError(f"{path} is not a JSON object of checksums: remove it (its files are checked anew)") from None
    if not isinstance(pinned, dict) or not all(isinstance(v, str) for v in pinned.values()):
        raise TaskError(f"{path} is not a JSON object of checksums: remove it (its files are checked anew)")
    return pinned


def cache_target(remote: RemoteFile, context: TaskContext) -> Path | None:
    """Where a download of ``remote`` goes: the workspace cache."""
    return Path(context.cache_dir) / "data" / remote.rel if context.cache_dir is not None else None


def _expected(remote: RemoteFile, context: TaskContext) -> tuple[str | None, str]:
    if remote.known_sha256 is not None:
        return remote.known_sha256, "sha256 shipped with srtui"
    return _tofu_read(context).get(remote.rel), "sha256 recorded on first download (trust on first use)"


def refusal(remote: RemoteFile, data: bytes, digest: str, expected: str, target: Path | None, what: str) -> str:
    """The one line that refuses a file whose sha256 is not the expected one."""
    lfs = data.startswith(LFS_MAGIC)
    found = "is a Git LFS pointer, not the data (git lfs pull)" if lfs else f"has sha256 {digest}"
    where = f"{target} or " if target is not None else ""
    return (
        f"refusing {what}: it {found}, expected sha256 {expected} for {remote.rel}; place the file from "
        f"{remote.url} at {where}{remote.rel} under --data-dir / SRTUI_DATA_DIR"
    )


LFS_MAGIC = b"version https://git-lfs"


def verify(remote: RemoteFile, path: Path, context: TaskContext) -> tuple[Verified, str, str]:
    """(the bytes, their sha256, how they were verified) of a local file, hashed as read; a
    mismatch is refused in one line, as is a file larger than the manifest says (before a byte
    of it is read)."""
    expected, how = _expected(remote, context)
    try:
        data = read_data(path, remote.size if expected is not None else None)
    except TaskError as exc:
        if expected is None:
            raise
        raise TaskError(f"{exc}; expected {remote.size} bytes with sha256 {expected} for {remote.rel}") from None
    digest = hashlib.sha256(data).hexdigest()
    if expected is None:
        return Verified(path, data), digest, "unverified local copy (no checksum known)"
    if digest != expected:
        raise TaskError(refusal(remote, data, digest, expected, cache_target(remote, context), str(path)))
    return Verified(path, data), digest, how


def find_local(remote: RemoteFile, context: TaskContext) -> Path | None:
    """The first local copy of ``remote`` (each data dir, each layout), not yet verified."""
    for base in data_dirs(context):
        for rel in remote.layouts:
            path = base / rel
            if path.is_file():
                return path
    return None


def locate(remote: RemoteFile, context: TaskContext, download: bool = True) -> tuple[Verified, dict[str, str]]:
    """A remote file's verified bytes (downloaded once if needed; parsed from these, never from
    the path again) and their provenance."""
    path = find_local(remote, context)
    if path is not None:
        found, digest, how = verify(remote, path, context)
        return found, {"url": remote.url, "file": remote.rel, "sha256": digest, "checksum": how}
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
    (HTTP Range). The ``.part`` is opened in a folder reached through no link, never through a
    link itself (srtui.engine.untrusted.open_partial); it is hashed from that descriptor, checked
    against the expected sha256 (or recorded, trust on first use) and renamed into place
    (``renameat``) only if it is still that file. A failed transfer keeps its ``.part``."""
    try:
        dir_fd = open_dir(target.parent, create=True)
    except (OSError, UntrustedFileError) as exc:
        raise TaskError(_missing_message(remote, target, f"cannot write {target.parent}: {exc}")) from None
    part = target.name + ".part"
    expected, digest = _expected(remote, context)[0], ""
    try:
        fd, have = open_partial(dir_fd, part)
        try:
            _fetch_into(remote, target, context, fd, have, on_bytes)
            digest = _sha256_fd(fd, remote.size if remote.size is not None else MAX_DATA_FILE)
            if expected is not None and digest != expected:
                head = os.pread(fd, len(LFS_MAGIC), 0)
                os.unlink(part, dir_fd=dir_fd)  # a wrong file cannot be resumed
                raise TaskError(
                    refusal(remote, head, digest, expected, target, f"the download from {remote.source_url()}")
                )
            rename_checked(dir_fd, part, target.name, fd)
        finally:
            os.close(fd)
    except (OSError, UntrustedFileError) as exc:
        raise TaskError(_missing_message(remote, target, f"download failed: {exc}")) from None
    finally:
        os.close(dir_fd)
    if expected is None:
        tofu = _tofu_read(context)
        tofu[remote.rel] = digest
        path = _tofu_path(context)
        assert path is not None
        write_file(path, json.dumps(tofu, indent=1, sort_keys=True).encode(), atomic=True)


def _fetch_into(
    remote: RemoteFile, target: Path, context: TaskContext, fd: int, have: int, on_bytes: Callable[[int], None] | None
) -> None:
    import http.client
    import urllib.error

    if on_bytes is not None and have:
        on_bytes(have)
    try:
        _transfer(remote, fd, have, on_bytes)
    except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise TaskError(_missing_message(remote, target, f"download failed: {reason}")) from None


def _sha256_fd(fd: int, cap: int) -> str:
    """The sha256 of what ``fd`` holds, read from its start (the descriptor written to)."""
    h, offset = hashlib.sha256(), 0
    while block := os.pread(fd, 1 << 20, offset):
        offset += len(block)
        if offset > cap:
            raise ValueError(f"more than the expected {cap} bytes")
        h.update(block)
    return h.hexdigest()


#: every transfer's overall deadline, and the least rate it may keep over any window
DOWNLOAD_DEADLINE_S = 1800.0
MIN_RATE = 4096  # bytes/s
RATE_WINDOW_S = 60.0


def _limits() -> tuple[float, float, float]:
    """(deadline s, minimum bytes/s, window s); SRTUI_DOWNLOAD_{DEADLINE_S,MIN_RATE,RATE_WINDOW_S} set them."""
    env = os.environ.get
    return (
        float(env("SRTUI_DOWNLOAD_DEADLINE_S") or DOWNLOAD_DEADLINE_S),
        float(env("SRTUI_DOWNLOAD_MIN_RATE") or MIN_RATE),
        float(env("SRTUI_DOWNLOAD_RATE_WINDOW_S") or RATE_WINDOW_S),
    )


def _transfer(remote: RemoteFile, fd: int, have: int, on_bytes: Callable[[int], None] | None) -> None:
    """Append the rest of the file to ``fd`` (from byte ``have``), at most its known size, within
    the overall deadline and never slower than the minimum rate over a window."""
    import urllib.error
    import urllib.request  # with http.client, ssl and email: 35 ms a plan that downloads nothing skips

    deadline_s, min_rate, window = _limits()
    cap = (remote.size if remote.size is not None else MAX_DATA_FILE) - have
    request = urllib.request.Request(remote.source_url(), headers={"Range": f"bytes={have}-"} if have else {})
    wait = max(0.5, min(60.0, window, deadline_s))
    try:
        resp = urllib.request.urlopen(request, timeout=wait)  # a fixed https URL or the mirror the user set
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left to send: the part is whole (the checksum says)
            return
        raise
    with resp:
        if have and resp.status != 206:  # the server ignored the range: start again
            os.ftruncate(fd, 0)
            cap += have
        pace = _Pace(deadline_s, min_rate, window)
        for block in _blocks(resp):
            cap -= len(block)
            if cap < 0:
                raise ValueError(f"the server sent more than the expected {remote.size or MAX_DATA_FILE} bytes")
            view = memoryview(block)
            while view:
                view = view[os.write(fd, view) :]
            if on_bytes is not None:
                on_bytes(len(block))
            pace.check(len(block))


class _Pace:
    """A transfer's clock: past the deadline, or under the minimum rate over a window, it fails."""

    def __init__(self, deadline_s: float, min_rate: float, window: float) -> None:
        self.start = self.mark = time.monotonic()
        self.deadline_s, self.min_rate, self.window = deadline_s, min_rate, window
        self.got = 0

    def check(self, n: int) -> None:
        now = time.monotonic()
        self.got += n
        if now - self.start > self.deadline_s:
            raise TimeoutError(f"not done within the {self.deadline_s:g} s a transfer may take")
        if now - self.mark >= self.window:
            rate = self.got / (now - self.mark)
            if rate < self.min_rate:
                span = now - self.mark
                raise TimeoutError(f"{rate:.0f} bytes/s over {span:.0f} s, under {self.min_rate:g} bytes/s")
            self.mark, self.got = now, 0


def _blocks(resp: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body in blocks as they arrive (``read1``: a trickle is seen byte by byte, so the
    transfer's clock runs); a connection cut short yields what came (kept for a resume), then fails."""
    import http.client

    while block := resp.read1(1 << 16):
        yield block
    if resp.length:  # bytes the server announced and never sent
        raise http.client.IncompleteRead(b"", resp.length)
