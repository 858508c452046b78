"""The one base of srtui's expected failures.

Bad input, missing data, a workspace, store or backend that cannot be used: each raises a
subclass of ``SrtuiError`` whose message is one line for the user. The CLI's entry point
(srtui.cli.main) prints any of them the same way and exits with ``exit_code``; nothing else
catches them to re-word them. engine is the bottom layer, so every package can import this.
"""

from __future__ import annotations

from collections.abc import Iterable


class SrtuiError(Exception):
    """An expected failure, told in one line; ``exit_code`` is the CLI's exit status for it."""

    exit_code: int = 2

    def one_line(self) -> str:
        """The message with every run of whitespace (newlines too) made one space."""
        return " ".join(str(self).split())


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the known name closest to a mistyped one, else ``""``
    (appended to an "unknown ..." message: `pyoperonn` -> `pyoperon`)."""
    import difflib

    if len(name) > 200:  # a pasted blob is no typo (and difflib's cost grows with its length)
        return ""
    choices = list(known)
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
