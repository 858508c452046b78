"""The explorer's filter language: ``method=linear,ffx status!=ok r2_test>0.9 task~feyn words``.

Parsed into conditions (:class:`Term`) that are SQL over the jobs table with bound values (a
column name is whitelisted, never taken from input); the column store (srtui.results.store.colstore)
evaluates the same conditions on its columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from srtui.engine.errors import SrtuiError
from srtui.results.store.columns import NUMBER_COLUMNS, TEXT_COLUMNS

_QUOTED = r'"(?:[^"\\]|\\.)*"'
_TOKEN = re.compile(
    rf"\s*(?:(?P<col>[a-z_0-9]+)(?P<op>!=|>=|<=|=|~|>|<)(?:(?P<quoted>{_QUOTED})(?=\s|$)|(?P<value>\S*))"
    rf"|(?P<qword>{_QUOTED})(?=\s|$)|(?P<word>\S+))"
)


class QueryError(SrtuiError, ValueError):
    """A filter the explorer cannot read; one line for the status bar."""


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def filter_token(column: str, value: Any) -> str:
    """The filter that matches exactly ``value`` in ``column``: quoted when it has a space, a
    comma or a quote; ``column=""`` for a missing value."""
    if value is None:
        return f'{column}=""'
    text = str(value)
    if text and not re.search(r'[\s,"\\]', text):
        return f"{column}={text}"
    return f'{column}="' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Term:
    """One condition of a filter: its SQL (bound values in ``args``) and what it tests."""

    sql: str
    args: tuple[Any, ...]
    #: the column, or None for a free word (suite, task or method)
    column: str | None
    op: str
    #: the values compared with (numbers for number columns); empty for ``col=""``
    values: tuple[Any, ...]
    #: the quoted empty value: ``col=""`` (missing) or ``col!=""``
    empty: bool = False


def parse_filter(filter_text: str) -> list[Term]:
    """``method=linear status!=ok r2_test>0.9 task~feyn free words`` -> conditions, ANDed.

    ``=``/``!=`` take comma-separated alternatives, or one double-quoted value (spaces and commas
    kept, ``\\"`` for a quote; ``""`` is a missing value); ``~`` is a substring match; a bare word
    matches suite, task or method as a substring. Unknown columns or non-numbers are refused.
    """
    terms: list[Term] = []
    for m in _TOKEN.finditer(filter_text):
        _check_size(terms)
        if m["col"] is None:
            word = m["word"] if m["word"] is not None else _unquote(m["qword"] or '""')
            like = f"%{word}%"
            terms.append(Term("(suite LIKE ? OR task LIKE ? OR method LIKE ?)", (like,) * 3, None, "~", (like,)))
            continue
        col, op = m["col"], m["op"]
        if col not in TEXT_COLUMNS and col not in NUMBER_COLUMNS:
            raise QueryError(f"unknown column {col!r} in filter (known: {', '.join(TEXT_COLUMNS + NUMBER_COLUMNS)})")
        quoted = m["quoted"] is not None
        value = _unquote(m["quoted"]) if quoted else m["value"]
        if op == "~":
            terms.append(Term(f"{col} LIKE ?", (f"%{value}%",), col, op, (f"%{value}%",)))
            continue
        if quoted and value == "" and op in ("=", "!="):
            terms.append(Term(f"{'NOT ' if op == '!=' else ''}({col} IS NULL OR {col} = '')", (), col, op, (), True))
            continue
        values: list[Any] = [value] if quoted else value.split(",")
        if col in NUMBER_COLUMNS:
            try:
                values = [float(v) for v in values]
            except ValueError:
                raise QueryError(f"{col} needs a number, got {value!r}") from None
        if op in ("=", "!="):
            sql = f"{col} {'NOT ' if op == '!=' else ''}IN ({','.join('?' * len(values))})"
            terms.append(Term(sql, tuple(values), col, op, tuple(values)))
        elif len(values) != 1 or col not in NUMBER_COLUMNS:
            raise QueryError(f"{op} needs one number: {m.group(0).strip()!r}")
        else:
            terms.append(Term(f"{col} {op} ?", (values[0],), col, op, (values[0],)))
    _check_size(terms)
    return terms


#: terms (AND-ed) and bound values of one filter: far above any typed filter, below SQLite's limits
#: (a deeper expression is "Expression tree is too large", more values "too many SQL variables")
MAX_FILTER_TERMS = 200
MAX_FILTER_VALUES = 2000


def _check_size(terms: list[Term]) -> None:
    if len(terms) > MAX_FILTER_TERMS or sum(len(t.args) for t in terms) > MAX_FILTER_VALUES:
        raise QueryError(f"a filter holds at most {MAX_FILTER_TERMS} terms and {MAX_FILTER_VALUES} values")


def joined(terms: list[Term]) -> tuple[str, list[Any]]:
    """`` WHERE a AND b`` and its bound values ("" when there is no condition)."""
    if not terms:
        return "", []
    return " WHERE " + " AND ".join(t.sql for t in terms), [a for t in terms for a in t.args]


def where_clause(filter_text: str) -> tuple[str, list[Any]]:
    """The filter as SQL over the jobs table (see :func:`parse_filter`) and its bound values."""
    return joined(parse_filter(filter_text))
