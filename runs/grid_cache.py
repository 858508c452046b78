"""Grids read by a job, kept by the method's fingerprint so the next plan reads no file twice.

A method file that builds ``hyper_params`` (SRBench 2021's ``gplearn.py``) is read by running it
in a job (``srtui.runs.grids``): seconds of imports, paid on every ``srtui run`` and ``--dry-run``
before this cache (issue 56). What a job reported is kept in srtui's private folder
(``srtui.engine.private``: this user's alone, so nobody else can plant a grid; a dry-run writes nothing
into the workspace) under a fingerprint of everything the job's answer depends on: the method's
code and its place (every ``.py`` file of a folder, or the 2021 file), the interpreter that ran it and its
environment (``Method.version()``), and this reader's version. Any change is a new key, and a
cached grid is checked again as the job's own answer is (``srtui.runs.grids.checked_grid``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import TYPE_CHECKING, Any

from srtui.engine import kept

if TYPE_CHECKING:
    from srtui.engine.methods.srbench_dir import SRBenchMethod

#: bump when what a grid-reading job reports changes: every older entry is then a miss
READER_VERSION = "1"
#: the largest file of a folder hashed, and the most files
MAX_FILE = 1 << 24
MAX_FILES = 2000


def fingerprint(method: SRBenchMethod, python: dict[str, str]) -> str:
    """The key of ``method``'s grid as run by ``python`` (its environment's interpreter, if any)."""
    # the file's place too: a 2021 file in an SRBench checkout imports from the checkout
    digest = hashlib.sha256(f"srtui-grid {READER_VERSION}\0{method.regressor_py}\0{method.version()}\0".encode())
    exe = python.get("python") or ""
    for part in (exe, python.get("python_path") or ""):
        digest.update(part.encode() + b"\0")
    with contextlib.suppress(OSError):  # an environment built again is another interpreter
        st = os.stat(exe) if exe else None
        digest.update(f"{st.st_mtime_ns if st else ''}\0".encode())
    files = [method.regressor_py] if method.single else sorted(method.path.rglob("*.py"))[:MAX_FILES]
    for file in files:
        digest.update(str(file.relative_to(method.path)).encode() + b"\0")
        with contextlib.suppress(OSError), file.open("rb") as fh:
            digest.update(hashlib.sha256(fh.read(MAX_FILE)).digest())
    return digest.hexdigest()


def cached(key: str) -> Any:
    """The grid kept under ``key`` (unchecked JSON), or None when there is none or it is unusable."""
    return kept.cached("grids", key)


def keep(key: str, grid: list[dict[str, Any]]) -> None:
    """Keep ``grid`` under ``key`` (``srtui.engine.kept``: a failure to write is no error of the run)."""
    kept.keep("grids", key, grid)
