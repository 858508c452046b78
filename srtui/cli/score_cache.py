"""`srtui score`'s answers kept in the workspace's cache, reused while nothing they show changed.

Scoring imports pandas (0.42 s of CPU, 7.5 times a bare ``import typer, rich``; issue 56), and the
rules stay written on pandas for fidelity with SRBench. A second `srtui score` of unchanged runs,
the usual case while a paper is written, prints the kept answer instead: the same bytes on stdout
(or in --out's files) and the same warnings on stderr, without importing pandas. The key
(``srtui.cli.output_cache``, shared with `srtui plot`'s figures) is a digest of the rule, the
format, --raw, the terminal size a figure (``--format plot``) is fitted to, Python's warning
filters, the options as given (in their order: a later one wins), --suite, --out's name (CSV
tables are written beside it under names made from it), the files --trust and --from-csv name,
the store, srtui's code, the installed pandas, numpy, scipy, scikit_posthocs and plotext,
every distribution's metadata and this interpreter. The key is taken before the runs are read,
and again after: an answer computed while the store changed is not kept.

Never kept, computed every time:
- ``--published``: its runs come from downloads in the workspace cache, ``--data-dir``, the shipped
  tables and the versions other environments pin, which the key does not follow;
- ``--review``: the ratings of a review session (as `srtui plot` draws those every time);
- ``--from-csv`` of a folder (SRBench's JSON results): files the key would have to list one by one;
- a call that warned of malformed stored values (``srtui.results.store.typed``: once a process);
- a call during which Python warned (a CSV column of mixed types, say): a kept answer would not
  show the warning again (``python_warnings``);
- ``--list``, and any call that fails.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: bump when what is kept changes: every older entry is then a miss
VERSION = "1"
LIBRARIES = ("pandas", "numpy", "scipy", "scikit_posthocs", "plotext")
#: where a document of the answer goes: stdout, --out, or a file beside --out (``BESIDE`` + name)
STDOUT, OUT, BESIDE = "stdout", "out", "beside:"


@dataclass(frozen=True)
class Request:
    """A `srtui score` call's arguments, as the key reads them."""

    rule: str
    suite: str | None
    from_csv: Path | None
    fmt: str
    out: Path | None
    options: list[str]
    trust: Path | None
    raw: bool
    allow_mixed: bool


@dataclass
class Kept:
    """A keepable call: its workspace's cache, its key, and the answer kept under it (or None)."""

    request: Request
    db: Path
    cache: Path
    key: str
    answer: dict[str, Any] | None


def keepable(req: Request, review: str | None, published: str | None) -> bool:
    """May this call's answer be kept (see the module's docstring)?"""
    return review is None and published is None and (req.from_csv is None or req.from_csv.is_file())


def key(req: Request, db: Path) -> str:
    """The digest of what the score ``req`` asks for over the store at ``db`` depends on."""
    from srtui.cli import output_cache

    out_name = req.out.name if req.out is not None and req.fmt == "csv" else None
    size = _drawn_size(req.fmt)
    # the warning filters (-W, PYTHONWARNINGS): an answer kept while they hid a warning is not
    # one for a call that would show it
    args = [req.rule, req.suite, req.fmt, req.raw, req.options, out_name, req.allow_mixed, size, sys.warnoptions]
    digest = output_cache.new_key(f"srtui-score {VERSION}", args)
    output_cache.stamp(digest, req.from_csv, req.trust)
    output_cache.store(digest, db)
    from srtui.engine.code_stamp import code_and_libraries

    code_and_libraries(digest, LIBRARIES)
    return digest.hexdigest()


def _drawn_size(fmt: str) -> list[int] | None:
    """The terminal size plotext fits a drawn figure into (COLUMNS, LINES or the terminal's own,
    as ``shutil.get_terminal_size`` reads them): a figure kept for a narrow terminal is not the
    one a wide terminal or a pipe gets (issue 56)."""
    import shutil

    return list(shutil.get_terminal_size()) if fmt == "plot" else None


def _entry(cache: Path, digest: str) -> Path:
    return cache / "scores" / f"{digest}.json"


def lookup(req: Request, workspace: Path | None) -> Kept | None:
    """The call's key and kept answer; None for a folder with no store (nothing is made there)."""
    from srtui.cli import output_cache
    from srtui.engine.workspace import resolve

    ws = resolve(workspace)
    if not ws.db_path.is_file():
        return None
    digest = key(req, ws.db_path)
    answer = output_cache.read(_entry(ws.cache, digest), digest)
    return Kept(req, ws.db_path, ws.cache, digest, answer if _answer_ok(answer) else None)


def _answer_ok(answer: Any) -> bool:
    if not isinstance(answer, dict):
        return False
    docs, errs = answer.get("docs"), answer.get("stderr")
    if not isinstance(docs, list) or not isinstance(errs, list) or not all(isinstance(e, str) for e in errs):
        return False
    return all(
        isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) and _known_target(d[0]) for d in docs
    )


def _known_target(target: str) -> bool:
    return target in (STDOUT, OUT) or (target.startswith(BESIDE) and len(target) > len(BESIDE))


def targets(docs: list[tuple[str, str]], out: Path | None) -> list[tuple[Path | None, str]]:
    """Each document with where this call puts it (None: stdout): the score in --out or on
    stdout (a table kept from a call with --out is the same text without it), the files beside
    --out in its folder (``srtui.engine.names.file_in``: BadNameError otherwise)."""
    from srtui.engine.names import file_in

    placed: list[tuple[Path | None, str]] = []
    for target, text in docs:
        if target in (STDOUT, OUT) or out is None:
            placed.append((out, text))
        else:
            placed.append((file_in(out.parent, target[len(BESIDE) :]), text))
    return placed


@contextlib.contextmanager
def python_warnings() -> Iterator[list[Any]]:
    """Python's warnings of what runs inside, collected, then shown as they would have been (on
    stderr, under the filters in force, after the work): the caller keeps no answer that had one."""
    import warnings

    shown: list[Any] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            shown = caught
            yield caught
    finally:  # a call that fails shows them too
        for w in shown:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def keep(kept: Kept, docs: list[tuple[str, str]], stderr: list[str]) -> None:
    """Keep the answer just computed, unless the store (or anything else in the key) changed
    while it was computed, or the store's reader warned of malformed values."""
    from srtui.cli import output_cache
    from srtui.results.store.typed import warned

    if warned() or key(kept.request, kept.db) != kept.key:
        return
    body = {"docs": [list(d) for d in docs], "stderr": stderr}
    output_cache.write(_entry(kept.cache, kept.key), kept.key, body)
