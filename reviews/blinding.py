"""The blinding check: does any method's handwriting survive in the models an expert sees?

Each shown model (its one-line form) is cut into tokens: operators and function names,
variable names (a task's own feature is the token ``feature``; any other name is its shape, such
as ``X<n>``), and numbers as their format (``3 significant digits``; ``integer``). A token that
occurs in the models of some methods and never in another's is a *tell*. It is **handwriting**
when the neutral rendering never writes it for anyone (``pdiv``, ``^``, ``X<n>``, a number with
2 significant digits): the same mathematics could have been shown without it, so the rendering
failed. It is **content** when it is part of the one vocabulary (``/``, ``log``, ``max``): the
model computes it, and no rendering can hide it; the organiser is told, all the same.

:func:`tells` is run by ``srtui review create`` over the session's real items (a warning per
tell, naming the token and how many methods show it, never which) and by the tests over the
models of every built-in method.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from srtui.engine.expression.neutral import FUNCTIONS, SIGNIFICANT
from srtui.reviews.storage import FrozenItem

#: operator symbols of the neutral one-line form (sympy's str printer)
OPERATORS = frozenset({"+", "-", "*", "/", "**", "(", ")", ","})
#: content tokens too common to be worth a note (every sum or product of terms has them)
_PLAIN = frozenset({"(", ")", ",", "+", "-", "*", "feature", "integer", f"{SIGNIFICANT} significant digits"})
_TOKEN = re.compile(
    r"(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_]\w*)(?P<call>\s*\()?"
    r"|(?P<op>\*\*|[^\s\w])"
)


def _significant(literal: str) -> int:
    mantissa = re.split(r"[eE]", literal)[0].lstrip("0").replace(".", "")
    return len(mantissa.lstrip("0")) or 1


def number_format(literal: str) -> str:
    """The format of one number as written: ``integer`` or ``N significant digits`` (and the
    exponent's spelling when it is not the neutral one: ``1.36e-11``, ``4.57e6``)."""
    if re.fullmatch(r"\d+", literal):
        return "integer"
    sig = _significant(literal)
    words = f"{sig} significant digit{'s' if sig != 1 else ''}"
    m = re.search(r"([eE])([-+]?)(\d+)", literal)
    if m and (m.group(1) == "E" or m.group(2) == "+" or m.group(3).startswith("0")):
        words += ", exponent written E, e+ or e-0"
    return words


def tokens(plain: str, features: Iterable[str]) -> set[tuple[str, str]]:
    """(kind, token) pairs of one shown model: kind is operator, function, variable or number."""
    feats = set(features)
    out: set[tuple[str, str]] = set()
    for m in _TOKEN.finditer(plain):
        if m.group("number"):
            out.add(("number", number_format(m.group("number"))))
        elif m.group("name"):
            name = m.group("name")
            if m.group("call"):
                out.add(("function", name))
                out.add(("operator", "("))
            elif name in feats:
                out.add(("variable", "feature"))
            else:
                out.add(("variable", re.sub(r"\d+", "<n>", name)))
        else:
            out.add(("operator", m.group("op")))
    return out


def neutral(kind: str, token: str) -> bool:
    """Is this a token the neutral rendering writes for every method's models alike?"""
    if kind == "number":
        return token in ("integer", f"{SIGNIFICANT} significant digits")
    if kind == "variable":
        return token == "feature"
    if kind == "function":
        return token in FUNCTIONS
    return token in OPERATORS


@dataclass(frozen=True)
class Tell:
    kind: str
    token: str
    methods_with: tuple[str, ...]
    methods_without: tuple[str, ...]

    @property
    def handwriting(self) -> bool:
        return not neutral(self.kind, self.token)

    @property
    def share(self) -> str:
        return f"{len(self.methods_with)} of {len(self.methods_with) + len(self.methods_without)} methods"


def warnings(found: Sequence[Tell]) -> list[str]:
    """Lines for the organiser, naming each token and how many methods show it, never which:
    one per handwriting tell, and one listing the content tells."""
    lines = [
        f"warning: blinding: {t.kind} {t.token!r} is in the models of {t.share} only: "
        "a method's own way of writing that an expert may recognise"
        for t in found
        if t.handwriting
    ]
    content = [f"{t.token!r} ({t.share})" for t in found if not t.handwriting and t.token not in _PLAIN]
    if content:
        lines.append(
            "note: blinding: some models compute what others do not (shown as computed, an expert may "
            f"still guess the method): {', '.join(content)}"
        )
    return lines


def item_tells(items: Iterable[FrozenItem]) -> list[Tell]:
    """:func:`tells` over a session's frozen items (what the experts will see)."""
    shown: dict[str, list[tuple[str, Sequence[str]]]] = {}
    for item in items:
        c = item.content
        text = "" if c.get("black_box") else str(c.get("plain") or "")
        shown.setdefault(item.method, []).append((text, tuple(c.get("features") or ())))
    return tells(shown)


def tells(renderings: Mapping[str, Sequence[tuple[str, Sequence[str]]]]) -> list[Tell]:
    """Tokens in some methods' shown models and never in another's. ``renderings``: method ->
    [(one-line model, the task's feature names)]; black boxes (empty text) show no tokens."""
    seen = {
        method: set().union(*(tokens(text, feats) for text, feats in shown if text)) if shown else set()
        for method, shown in renderings.items()
    }
    seen = {m: s for m, s in seen.items() if s}  # a method with black boxes only writes nothing
    every = set().union(*seen.values()) if seen else set()
    out = []
    for kind, token in sorted(every):
        with_ = tuple(sorted(m for m, s in seen.items() if (kind, token) in s))
        if len(with_) < len(seen):
            out.append(Tell(kind, token, with_, tuple(sorted(set(seen) - set(with_)))))
    return sorted(out, key=lambda t: (not t.handwriting, t.kind, t.token))


__all__ = ["Tell", "item_tells", "neutral", "number_format", "tells", "tokens", "warnings"]
