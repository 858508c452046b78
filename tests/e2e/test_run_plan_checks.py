"""Issue #55: a dry run says what the run will do: a misspelt method parameter is refused before
any job (dry run or not), in one line naming the closest parameter (the real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import srtui


@pytest.mark.slow  # over 8 s on a quiet machine (several CLI runs): CI's slow step runs it
def test_a_misspelt_parameter_is_refused_by_the_dry_run(workspace: Path, tmp_path: Path) -> None:
    suite = tmp_path / "typo.toml"
    base = 'name = "typo"\ntasks = ["smoke-linear"]\nmethods = ["gplearn", "ridge"]\nseeds = [1]\n'
    suite.write_text(base + "[params.gplearn]\ngeneratons = 3\n")
    for extra in (("--dry-run",), ()):
        out = srtui("run", str(suite), *extra, "-w", str(workspace))
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "method 'gplearn' has no parameter 'generatons' ([params.gplearn]); did you mean 'generations'?" in (
            out.stderr
        )
    suite.write_text(base + "[params.ridge]\nalpha = 0.5\n")  # RidgeCV takes alphas
    out = srtui("run", str(suite), "--dry-run", "-w", str(workspace))
    assert out.returncode == 2 and "did you mean 'alphas'?" in out.stderr, out.stderr
    suite.write_text(
        base + "[params.gplearn]\ngenerations = 3\nlinear_scaling = false\n[params.ridge]\nalphas = [1.0]\n"
    )
    assert "suite typo: 2 jobs" in srtui("run", str(suite), "--dry-run", "-w", str(workspace), check=True).stdout
