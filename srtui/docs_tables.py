"""The docs tables generated from the declarations of every room (a module at the top of srtui,
so it reads them all: the run options of srtui.runs as well as the metrics of srtui.results). Each
table lives in a page between
``<!-- NAME -->`` and ``<!-- /NAME -->``. ``python -m srtui.docs_tables`` lists the
tables that differ from their registry (exit 1 when any does); ``--write`` rewrites them. Run
it at the checkout's root, or pass ``--docs DIR``.
tests/unit/test_registries.py fails while a page and its registry differ."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

#: marker -> (page, the function making its table)
Tables = dict[str, tuple[str, Callable[[], str]]]


def _tables() -> Tables:
    from srtui.results.metrics.accuracy import docs_table as accuracy_table
    from srtui.results.metrics.declare import docs_table as metrics_table
    from srtui.results.outputs.figures import docs_table as figures_table
    from srtui.runs.options import docs_table as options_table
    from srtui.tasks.catalogue import docs_table as tasks_table
    from srtui.tasks.suites import docs_table as suites_table

    return {
        "accuracy-metrics": ("scoring.md", accuracy_table),
        "declared-metrics": ("scoring.md", metrics_table),
        "scoring-rules": ("scoring.md", rules_table),
        "figure-kinds": ("figures.md", figures_table),
        "built-in-methods": ("methods.md", methods_table),
        "task-modules": ("suites-tasks.md", tasks_table),
        "built-in-suites": ("suites-tasks.md", suites_table),
        "run-options": ("running.md", options_table),
    }


def rules_table() -> str:
    """Every scoring rule (``@rule``, results/scoring/rules/ and stats): what `srtui score --list` shows."""
    from srtui.results.scoring import RULES

    rows = ["| rule | release | options (default) | what it scores |", "| --- | --- | --- | --- |"]
    for rule in RULES.values():
        options = ", ".join(f"`{k}` ({v[0]})" for k, v in rule.options.items()) or "-"
        rows.append(f"| `{rule.name}` | {rule.release or '-'} | {options} | {rule.summary.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def methods_table() -> str:
    """Every built-in method of srtui.engine.methods.registry (no probes): what `srtui methods list` shows."""
    from srtui.engine.methods import registry

    rows = ["| method | family | time limit | install | licence |", "| --- | --- | --- | --- | --- |"]
    for name in registry.names():
        m = registry.load(name)
        if m.environment is not None:
            install = f"own environment (`srtui methods install {name}`)"
        else:
            install = "optional (`srtui methods install`)" if name in registry.OPTIONAL else "with srtui"
        limit = "honours it" if m.honours_time_limit else "-"
        rows.append(f"| `{name}` | {m.family} | {limit} | {install} | {m.licence.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def _block(marker: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(marker)} -->\n)(.*?)(<!-- /{re.escape(marker)} -->)", re.S)


def stale(docs: Path, tables: Tables | None = None) -> list[str]:
    """The markers whose table in ``docs`` is not what its registry generates (``tables``: these
    instead of this module's; a room above results declares its own, e.g. srtui.runs.options)."""
    out = []
    for marker, (page, table) in (_tables() if tables is None else tables).items():
        found = _block(marker).search((docs / page).read_text(encoding="utf-8"))
        if found is None or found[2] != table():
            out.append(f"docs/{page}: {marker}")
    return out


def write(docs: Path, tables: Tables | None = None) -> None:
    for marker, (page, table) in (_tables() if tables is None else tables).items():
        path = docs / page
        text = path.read_text(encoding="utf-8")
        found = _block(marker).search(text)
        if found is not None:
            text = text[: found.start(2)] + table() + text[found.end(2) :]
        path.write_text(text, encoding="utf-8")


def main(argv: list[str], tables: Tables | None = None) -> int:
    # the docs of the checkout the command is run in (an installed srtui carries no docs/)
    docs = Path(argv[argv.index("--docs") + 1]) if "--docs" in argv[:-1] else Path("docs")
    if not (docs / "scoring.md").is_file():
        print(
            f"srtui: error: no docs/ here ({docs.resolve()}): run it in a checkout or pass --docs DIR", file=sys.stderr
        )
        return 2
    if "--write" in argv:
        write(docs, tables)
        return 0
    differ = stale(docs, tables)
    for line in differ:
        print(f"differs from its registry: {line}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
