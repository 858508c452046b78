"""Comments that state facts about the code are checked against it (they went stale before)."""

from __future__ import annotations

import math
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "tasks", "results", "reviews", "runs", "srtui")


def test_the_suite_files_cpu_default_is_the_limits_one() -> None:
    import tasks.suites
    from engine.spec import Limits

    found = re.search(r"default ([\d.]+) x time_s \+ ([\d.]+)", tasks.suites.__doc__ or "")
    assert found, "tasks/suites.py documents the default CPU limit"
    factor, offset = float(found[1]), float(found[2])
    for time_s in (1.0, 60.0, 3600.0):
        assert Limits(time_s=time_s, mem_mb=100).effective_cpu_s == math.ceil(time_s * factor + offset)


def test_every_test_file_a_comment_cites_exists() -> None:
    missing = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")) if (REPO / package).is_dir() else []:
            for cited in re.findall(r"tests/(test_\w+\.py)", path.read_text(encoding="utf-8")):
                if not (REPO / "tests" / cited).is_file():
                    missing.append(f"{path.relative_to(REPO)} cites tests/{cited}")
    assert not missing, missing


def test_the_explorer_says_who_groups() -> None:
    """Grouping is numpy's over the column store, else a pandas group-by over the filtered rows
    (results.explore), never SQLite's."""
    import results.explore
    import srtui.app.screens.results as screen

    assert "SQLite does the filter, sort, grouping" not in (screen.__doc__ or "")
    assert "numpy" in (screen.__doc__ or "") and "column store" in (screen.__doc__ or "")
    assert "numpy" in (results.explore.__doc__ or "") and "pandas" in (results.explore.__doc__ or "")
