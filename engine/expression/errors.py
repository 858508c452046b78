"""The parser's one error type."""

from __future__ import annotations

from srtui.engine.errors import SrtuiError


class ExpressionError(SrtuiError, ValueError):
    """A model string the safe parser refuses; the message is one human-readable line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
