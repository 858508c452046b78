"""The docs tables generated from the registries: each lives in a page between
``<!-- NAME -->`` and ``<!-- /NAME -->``. ``python -m results.outputs.docs_tables`` lists the
tables that differ from their registry (exit 1 when any does); ``--write`` rewrites them.
tests/unit/test_registries.py fails while a page and its registry differ."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path


def _tables() -> dict[str, tuple[str, Callable[[], str]]]:
    from results.metrics.declare import docs_table as metrics_table
    from results.outputs.figures import docs_table as figures_table

    return {
        "declared-metrics": ("scoring.md", metrics_table),
        "figure-kinds": ("figures.md", figures_table),
    }


def _block(marker: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(marker)} -->\n)(.*?)(<!-- /{re.escape(marker)} -->)", re.S)


def stale(docs: Path) -> list[str]:
    """The markers whose table in ``docs`` is not what its registry generates."""
    out = []
    for marker, (page, table) in _tables().items():
        found = _block(marker).search((docs / page).read_text(encoding="utf-8"))
        if found is None or found[2] != table():
            out.append(f"docs/{page}: {marker}")
    return out


def write(docs: Path) -> None:
    for marker, (page, table) in _tables().items():
        path = docs / page
        text = path.read_text(encoding="utf-8")
        found = _block(marker).search(text)
        if found is not None:
            text = text[: found.start(2)] + table() + text[found.end(2) :]
        path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    docs = Path(__file__).resolve().parents[2] / "docs"
    if "--write" in argv:
        write(docs)
        return 0
    differ = stale(docs)
    for line in differ:
        print(f"differs from its registry: {line}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
