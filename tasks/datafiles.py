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
import json
import os
import sys
import urllib.error
import urllib.request
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
    sha256: str | None = None  # known by its owner (e.g. a Git LFS pointer), else data/checksums.json

    @property
    def known_sha256(self) -> str | None:
        return self.sha256 or shipped_checksums().get(self.rel)


@lru_cache(maxsize=1)
def shipped_checksums() -> dict[str, str]:
    return json.loads(_CHECKSUMS.read_text())


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
    return json.loads(path.read_text())


def _verify(remote: RemoteFile, path: Path, context: TaskContext) -> str:
    """Check a file against the shipped (or first-use) checksum; returns how it was verified."""
    digest = sha256_file(path)
    expected = remote.known_sha256
    how = "sha256 shipped with srtui"
    if expected is None:
        expected = _tofu_read(context).get(remote.rel)
        how = "sha256 recorded on first download (trust on first use)"
    if expected is None:
        return "unverified local copy (no checksum known)"
    if digest != expected:
        raise TaskError(f"checksum mismatch for {path} (expected sha256 {expected[:12]}..., got {digest[:12]}...)")
    return how


def locate(remote: RemoteFile, context: TaskContext, download: bool = True) -> tuple[Path, dict[str, str]]:
    """The local path of a remote file (downloading it once if needed) and its provenance."""
    for base in data_dirs(context):
        path = base / remote.rel
        if path.is_file():
            how = _verify(remote, path, context)
            return path, {"url": remote.url, "file": remote.rel, "sha256": sha256_file(path), "checksum": how}
    target = Path(context.cache_dir) / "data" / remote.rel if context.cache_dir is not None else None
    if not download or target is None or os.environ.get("SRTUI_OFFLINE"):
        raise TaskError(_missing_message(remote, target))
    fetch(remote, target, context)
    return locate(remote, context, download=False)


def _missing_message(remote: RemoteFile, target: Path | None, reason: str = "offline") -> str:
    where = f"place it at {target}" if target is not None else "place it under a data directory"
    return (
        f"data file {remote.rel} is missing and could not be downloaded ({reason}) from {remote.url}; "
        f"{where}, or point --data-dir / SRTUI_DATA_DIR at a folder holding {remote.rel}"
    )


def fetch(remote: RemoteFile, target: Path, context: TaskContext) -> None:
    """Download one file with a progress bar; written atomically, checksum checked or recorded."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(remote.url, timeout=60) as resp:  # fixed https URLs only
            total = int(resp.headers.get("Content-Length") or 0) or None
            with (
                Progress(
                    TextColumn(f"download {Path(remote.rel).name}"),
                    BarColumn(),
                    DownloadColumn(),
                    transient=True,
                    disable=not sys.stderr.isatty(),
                ) as progress,
                partial.open("wb") as out,
            ):
                bar = progress.add_task("dl", total=total)
                for block in iter(lambda: resp.read(1 << 16), b""):
                    out.write(block)
                    h.update(block)
                    progress.update(bar, advance=len(block))
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        partial.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or exc
        raise TaskError(_missing_message(remote, target, f"download failed: {reason}")) from None
    digest = h.hexdigest()
    expected = remote.known_sha256 or _tofu_read(context).get(remote.rel)
    if expected is not None and digest != expected:
        partial.unlink(missing_ok=True)
        raise TaskError(f"downloaded {remote.url} has sha256 {digest[:12]}..., expected {expected[:12]}...")
    partial.replace(target)
    if expected is None:
        tofu = _tofu_read(context)
        tofu[remote.rel] = digest
        path = _tofu_path(context)
        assert path is not None
        path.write_text(json.dumps(tofu, indent=1, sort_keys=True))
