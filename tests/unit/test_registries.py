"""The registries drive the docs and the CLI's lists: every generated table in docs/ is what its
registry gives (the metrics' declarations, accuracy and expression, the scoring rules, the figure
kinds, the built-in methods, the task modules), `srtui rescore --list` and `srtui tasks list
--modules` print their registries, and every figure kind is declared completely."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from srtui import docs_tables
from srtui.results.outputs.figures import kinds

REPO = Path(__file__).resolve().parents[2]


def test_every_generated_docs_table_is_its_registry() -> None:
    assert docs_tables.stale(REPO / "docs") == [], "regenerate: python -m srtui.docs_tables --write"


def test_the_check_fails_on_a_table_that_differs(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for page in {page for page, _ in docs_tables._tables().values()}:  # every page holding a table
        (docs / page).write_text((REPO / "docs" / page).read_text(encoding="utf-8"), encoding="utf-8")
    figures = docs / "figures.md"
    figures.write_text(figures.read_text(encoding="utf-8").replace("| `cd` |", "| `cd-old` |"), encoding="utf-8")
    assert docs_tables.stale(docs) == ["docs/figures.md: figure-kinds"]
    docs_tables.write(docs)
    assert docs_tables.stale(docs) == []


def test_the_command_reports_no_difference() -> None:
    out = subprocess.run([sys.executable, "-m", "srtui.docs_tables"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    elsewhere = subprocess.run(
        [sys.executable, "-m", "srtui.docs_tables", "--docs", str(REPO / "docs")],
        capture_output=True,
        text=True,
    )
    assert elsewhere.returncode == 0, elsewhere.stderr


def test_the_cli_lists_are_the_registries() -> None:
    from srtui.results.metrics import accuracy, declare
    from srtui.tasks.catalogue import modules

    def run(*args: str) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "srtui", *args], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return [line.split("\t")[0] for line in out.stdout.splitlines()]

    listed = run("rescore", "--list")
    assert listed[: len(accuracy.metrics())] == [", ".join(m.stored()) for m in accuracy.metrics()]
    assert [line.split(" ")[0] for line in listed[len(accuracy.metrics()) :]] == [m.name for m in declare.metrics()]
    assert run("tasks", "list", "--modules") == list(modules())


@pytest.mark.parametrize("kind", list(kinds().values()), ids=list(kinds()))
def test_every_figure_kind_is_declared_completely(kind) -> None:
    assert kind.summary and kind.publication and kind.axes
    assert kind.rule == "(review)" or kind.rule in _rules()


def _rules() -> set[str]:
    from srtui.results.scoring import RULES

    return set(RULES)
