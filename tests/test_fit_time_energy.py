"""Training time (fit alone) and energy per job, end to end through the real CLI."""

from __future__ import annotations

from pathlib import Path

from conftest import results_json, srtui


def test_fit_s_times_the_fit_alone_not_the_imports(workspace: Path, suite_file) -> None:
    suite = suite_file(name="fit-time", methods=("linear",), seeds=(1, 2))
    srtui("run", str(suite), "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for row in rows:
        # importing scikit-learn takes most of a second (more on a loaded machine) and is in
        # the wall time; LinearRegression on a small task takes milliseconds
        assert row["fit_s"] is not None and 0 < row["fit_s"] < 0.1, row["fit_s"]
        assert row["wall_s"] > row["fit_s"] * 5


def test_preload_defaults_to_the_top_level_modules_of_the_required_distributions() -> None:
    from engine.methods import registry
    from engine.methods.base import _top_level_modules

    assert _top_level_modules(("scikit-learn", "no-such-distribution-xyz")) == ["sklearn"]
    assert registry.load("linear").preload() == []  # every named module imports
