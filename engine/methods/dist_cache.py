"""Installed distributions' versions kept by the state of the import path, so a plan reads no metadata.

A built-in method's availability and its version (part of every job's id) are read with
``importlib.metadata``: importing it and searching every path entry cost a plan ~15 ms of CPU,
a quarter of a bare ``import typer, rich`` (issue 56). The driver keeps the answers in srtui's
private folder (``srtui.engine.kept``: this user's alone) under a key of what they depend on: this
interpreter, and in each ``sys.path`` entry the metadata folders ``importlib.metadata`` reads
(``*.dist-info``, ``*.egg-info``) with their time and inode (installing, upgrading or removing a
distribution adds, renames, writes anew or removes one) and the METADATA or PKG-INFO file in
each (a develop install writes it anew in place), or the entry itself when it is a file (an egg).
Jobs never read this table: a job looks its versions up itself.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from srtui.engine import kept

#: bump when what is kept changes: every older entry is then a miss
READER_VERSION = "1"
#: the folders of an entry importlib.metadata reads a distribution from
METADATA = (".dist-info", ".egg-info")
_TABLE: tuple[str, dict[str, str]] | None = None


def _key() -> str:
    digest = hashlib.sha256(f"srtui-dists {READER_VERSION}\0{sys.executable}\0{sys.version}\0".encode())
    metadata_stamp(digest)
    return digest.hexdigest()


def metadata_stamp(digest: Any, entries: list[str] | None = None) -> None:
    """Add every metadata folder of every import path entry (its path, time, inode, and its
    METADATA or PKG-INFO file's) to ``digest`` (a hashlib object), or the entry itself when it is
    a file. An entry without one adds nothing:
    the working folder on the path of ``python -m srtui`` makes no other key in every folder.
    ``entries``: those of another interpreter's path (default: this one's, ``sys.path``)."""
    for entry in sys.path if entries is None else entries:
        folder = os.path.abspath(entry or os.curdir)
        try:
            names = sorted(n for n in os.listdir(folder) if n.lower().endswith(METADATA))
        except NotADirectoryError:
            names = []
            kept.stamp(digest, [folder])
        except OSError:
            names = []
        found = [os.path.join(folder, name) for name in names]
        kept.stamp(digest, found)
        # and the file the version is read from: a develop install (setuptools' egg_info) writes
        # PKG-INFO anew in place, its folder's time unchanged
        inside = [os.path.join(f, "PKG-INFO" if f.lower().endswith(".egg-info") else "METADATA") for f in found]
        kept.stamp(digest, inside)


def _table() -> tuple[str, dict[str, str]]:
    global _TABLE
    if _TABLE is None:
        key = _key()
        found = kept.cached("dists", key)
        valid = isinstance(found, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())
        _TABLE = (key, found if valid else {})
    return _TABLE


def remember(dists: Sequence[str]) -> None:
    """The versions of ``dists`` (``dist==VERSION`` or ``dist (missing)``, as
    ``srtui.engine.methods.base`` writes them) put where ``Method.version`` and ``availability``
    read them first: from the kept table, each one missing there looked up and kept."""
    from srtui.engine.methods import base

    key, table = _table()
    missing = [d for d in dists if d not in table]
    for dist in missing:
        table[dist] = base.dist_version(dist)
    if missing:
        kept.keep("dists", key, table)
    for dist in dists:
        base.KNOWN_VERSIONS.setdefault(dist, table[dist])
