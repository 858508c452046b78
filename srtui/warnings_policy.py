"""Warnings that dependencies raise about themselves never reach srtui's user.

srtui promises one clear line per error. A dependency that warns about its own dependencies (asyncssh
importing cryptography's deprecated DSA printed ten lines before every SSH-cluster message, issue
59) breaks that promise with nothing the user can act on. Two layers, installed once when the CLI
or the app is imported:

- ``KNOWN``: each warning we have met, filtered by its category and the module it is raised from,
  ahead of any ``-W``/``PYTHONWARNINGS`` filter (so ``-W error::DeprecationWarning`` does not turn
  it into a traceback either). A test runs the commands' error paths with warnings turned on and
  fails on any dependency warning not listed here, so a new one is met in CI, not by a user.
- Any other warning raised from an installed package's file (site-packages, the standard library)
  goes to the ``srtui.warnings`` log (debug), not the terminal, so the one-line rule holds
  whatever versions the resolver picks.
  ``SRTUI_SHOW_WARNINGS=1`` shows them as Python would (for a developer).

srtui's own warnings are untouched by both.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

#: srtui and the rooms it links (a file is named by either path): a warning raised from one is srtui's own
OWN_PACKAGES = ("srtui", "engine", "tasks", "results", "runs", "reviews")
_ROOT = Path(__file__).resolve().parent.parent
_OWN_DIRS = tuple(str(_ROOT / name) + os.sep for name in OWN_PACKAGES)


@dataclass(frozen=True)
class KnownWarning:
    """One dependency warning srtui filters: its category (or a base class of it, so that the
    filter costs no import of the package that defines it), the modules it comes from, and why."""

    category: type[Warning]
    module: str  # a regular expression matched against the raising module's name
    why: str


KNOWN: tuple[KnownWarning, ...] = (
    KnownWarning(
        UserWarning,  # cryptography's CryptographyDeprecationWarning is a UserWarning
        r"asyncssh(\.|$)",
        "asyncssh 2.x imports cryptography's DSA classes, deprecated since cryptography 46 (Dask's SSH cluster)",
    ),
)

_installed = False


def install() -> None:
    """Filter ``KNOWN`` and route other dependencies' warnings to the log; idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    for known in reversed(KNOWN):  # filterwarnings inserts at the front: keep the table's order
        warnings.filterwarnings("ignore", category=known.category, module=known.module)
    if os.environ.get("SRTUI_SHOW_WARNINGS", "") not in ("", "0"):
        return
    shown = warnings.showwarning

    def showwarning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if is_own(filename):
            shown(message, category, filename, lineno, file, line)
        else:
            logging.getLogger("srtui.warnings").debug("%s:%s: %s: %s", filename, lineno, category.__name__, message)

    warnings.showwarning = showwarning


def is_own(filename: str) -> bool:
    """Whether a warning raised from ``filename`` is srtui's own (a test's or a script's counts too:
    only installed dependencies are kept off the terminal)."""
    path = os.path.abspath(filename)
    if path.startswith(_OWN_DIRS):
        return True
    return not any(path.startswith(p) for p in _library_dirs())


def _library_dirs() -> tuple[str, ...]:
    """Where installed packages live: site-packages and the standard library."""
    import sysconfig

    paths = sysconfig.get_paths()
    dirs = {paths.get(key, "") for key in ("purelib", "platlib", "stdlib", "platstdlib")}
    dirs |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs if d)


__all__ = ["KNOWN", "KnownWarning", "install", "is_own"]
