"""PMLB's files as srtui reads them: each pinned to a PMLB commit, with PMLB's own sha256 and size.

The manifest ``tasks/data/pmlb_files.json`` is made from the Git LFS pointers of a PMLB mirror by
``python -m srtui.tasks.tools.pmlb_blackbox_manifest`` (it ships no data). A file is read, in order, from
``--data-dir`` / ``$SRTUI_DATA_DIR`` (srtui's layout ``pmlb/NAME.tsv.gz``, a PMLB checkout's
``datasets/NAME/NAME.tsv.gz`` or a ``pmlb.fetch_data(local_cache_dir=...)`` folder's
``NAME/NAME.tsv.gz``, read in place), the workspace cache, else downloaded from PMLB at its pinned
commit (or from ``$SRTUI_PMLB_MIRROR``, a URL serving a PMLB checkout's layout); every copy is
checked against the manifest's sha256.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from srtui.tasks.datafiles import RemoteFile

MANIFEST = Path(__file__).resolve().parent.parent / "data" / "pmlb_files.json"
#: PMLB's LFS objects at a commit (GitHub's media host, which serves LFS content by commit)
MEDIA = "https://media.githubusercontent.com/media/EpistasisLab/pmlb/{commit}/datasets/{name}/{name}.tsv.gz"
MIRROR_ENV = "SRTUI_PMLB_MIRROR"


@lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    entries: dict[str, Any] = json.loads(MANIFEST.read_text())  # a file of the package
    return entries


def info(name: str) -> dict[str, Any]:
    """The manifest's entry of one file: commit, sha256, size, rows, features."""
    return dict(manifest()["files"][name])


def remote(name: str, *extra_layouts: str) -> RemoteFile:
    """PMLB's ``NAME.tsv.gz`` at its pinned commit, with every layout it is read in place from."""
    entry = manifest()["files"].get(name)
    layouts = (f"datasets/{name}/{name}.tsv.gz", f"{name}/{name}.tsv.gz", *extra_layouts)
    if entry is None:  # not in the manifest: PMLB's master, checksum recorded on first use
        url = f"https://github.com/EpistasisLab/pmlb/raw/master/datasets/{name}/{name}.tsv.gz"
        return RemoteFile(f"pmlb/{name}.tsv.gz", url, alternatives=layouts, mirror=(MIRROR_ENV, layouts[0]))
    return RemoteFile(
        f"pmlb/{name}.tsv.gz",
        MEDIA.format(commit=entry["commit"], name=name),
        sha256=entry["sha256"],
        size=entry["size"],
        alternatives=layouts,
        mirror=(MIRROR_ENV, layouts[0]),
    )
