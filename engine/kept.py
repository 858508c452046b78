"""Answers kept between drivers in srtui's private folder, each under a key of what it depends on.

A plan asks some questions whose answers cost a child interpreter and seconds of imports, and
rarely change: the grid a method file builds (``srtui.runs.grid_cache``), an estimator's parameters
(``srtui.engine.methods.params_cache``), what this machine gives a sealed job (``srtui.engine.process.seal``).
Each is kept as JSON under ``private_dir(KIND)/KEY.json`` (``srtui.engine.private``: this user's
alone, so nobody else can plant an answer), KEY a digest of everything the answer depends on:
any change is another key, a miss, and the question is asked again (issue 56).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

#: the largest kept answer read back
MAX_ENTRY = 1 << 26


def _entry(kind: str, key: str) -> Path:
    from srtui.engine.private import private_dir

    return private_dir(kind) / f"{key}.json"


def cached(kind: str, key: str) -> Any:
    """The answer kept under ``key`` (unchecked JSON: the caller checks it), or None when there
    is none or it is unusable."""
    from srtui.engine.private import PrivateDirError, open_file

    try:
        fd = open_file(_entry(kind, key), os.O_RDONLY)
        with os.fdopen(fd, "rb") as fh:
            return json.loads(fh.read(MAX_ENTRY))
    except (OSError, ValueError, PrivateDirError):
        return None


def keep(kind: str, key: str, value: Any) -> None:
    """Keep ``value`` under ``key``: written whole under a name of its own, then renamed, so a
    reader never sees half of it. A cache: a failure to write is no error of the caller."""
    from srtui.engine.private import PrivateDirError, open_file

    fresh = None
    try:
        path = _entry(kind, key)
        fresh = path.with_name(f".{key}.{os.getpid()}.tmp")
        fd = open_file(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "w") as fh:
            json.dump(value, fh)
        os.replace(fresh, path)
    except (OSError, ValueError, PrivateDirError):
        if fresh is not None:
            with contextlib.suppress(OSError):
                fresh.unlink()


def module_files(module: str) -> list[str]:
    """The files of ``module``'s top-level package and of ``module`` itself, found on sys.path
    without importing either (PathFinder reads folders only)."""
    parts = module.split(".")
    spec = PathFinder.find_spec(parts[0])
    if spec is None:
        return []
    files = [spec.origin or ""]
    search = list(spec.submodule_search_locations or [])
    for part in parts[1:]:
        sub = PathFinder.find_spec(part, search) if search else None
        if sub is None:
            break
        files.append(sub.origin or "")
        search = list(sub.submodule_search_locations or [])
    return files


def stamp(digest: Any, files: list[str]) -> None:
    """Add each file's path, time, size and inode to ``digest`` (a hashlib object): an install,
    an upgrade or an edit writes them anew."""
    for file in files:
        digest.update(file.encode() + b"\0")
        with contextlib.suppress(OSError):
            st = os.stat(file)
            digest.update(f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}\0".encode())


def code_key(label: str, modules: list[str], *parts: str) -> str:
    """A key of ``label``, the installed files of ``modules`` and ``parts``."""
    digest = hashlib.sha256(f"{label}\0".encode())
    for module in modules:
        stamp(digest, module_files(module))
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()
