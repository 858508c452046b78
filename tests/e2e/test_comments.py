"""Comments that state facts about the code are checked against it (they went stale before)."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "tasks", "results", "reviews", "runs", "srtui")


def test_the_suite_files_cpu_default_is_the_limits_one() -> None:
    import srtui.tasks.suites
    from srtui.engine.spec import Limits

    found = re.search(r"default ([\d.]+) x time_s \+ ([\d.]+)", srtui.tasks.suites.__doc__ or "")
    assert found, "tasks/suites.py documents the default CPU limit"
    factor, offset = float(found[1]), float(found[2])
    for time_s in (1.0, 60.0, 3600.0):
        assert Limits(time_s=time_s, mem_mb=100).effective_cpu_s == math.ceil(time_s * factor + offset)


def test_every_test_file_a_comment_cites_exists() -> None:
    missing = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")) if (REPO / package).is_dir() else []:
            for cited in re.findall(r"tests/((?:unit/|e2e/)?test_\w+\.py)", path.read_text(encoding="utf-8")):
                if not (REPO / "tests" / cited).is_file():
                    missing.append(f"{path.relative_to(REPO)} cites tests/{cited}")
    assert not missing, missing


def test_the_explorer_says_who_groups() -> None:
    """Grouping is numpy's over the column store, else a pandas group-by over the filtered rows
    (srtui.results.store.explore), never SQLite's."""
    import srtui.app.screens.results as screen
    import srtui.results.store.explore

    assert "SQLite does the filter, sort, grouping" not in (screen.__doc__ or "")
    assert "numpy" in (screen.__doc__ or "") and "column store" in (screen.__doc__ or "")
    assert "numpy" in (srtui.results.store.explore.__doc__ or "") and "pandas" in (
        srtui.results.store.explore.__doc__ or ""
    )


#: a dotted engine or results name (``srtui.engine.process.supervise.run_job``, ``srtui.results.store.queries``) or a
#: source path of any package
#: (``runs/tuning.py``) in code, a comment, a docstring or a page
_RESULTS_FIRST = (  # the rooms of results/ and the modules #47 moved into them (``results`` is also a variable)
    "store|metrics|scoring|outputs|views|schema|columns|colstore|queries|explore|explore_sql|filters|tuning|"
    "metrics_tasks|releases|solutions|expr_batch|expr_metrics|profiles|stats|tables|srbench_files|resources|"
    "published|export|figures|report"
)
_ENGINE_NAME = re.compile(
    rf"(?<![\w./-])(?:engine(?:\.[A-Za-z_]\w*)+|results\.(?:{_RESULTS_FIRST})(?!\w)(?:\.[A-Za-z_]\w*)*)"
)
_SOURCE_PATH = re.compile(rf"(?<![\w./-])(?:{'|'.join(PACKAGES)})(?:/[\w-]+)*/\w+\.py\b")


def _names_a_module(dotted: str) -> bool:
    """``dotted`` starts with an engine package path and then a module of it, or a name its
    ``__init__`` defines; what follows the module (a function, a class) is not looked up."""
    parts = dotted.split(".")
    folder, i = REPO / parts[0], 1
    while i < len(parts) and (folder / parts[i] / "__init__.py").is_file():
        folder, i = folder / parts[i], i + 1
    if i == len(parts) or parts[i].startswith("__") or (folder / f"{parts[i]}.py").is_file():
        return True
    return parts[i] in _defined_names(folder / "__init__.py")


def _defined_names(init: Path) -> set[str]:
    """The names a package's ``__init__`` binds or lists (definitions, imports, ``__all__`` and
    lazy-export strings), not the words of its docstring or comments."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and doc is not None and node is not doc.value
        ):
            names.update(re.findall(r"\w+", node.value))
    return names


def test_every_module_a_comment_or_page_names_exists() -> None:
    """Module names and source paths in the code, the tests and the pages follow every move (#35
    moved the engine's process code to engine/process/ and renamed four modules). Code blocks of
    CONTRIBUTING.md are examples of files to write, and NAME stands for any name: not checked."""
    texts = {p: p.read_text(encoding="utf-8") for pkg in (*PACKAGES, "tests") for p in (REPO / pkg).rglob("*.py")}
    for page in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md", REPO / "pyproject.toml"]:
        texts[page] = page.read_text(encoding="utf-8")
    contributing = REPO / "CONTRIBUTING.md"
    texts[contributing] = re.sub(r"```.*?```", "", contributing.read_text(encoding="utf-8"), flags=re.S)
    stale = []
    for path, text in texts.items():
        for name in _ENGINE_NAME.findall(text):
            if not name.endswith(".tmp") and not _names_a_module(name.rstrip(".")):  # engine.tmp: a file
                stale.append(f"{path.relative_to(REPO)}: {name}")
        for source in _SOURCE_PATH.findall(text):
            if "NAME" not in source and not (REPO / source).is_file():
                stale.append(f"{path.relative_to(REPO)}: {source}")
    assert not stale, stale
