"""Token-level dialect translation, on Python's own tokenizer (never regex on the raw text).

The output is a string of the same tokens joined by spaces, which ``ast.parse`` then reads.
Only operators are rewritten (``^`` -> ``**``, ``)(`` -> ``)*(``, ``|x|`` -> ``abs(x)``,
``sqrt.abs`` -> ``sqrtabs``); numbers, names and everything the parser will later reject pass
through unchanged, so a rewrite can never turn rejected input into accepted code.
"""

from __future__ import annotations

import io
import tokenize

from srtui.engine.expression.dialects import Dialect
from srtui.engine.expression.errors import ExpressionError

_SKIP = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}
#: tokens after which a ``|`` opens an absolute value (an operand cannot end here)
_OPENERS = {"(", ",", "+", "-", "*", "/", "**", "^", "abs("}


def _tokens(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _SKIP:
                continue
            if tok.type == tokenize.ERRORTOKEN:
                if tok.string.isspace():
                    continue
                raise ExpressionError(f"unexpected character {tok.string!r} in expression")
            out.append((tok.type, tok.string))
    except tokenize.TokenError as exc:
        raise ExpressionError(f"cannot tokenize expression: {exc.args[0]}") from None
    except (SyntaxError, IndentationError) as exc:
        raise ExpressionError(f"cannot tokenize expression: {exc.msg}") from None
    return out


def translate(text: str, dialect: Dialect) -> str:
    """Rewrite ``text`` from ``dialect`` to Python expression syntax."""
    # one logical line: methods may wrap long models; indentation is meaningless here
    flat = " ".join(text.split())
    toks = _tokens(flat)
    out: list[str] = []
    bars = 0  # open |...| absolute values (bingo)
    i = 0
    while i < len(toks):
        typ, s = toks[i]
        if dialect.caret_power and s == "^":
            s = "**"
        elif dialect.abs_bars and s == "|":
            prev = out[-1] if out else None
            if prev is None or prev in _OPENERS or bars == 0:
                out.append("abs(")
                bars += 1
            else:
                out.append(")")
                bars -= 1
            i += 1
            continue
        elif dialect.dotted_names and typ == tokenize.NAME and i + 2 < len(toks) and toks[i + 1][1] == ".":
            joined = dialect.dotted_names.get((s, toks[i + 2][1]))
            if joined is not None:
                s = joined
                i += 2
        if dialect.juxtaposed_products and s == "(" and out and out[-1] == ")":
            out.append("*")
        out.append(s)
        i += 1
    if bars:
        raise ExpressionError("unbalanced '|' (absolute value bars)")
    return " ".join(out)
