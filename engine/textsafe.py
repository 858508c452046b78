"""The one sanitiser for text that came from a method or a user (models, Pareto fronts, stderr,
errors, notes, method/suite/task names, CSV columns) on its way to a terminal, the app, the
clipboard or a spreadsheet.

* ``visible``: control characters (C0 except newline and tab, DEL, C1 including the 8-bit CSI
  ``\\x9b``, and ESC) are shown as text, ``\\x1b``, so no escape sequence from a method can set
  the clipboard, retitle or clear a terminal. The backslash form is what Python would print.
  So are Unicode's direction controls (U+061C, U+200E/F, U+202A-E, U+2066-9): a right-to-left
  override would make a terminal, page or cell show text in another order than it is.
* ``csv_cell``: a text cell a spreadsheet would run as a formula (it starts with ``=``, ``+``,
  ``@``, a tab, a carriage return, or ``-`` followed by anything but a digit) gets a leading
  apostrophe, OWASP's advice; text that is just a number (``-1.5``) stays as it is, and so does a
  number-led model (``-2.7e-07 + x0`` reads back in pandas and in srtui's parser). ``--raw`` on
  the exporting commands turns this off.
"""

from __future__ import annotations

import re
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")
_CONTROL_ONE_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: a leading ``-`` followed by a digit starts a number (``-2.7e-07 + x0``), not a formula
_NUMBER_LED = re.compile(r"-\d")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as ``\\xNN`` (newlines and tabs kept unless
    ``one_line``). Fast for clean text: one regex search."""
    text = text if isinstance(text, str) else str(text)
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_escape, text) if pattern.search(text) else text


def is_clean(text: str) -> bool:
    return _CONTROL.search(text) is None


def safe_value(value: Any) -> Any:
    """``visible`` applied through str values of lists and dicts (e.g. a parsed Pareto front)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: safe_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(safe_value(v) for v in value)
    return value


def encodable(value: Any) -> Any:
    """``value`` with every lone surrogate (which UTF-8 cannot store: a JSON ``"\\udc9b"`` from a
    method reads as one) shown as ``\\udc9b``, through lists and dicts."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(encodable(v) for v in value)
    return value


def safe_row(cursor: Any, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A sqlite3 row factory: every text column made visible (the app's read-only reads).
    A clean row (nearly all) is returned as it is, after one search per text value."""
    search = _CONTROL.search
    for value in row:
        if value.__class__ is str and search(value):
            return tuple(visible(v) if v.__class__ is str else v for v in row)
    return row


def csv_cell(value: Any, *, raw: bool = False) -> Any:
    """One CSV cell: text made visible and, unless ``raw``, kept from running as a formula.
    Numbers (and text that is just a number) pass through unchanged. Exact bytes: JSON output."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    if raw or not value.startswith(FORMULA_START) or _NUMBER_LED.match(value) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def csv_row(row: dict[str, Any], *, raw: bool = False) -> dict[str, Any]:
    return {csv_cell(k, raw=raw): csv_cell(v, raw=raw) for k, v in row.items()}


class SafeStream:
    """A text stream that shows control characters visibly before they reach ``stream``: the
    CLI's stdout and stderr, so no print path (typer's own errors included) can pass an escape
    sequence from a method or a user to the terminal. ``raw`` is the unwrapped stream, for
    srtui's own styled output (rich progress), whose untrusted parts are made visible first."""

    def __init__(self, stream: Any) -> None:
        self.raw = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # a text stream (click probes for binary ones this way)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.raw.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def isatty(self) -> bool:
        # styled output (typer's rich errors and help) would have its colour codes shown as
        # text: so it sees no terminal, and srtui's own styled output goes to ``raw``
        return False

    def __getattr__(self, name: str) -> Any:  # flush, fileno, encoding, buffer, ...
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    return getattr(stream, "raw", stream) if isinstance(stream, SafeStream) else stream
