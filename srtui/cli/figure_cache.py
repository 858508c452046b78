"""`srtui plot`'s figures kept in the workspace's cache, reused while nothing they show changed.

Drawing a figure imports matplotlib, and pandas for most kinds (0.5-0.8 s of CPU before the first
line is drawn, #56); a second `srtui plot` of the same figure over the same runs, the usual case
while a paper is written, copies the kept file instead. The key is a digest of everything the file depends on:
the arguments (kind, format, width, dpi, suite, rule, options), the files they name (a style, a
trust table, a CSV of runs: path, time, size), the store (its database and write-ahead log: any
write changes one of them), srtui's code that reads and draws it, the installed files of
matplotlib, pandas, numpy and scipy, and matplotlib's settings files. A figure of a review or
beside the published results (whose inputs live elsewhere) is drawn every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

#: bump when what is kept changes: every older entry is then a miss
VERSION = "1"
#: srtui's code a figure depends on (every .py under these, relative to the source root)
CODE = ("results", "tasks", "reviews", "outputs.py", "cli/plot_cmd.py", "engine/textsafe.py")  # in the srtui package
LIBRARIES = ("matplotlib", "pandas", "numpy", "scipy", "scikit_posthocs")
#: the largest figure kept, and the largest notes file read back
MAX_FIGURE = 1 << 27
MAX_NOTES = 1 << 20


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


def _stamp(digest: hashlib._Hash, path: Path | str | None) -> None:
    digest.update(f"{path}\0".encode())
    with contextlib.suppress(OSError):
        if path is not None:
            st = os.stat(path)
            digest.update(f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}\0".encode())


def key(req: Request, db: Path) -> str:
    """The digest of what the figure ``req`` asks for over the store at ``db`` depends on."""
    from srtui.engine import kept, source

    args = [req.kind, req.out.suffix.lower(), req.suite, req.rule, sorted(req.options), req.width, req.dpi]
    digest = hashlib.sha256(f"srtui-figure {VERSION}\0{json.dumps(args)}\0".encode())
    for path in (req.from_csv, req.trust, req.style, db, Path(f"{db}-wal")):
        _stamp(digest, path)
    root = Path(source.package_folder())  # a room through its link, in a source tree or a wheel alike
    for part in CODE:
        files = sorted((root / part).rglob("*.py")) if (root / part).is_dir() else [root / part]
        for file in files:
            _stamp(digest, file)
    for library in LIBRARIES:
        kept.stamp(digest, kept.module_files(library))
    config = os.environ.get("MPLCONFIGDIR") or str(Path.home() / ".config" / "matplotlib")
    for rc in (Path(config) / "matplotlibrc", Path("matplotlibrc"), os.environ.get("MATPLOTLIBRC")):
        _stamp(digest, rc)
    return digest.hexdigest()


def _entry(cache: Path, digest: str, suffix: str) -> tuple[Path, Path]:
    folder = cache / "figures"
    return folder / f"{digest}{suffix.lower()}", folder / f"{digest}.notes.json"


def reuse(cache: Path, digest: str, out: Path) -> list[str] | None:
    """Write the figure kept under ``digest`` to ``out`` and return its notes; None when there is
    none (or it cannot be read). Read as any file of the workspace's cache is: through no link,
    regular files only, capped (``srtui.engine.untrusted``)."""
    from srtui.engine.errors import SrtuiError
    from srtui.engine.untrusted import read_file

    figure, notes_file = _entry(cache, digest, out.suffix)
    try:
        notes = json.loads(read_file(notes_file, MAX_NOTES))
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            return None
        data = read_file(figure, MAX_FIGURE)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except (OSError, ValueError, SrtuiError):
        return None
    return notes


def keep(cache: Path, digest: str, out: Path, notes: list[str]) -> None:
    """Keep the figure just written to ``out`` and its notes, each written whole, then renamed
    (the notes last: they mark the entry complete). A cache: a failure to write (a read-only
    workspace) is no error of the plot."""
    from srtui.engine.errors import SrtuiError
    from srtui.engine.untrusted import write_file

    figure, notes_file = _entry(cache, digest, out.suffix)
    with contextlib.suppress(OSError, SrtuiError):
        data = out.read_bytes()
        if len(data) <= MAX_FIGURE:
            write_file(figure, data, atomic=True)
            write_file(notes_file, json.dumps(notes).encode(), atomic=True)
