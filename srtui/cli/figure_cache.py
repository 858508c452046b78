"""`srtui plot`'s figures kept in the workspace's cache, reused while nothing they show changed.

Drawing a figure imports matplotlib, and pandas for most kinds (0.5-0.8 s of CPU before the first
line is drawn, #56); a second `srtui plot` of the same figure over the same runs, the usual case
while a paper is written, copies the kept file instead. The key (``srtui.cli.output_cache``, shared with `srtui
score`) is a digest of everything the file depends on: the arguments (kind, format, width, dpi,
suite, rule, --allow-mixed, options in their order: a later one wins), the files they name (a style, a trust
table, a CSV of runs), the store, srtui's code, the installed files of matplotlib, pandas, numpy
and scipy, and every matplotlibrc matplotlib may read (``_settings_files``). The figure is kept
beside a tagged notes entry that holds its sha256: a figure file changed in the cache is a miss.
A figure of a review or beside the published results (whose inputs live elsewhere) is drawn
every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

#: bump when what is kept changes: every older entry is then a miss
VERSION = "2"
LIBRARIES = ("matplotlib", "pandas", "numpy", "scipy", "scikit_posthocs")
#: the largest figure kept
MAX_FIGURE = 1 << 27


@dataclass(frozen=True)
class Request:
    """A `srtui plot` call's arguments, as the key reads them."""

    kind: str
    out: Path
    suite: str | None
    from_csv: Path | None
    options: list[str]
    rule: str | None
    trust: Path | None
    width: float
    style: Path | None
    dpi: int
    allow_mixed: bool  # a figure of several protocols is drawn, footnoted, only when asked


def key(req: Request, db: Path) -> str:
    """The digest of what the figure ``req`` asks for over the store at ``db`` depends on."""
    from srtui.cli import output_cache

    args = [req.kind, req.out.suffix.lower(), req.suite, req.rule, req.options, req.width, req.dpi, req.allow_mixed]
    digest = output_cache.new_key(f"srtui-figure {VERSION}", args)
    output_cache.stamp(digest, req.from_csv, req.trust, req.style)
    output_cache.store(digest, db)
    from srtui.engine.code_stamp import code_and_libraries

    code_and_libraries(digest, LIBRARIES)
    output_cache.stamp(digest, *_settings_files())
    return digest.hexdigest()


def _settings_files() -> list[Path]:
    """Every matplotlibrc matplotlib may read (``matplotlib_fname``): the working folder's,
    ``$MATPLOTLIBRC`` (a file, or a folder holding one), and the one in its configuration folder
    (``$MPLCONFIGDIR``, else ``$XDG_CONFIG_HOME/matplotlib``, else ``~/.config/matplotlib``)."""
    files = [Path("matplotlibrc")]
    rc = os.environ.get("MATPLOTLIBRC")
    if rc:
        files += [Path(rc), Path(rc) / "matplotlibrc"]
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    for folder in (os.environ.get("MPLCONFIGDIR"), os.path.join(xdg, "matplotlib")):
        if folder:
            files.append(Path(folder) / "matplotlibrc")
    return files


def _entry(cache: Path, digest: str, suffix: str) -> tuple[Path, Path]:
    folder = cache / "figures"
    return folder / f"{digest}{suffix.lower()}", folder / f"{digest}.notes.json"


def reuse(cache: Path, digest: str, out: Path) -> list[str] | None:
    """Write the figure kept under ``digest`` to ``out`` and return its notes; None when there is
    none, or it cannot be read, or it is not the figure its tagged entry names
    (``srtui.cli.output_cache``; the figure read through no link, a regular file, capped)."""
    from srtui.cli import output_cache
    from srtui.engine.errors import SrtuiError
    from srtui.engine.untrusted import read_file

    figure, entry = _entry(cache, digest, out.suffix)
    body = output_cache.read(entry, digest)
    if not isinstance(body, dict) or not isinstance(body.get("sha256"), str):
        return None
    notes = body.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        return None
    try:
        data = read_file(figure, MAX_FIGURE)
        if hashlib.sha256(data).hexdigest() != body["sha256"]:
            return None
        output_cache.used(figure)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except (OSError, ValueError, SrtuiError):
        return None
    return notes


def keep(cache: Path, digest: str, out: Path, notes: list[str]) -> None:
    """Keep the figure just written to ``out`` and its tagged entry (notes and the figure's
    sha256), each written whole, then renamed (the entry last: it marks the figure complete). A
    cache: a failure to write (a read-only workspace) is no error of the plot."""
    from srtui.cli import output_cache
    from srtui.engine.errors import SrtuiError
    from srtui.engine.untrusted import write_file

    figure, entry = _entry(cache, digest, out.suffix)
    with contextlib.suppress(OSError, SrtuiError):
        data = out.read_bytes()
        if len(data) <= MAX_FIGURE:
            write_file(figure, data, atomic=True)
            output_cache.write(entry, digest, {"notes": notes, "sha256": hashlib.sha256(data).hexdigest()})
