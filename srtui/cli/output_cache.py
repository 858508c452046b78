"""What `srtui plot` and `srtui score` keep in the workspace's cache: the key of a call, and its
entries, each read back as any file of the cache is (untrusted).

A kept answer is reused only when its key, a digest of everything the answer depends on, is the
same: the call's arguments (the caller's), the files it names (path, times, size, inode), the store
(its database and write-ahead log, and the log's header: a log begun again keeps its size),
every file of srtui's code (``srtui.engine.source.code_folders``), the installed files of the
libraries that compute it and every distribution's metadata folder on the import path
(``srtui.engine.methods.dist_cache``: an upgrade, or srtui's own version, which the outputs
print), and this interpreter. Each folder of entries is bounded (``prune``): past 256 MB or
2,000 files, the least recently written or reused go. An entry is JSON carrying a tag only this
user can make (``srtui.engine.private.tag``) of its key and its content: an entry planted in the
workspace, copied from another one, cut short or edited is a miss, never an answer (issue 56).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

#: the largest entry read back
MAX_ENTRY = 1 << 27
#: what one folder of kept answers (scores, figures) holds at most: past either bound, the entries
#: least recently written or reused go first (a paper's worth of figures fits many times over)
FOLDER_CAP_BYTES = 256 << 20
FOLDER_CAP_FILES = 2000
#: the bytes of a write-ahead log's header: its salts change when the log is begun again
WAL_HEADER = 32


def stamp(digest: Any, *paths: Path | str | None) -> None:
    """Each path's name, time, size and inode (nothing more when it is None or not there), and
    its status change time: its owner can set a file's time back (``touch -d``, ``cp -p`` or
    ``rsync -t`` onto it), never that one (issue 56)."""
    from srtui.engine import kept

    for path in paths:
        if path is None:
            digest.update(b"None\0")
        else:
            kept.stamp(digest, [str(path)])
            with contextlib.suppress(OSError):
                digest.update(f"{os.stat(path).st_ctime_ns}\0".encode())


def store(digest: Any, db: Path) -> None:
    """The store at ``db``: its database and write-ahead log (any write changes one of them). A
    log that is not there and an empty one are the same store (the first reader after a driver
    makes the empty one): every page is in the database."""
    stamp(digest, db)
    wal = Path(f"{db}-wal")
    with contextlib.suppress(OSError):
        if os.stat(wal).st_size:
            stamp(digest, wal)
            with open(wal, "rb") as fh:
                digest.update(fh.read(WAL_HEADER))


def new_key(label: str, args: list[Any]) -> hashlib._Hash:
    """A digest begun with ``label`` and the call's ``args`` (JSON)."""
    return hashlib.sha256(f"{label}\0{json.dumps(args, default=str)}\0".encode())


def _tag_text(key: str, body: Any) -> str:
    return f"{key}\0{json.dumps(body, sort_keys=True)}"


def read(path: Path, key: str) -> Any:
    """The body kept at ``path`` under ``key`` (unchecked JSON: the caller checks its shape), or
    None: no entry, not a regular file, past the cap, not JSON, another key, or a tag this user
    did not make. Read through no link (``srtui.engine.untrusted``)."""
    from srtui.engine.errors import SrtuiError
    from srtui.engine.private import tagged
    from srtui.engine.untrusted import read_file

    try:
        entry = json.loads(read_file(path, MAX_ENTRY))
    except (OSError, ValueError, SrtuiError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("tag"), str):
        return None
    body = entry.get("body")
    if not tagged(_tag_text(key, body), entry["tag"]):
        return None
    used(path)
    return body


def used(path: Path) -> None:
    """Mark a kept file just reused as recent, so ``prune`` removes the unused ones first."""
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)


def write(path: Path, key: str, body: Any) -> None:
    """Keep ``body`` at ``path`` under ``key``, tagged, written whole then renamed. A cache: a
    failure to write (a read-only workspace, an unusable private folder) is no error of the call."""
    from srtui.engine.errors import SrtuiError
    from srtui.engine.private import tag
    from srtui.engine.untrusted import write_file

    with contextlib.suppress(OSError, ValueError, SrtuiError):
        data = json.dumps({"key": key, "body": body, "tag": tag(_tag_text(key, body))}).encode()
        if len(data) <= MAX_ENTRY:
            write_file(path, data, atomic=True)
            prune(path.parent)


def prune(folder: Path) -> int:
    """Remove the oldest files (by modification: written or reused) of ``folder`` past
    ``FOLDER_CAP_BYTES`` in all or ``FOLDER_CAP_FILES`` in number; how many went. A link is removed, never
    followed; a figure without its entry, or an entry without its figure, is a miss."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                found.append((st.st_mtime_ns, entry.path, st.st_size if stat.S_ISREG(st.st_mode) else 0))
    found.sort(reverse=True)  # the newest first: kept while they fit
    total, removed = 0, 0
    for i, (_, path, size) in enumerate(found):
        total += size
        if total > FOLDER_CAP_BYTES or i >= FOLDER_CAP_FILES:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed += 1
    return removed
