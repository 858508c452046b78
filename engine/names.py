"""The one rule for names a user or a file gives (suites, tasks, review sessions, experts), and
for file names made from them.

A name is 1 to 64 characters: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or
a digit, matched whole (``fullmatch``: no trailing newline slips through as it does past ``$``).
So a name never holds a control character, a path separator or a space, and is never ``..``.
"""

from __future__ import annotations

import re
from pathlib import Path

from srtui.engine.errors import SrtuiError

NAME_MAX = 64
NAME_RE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}")
RULE = f"1-{NAME_MAX} letters, digits, '.', '_' or '-', starting with a letter or digit"


class BadNameError(SrtuiError, ValueError):
    """A name that breaks the rule; one line, the name shown escaped and cut."""


def is_name(value: object) -> bool:
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None


def quoted(value: object, limit: int = 80) -> str:
    """``value`` as it may appear in a one-line error: repr (control characters escaped), cut."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quoted_text(text: str, limit: int = 200) -> str:
    """Text for a one-line error: at most ``limit`` characters, control characters escaped."""
    from srtui.engine.textsafe import visible

    text = visible(text, one_line=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_name(value: object, what: str, error: type[SrtuiError] = BadNameError) -> str:
    """``value`` if it is a name, else ``error`` saying what a name is."""
    if not is_name(value):
        raise error(f"{what} {quoted(value)} must be {RULE}")
    return value  # type: ignore[return-value]


def safe_file_name(name: str) -> str:
    """A file name made from a name: anything outside the rule's alphabet becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".") or "_"


def file_in(folder: Path, name: str) -> Path:
    """``folder/name`` for a file name made from a name (``safe_file_name``); the resolved path
    must stay inside ``folder``."""
    path = folder / safe_file_name(name)
    if path.resolve().parent != folder.resolve():
        raise BadNameError(f"file name {quoted(name)} leaves {folder}")
    return path
