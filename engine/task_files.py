"""Task data as the driver wrote it, and each job's own copy of it.

A job runs with the user's rights next to the workspace: it can rewrite the shared
``cache/data/<fingerprint>.npz`` that other jobs and the driver read, unlink it, or put a FIFO, a
folder or a link in its place. File modes do not stop the same user, so the driver keeps the
bytes of every data file it wrote (or found and checked) in this run and trusts nothing else:

- before each job (``TaskFiles.checked``) the file on disk must be a regular file, reached through
  no link, with the same size and sha256; anything else is replaced by the true bytes;
- the job gets a copy of its own in its scratch dir (``JobPayload.data_bytes``), so a job of
  another slot changing the shared file meanwhile changes nothing it reads;
- the driver's own reads (the check of the model, the predictions' row numbers) use the true
  bytes, or a file whose sha256 they check.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from pathlib import Path

from srtui.engine.untrusted import UntrustedFileError, open_regular, write_file


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_checked(path: Path, size: int, sha256: str) -> bytes | None:
    """The bytes of ``path`` if it is a regular file reached through no link that holds exactly
    ``size`` bytes with this sha256; None for anything else (never waits on a FIFO, never reads
    more than ``size + 1`` bytes of a file a job made huge)."""
    try:
        with open_regular(path) as fh:
            data = fh.read(size + 1)
    except (OSError, UntrustedFileError):
        return None
    return data if len(data) == size and digest(data) == sha256 else None


class TaskFiles:
    """The true bytes of every task data file of this run, by path."""

    def __init__(self) -> None:
        self._true: dict[str, tuple[bytes, str]] = {}
        self._lock = threading.Lock()
        self.repaired = 0  # files found changed and written anew (for tests and the run's notes)

    def ensure(self, path: Path, data: bytes) -> None:
        """``path`` must hold ``data``: written (atomically, through no link) unless it does."""
        key, sha = os.path.abspath(path), digest(data)
        with self._lock:
            self._true[key] = (data, sha)
        if read_checked(path, len(data), sha) is None:
            write_file(path, data, atomic=True)

    def true_bytes(self, path: str | Path) -> tuple[bytes, str] | None:
        """(bytes, sha256) srtui wrote to ``path`` in this run, or None if it wrote nothing there."""
        with self._lock:
            return self._true.get(os.path.abspath(path))

    def checked(self, path: str | Path) -> bytes | None:
        """The true bytes of ``path``, after making the file on disk hold them again if a job
        changed it (rewritten, unlinked, a FIFO, folder or link in its place); None if unknown."""
        known = self.true_bytes(path)
        if known is None:
            return None
        data, sha = known
        if read_checked(Path(path), len(data), sha) is None:
            with contextlib.suppress(OSError, UntrustedFileError):
                write_file(Path(path), data, atomic=True)
                with self._lock:
                    self.repaired += 1
        return data


#: the driver's one record of the data files it wrote (one run per driver process)
TASK_FILES = TaskFiles()


def job_data(path: str) -> bytes:
    """The bytes a job on a remote worker gets for ``path``: the driver's, after the file is made
    true again; a file this driver did not write is read as an untrusted file (no FIFO, no link)."""
    true = TASK_FILES.checked(path)
    if true is not None:
        return true
    with open_regular(Path(path)) as fh:
        return fh.read()
