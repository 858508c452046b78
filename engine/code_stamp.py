"""A digest of the code a kept answer or a kept server depends on: every file of srtui's code,
the installed files of some libraries, every distribution's metadata folder on the import path
and this interpreter (srtui.cli.output_cache's keys, srtui.engine.process.kept_servers' keys).
Apart from srtui.engine.kept, which the method modules read their kept answers through."""

from __future__ import annotations

import os
import sys
from typing import Any


def code_and_libraries(digest: Any, libraries: tuple[str, ...]) -> None:
    """Every file of srtui's code, the installed ``libraries``' files, every metadata folder of
    the import path, this interpreter."""
    from srtui.engine import source
    from srtui.engine.kept import module_files, stamp
    from srtui.engine.methods import dist_cache

    digest.update(f"{sys.executable}\0{sys.version}\0".encode())
    for folder in source.code_folders():  # each room once, through no link (the package links them)
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(root, d)))
            stamp(digest, [os.path.join(root, f) for f in sorted(files) if not f.endswith(".pyc")])
    for library in libraries:
        stamp(digest, module_files(library))
    dist_cache.metadata_stamp(digest)
