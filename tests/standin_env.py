"""A stand-in for a built environment, for tests: a venv with packages of its own, made in seconds
without a registry (the route of ``tests/bench/bench_launch.py``'s stand-in).

The venv is one of this interpreter's base; its site-packages get the installed files of the named
distributions of this interpreter and of what they require (hard links where the disk allows, else
copies). A sealed job sees only the environment's trees, as with a real one: no path back into this
interpreter's site-packages (a .pth would be one the seal does not bind). Whatever is not named
(sympy, say) is not there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path


def link_environment(folder: Path, distributions: tuple[str, ...]) -> Path:
    """Make the venv at ``folder`` holding ``distributions`` and their requirements; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=300)
    site = next((folder / "lib").glob("python3*/site-packages"))
    for dist in requirement_closure(distributions):
        for file in dist.files or []:
            if file.parts[0] == "..":
                continue  # scripts outside site-packages
            src, dst = Path(str(dist.locate_file(file))), site / file
            if not src.is_file():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
    return folder / "bin" / "python"


def requirement_closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions ``names`` and everything they require (extras aside)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        found[key] = dist = metadata.distribution(name)
        for req in dist.requires or []:
            if "extra ==" not in req:
                todo.append(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])
    return list(found.values())
