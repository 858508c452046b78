"""Where srtui's own code is imported from, so every process srtui starts imports the same code.

srtui is one import package. In a source tree, ``srtui/`` holds links to the rooms beside it
(``engine/``, ``tasks/``, ``results/``, ``runs/``, ``reviews/``, the product card's layout); in a
wheel they are plain folders inside ``srtui/``. A worker gets :func:`import_root` on its
``PYTHONPATH`` and a sealed job sees :func:`code_folders` (and nothing else of the tree: no tests,
no workspace that happens to sit in the checkout).
"""

from __future__ import annotations

import os

import srtui

#: srtui's rooms, each a subpackage ``srtui.<room>``
ROOMS = ("engine", "tasks", "results", "runs", "reviews")


def package_folder() -> str:
    """The real folder of the ``srtui`` package (through an environment's link to it)."""
    return os.path.dirname(os.path.realpath(srtui.__file__))


def import_root() -> str:
    """The ``sys.path`` entry that holds the ``srtui`` package."""
    return os.path.dirname(package_folder())


def code_folders() -> list[str]:
    """The real folders srtui's code is read from: the package and each room it links to."""
    package = package_folder()
    return sorted({package, *(os.path.realpath(os.path.join(package, room)) for room in ROOMS)})
