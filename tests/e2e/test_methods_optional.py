"""Optional methods: run when installed (`srtui methods install NAME`), skip with the reason when not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from srtui.engine.expression import parse_expression
from srtui.engine.methods import registry
from srtui.engine.spec import FitBudget

NAMES = ["a", "b", "c"]

#: registry name -> importable module of the package
MODULES = {"rils-rols": "rils_rols", "hroch": "HROCH", "feyn": "feyn", "bingo": "bingo", "itea": "itea"}


def test_every_optional_method_has_an_install_recipe_and_lazy_module():
    import subprocess
    import sys

    assert set(MODULES) == set(registry.OPTIONAL)
    for name in registry.OPTIONAL:
        method = registry.load(name)
        assert getattr(method, "install_steps", None) and method.install_hint.startswith(
            f"srtui methods install {name}"
        )
        ok, why = method.availability()
        assert ok or f"srtui methods install {name}" in why
    code = (
        f"import sys, srtui.engine.methods.optional; print([m for m in {list(MODULES.values())!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.optional
@pytest.mark.parametrize("name", sorted(MODULES))
def test_optional_method_fits_and_its_expression_is_its_model(name):
    if importlib.util.find_spec(MODULES[name]) is None:
        pytest.skip(f"{name} is not installed (srtui methods install {name})")
    method = registry.load(name)
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(100, 3))
    y = -1.5 * X[:, 0] + 2.5 * X[:, 2] + 1
    fitted = method.fit(X, y, NAMES, 1, FitBudget(4.0), dict(method.default_params))
    pred = np.asarray(fitted.predict(X), dtype=float).reshape(-1)
    assert 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2) > 0.9
    assert fitted.expression is not None
    expr = parse_expression(fitted.expression, NAMES, fitted.dialect).evaluate(X)
    assert 1 - np.sum((pred - expr) ** 2) / np.sum((pred - pred.mean()) ** 2) > 0.999


#: per method: params that bound its work (a fit of a second or two here, unloaded) and the one
#: configuration tried besides its defaults. The limits are generous for a loaded machine: the
#: work bound, not the clock, ends these fits (feyn has no time limit of its own and takes
#: seconds per epoch here: one epoch; bingo checks its clock only every 10 generations)
TUNED = {
    "rils-rols": ("max_fit_calls = 5000", "{ complexity_penalty = 0.01 }"),
    "hroch": ("iter_limit = 2000", '{ problem = "simple" }'),
    "feyn": ("n_epochs = 1", "{ max_complexity = 5 }"),
    "bingo": ("population_size = 50\ngenerations = 300", "{ stack_size = 12 }"),
    "itea": ("gens = 20\npopsize = 30", "{ max_terms = 2 }"),
}
TUNING_TIME_S, FINAL_TIME_S = 30, 40


@pytest.mark.optional
@pytest.mark.parametrize("name", sorted(TUNED))
def test_optional_method_tuned_under_srbench2025_with_energy(name: str, tmp_path: Path) -> None:
    """Through `srtui run --protocol srbench2025`: 2 configurations x 5 folds, then one final job
    whose configuration is the best mean CV score's, each ok with fit_s and energy (and its method)."""
    from conftest import srtui
    from test_protocols_runs import check_choices

    if importlib.util.find_spec(MODULES[name]) is None:
        pytest.skip(f"{name} is not installed (srtui methods install {name})")
    params, alternative = TUNED[name]
    suite = tmp_path / "opt.toml"
    suite.write_text(
        f'name = "opt"\ntasks = ["smoke-linear"]\nmethods = ["{name}"]\nseeds = [1]\n'
        f'[limits]\ntime_s = {FINAL_TIME_S}\n[params."{name}"]\n{params}\n'
        f'[tuning.grids]\n"{name}" = [{alternative}]\n[tuning.limits]\ntime_s = {TUNING_TIME_S}\n'
    )
    workspace = tmp_path / "ws"
    run = srtui(
        "run", str(suite), "--protocol", "srbench2025", "--jobs", "2", "--workspace", str(workspace), timeout=900
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = srtui("results", "--format", "json", "--tuning", "--workspace", str(workspace), check=True)
    rows = json.loads(out.stdout)
    finals = [r for r in rows if r["suite"] == "opt"]
    tuning = [r for r in rows if r["suite"] == "opt@tuning"]
    assert len(finals) == 1 and len(tuning) == 2 * 5, [(r["suite"], r["status"], r.get("error")) for r in rows]
    for row in finals + tuning:
        assert row["status"] == "ok", (row["suite"], row["params"], row["status"], row.get("error"))
        assert row["fit_s"] is not None and row["fit_s"] > 0
        assert row["energy_j"] > 0 and row["energy_method"] in ("rapl", "estimate")
    check_choices(finals, tuning, "srbench2025")
