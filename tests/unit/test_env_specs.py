"""Every named environment's spec (engine/methods/env_specs.py, env_specs_2025.py) parses as pip
requirements, pins each package it installs, and names what its source pins and leaves unpinned:
each pin of the source is a pin of the spec, each package the source left unpinned is pinned."""

from __future__ import annotations

import re

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from srtui.engine.methods.env_specs import SPECS, get
from srtui.engine.methods.environments import MethodEnvironmentError

BUILD_TOOLS = {"wheel"}  # what scikit-learn 0.24.1's source build needs, at the version pip picks
#: SRBench 2.0's methods whose algorithms/NAME/ installs from PyPI alone (env_specs_2025.py)
SRBENCH_2025 = {"sklearn", "xgboost", "lightgbm", "gplearn", "operon"}


def _pins(name: str) -> dict[str, str]:
    """Package -> pinned version of every pip step of the spec and of its contract layer (flags such
    as --no-build-isolation skipped)."""
    pins: dict[str, str] = {}
    environment = SPECS[name].environment
    for step in [*environment.steps, list(environment.contract)]:
        for arg in step:
            if arg.startswith("-"):
                continue
            req = Requirement(arg)
            if req.name in BUILD_TOOLS:
                continue
            [spec] = list(req.specifier)
            assert spec.operator == "==", f"{name}: {arg} is not pinned"
            pins[canonicalize_name(req.name)] = spec.version
    return pins


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_spec_pins_what_its_source_pins_and_what_it_left_unpinned(name: str) -> None:
    spec = SPECS[name]
    assert spec.environment.name == name and spec.source
    pins = _pins(name)
    assert {"numpy", "psutil"} <= set(pins)  # what srtui's worker imports
    assert spec.pinned_in_source, f"{name}: names nothing its source pins"
    for text in spec.pinned_in_source:
        package, version = re.fullmatch(r"([\w.-]+)==?([\w.]+)", text).groups()  # type: ignore[union-attr]
        if package == "python":  # the environment's Python is srtui's own
            continue
        assert pins[canonicalize_name(package)] == version, (name, text)
    assert spec.unpinned, f"{name}: names nothing its source left unpinned"
    for text in spec.unpinned:
        package = canonicalize_name(text.split(" (")[0])
        if package == "python":
            continue
        pinned = {p for p in pins if p == package or p.startswith(package + "-")}  # xgboost -> xgboost-cpu
        assert pinned, f"{name}: {text} is not pinned here"


def test_srbench_2_0_s_pip_installable_methods_each_have_a_spec() -> None:
    assert {n.removeprefix("srbench2025-") for n in SPECS if n.startswith("srbench2025-")} == SRBENCH_2025
    for name in SRBENCH_2025:
        spec = get(f"srbench2025-{name}")
        assert f"algorithms/{name}/" in spec.source and "numpy==1.26.4" in spec.pinned_in_source
    with pytest.raises(MethodEnvironmentError, match="unknown environment 'srbench2025-pysr'"):
        get("srbench2025-pysr")  # Julia: not pip-installable
