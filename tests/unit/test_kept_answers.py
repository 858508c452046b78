"""Answers a driver keeps for the next one (issue 56, srtui.engine.kept): an estimator's parameters, a
seal probe's answer and the ground truths' node counts are asked once, then read back under a key
of what they depend on; another key asks again. Each test keeps its answers in a private folder
of its own (``XDG_RUNTIME_DIR``), so it neither reads nor plants the machine's."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from srtui.engine import kept
from srtui.engine.methods import base, params_cache
from srtui.engine.process import seal


@pytest.fixture(autouse=True)
def own_private_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return runtime / "srtui"


def _plant(folder: Path, kind: str, value: object) -> None:
    """Rewrite the one answer kept under ``kind`` (as another driver of the same key would read it)."""
    [entry] = list((folder / kind).glob("*.json"))
    entry.write_text(json.dumps(value))


def test_an_estimator_s_parameters_are_read_once_then_kept(own_private_folder: Path) -> None:
    base.estimator_params.cache_clear()
    names = base.estimator_params("sklearn.linear_model:RidgeCV")  # read in a child process
    assert "alphas" in names and "fit_intercept" in names
    kept_names = params_cache.cached(params_cache.fingerprint("sklearn.linear_model:RidgeCV"))
    assert kept_names == list(names)
    _plant(own_private_folder, "params", ["alphas", "kept"])
    base.estimator_params.cache_clear()
    assert base.estimator_params("sklearn.linear_model:RidgeCV") == ("alphas", "kept")  # no child: the kept list
    # another class, another key: its own parameters, read again
    assert "max_iter" in base.estimator_params("sklearn.linear_model:LassoCV")
    base.estimator_params.cache_clear()


def test_a_library_file_written_anew_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lib" / "fakepkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("class Est:\n    def __init__(self, a=1): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    before = params_cache.fingerprint("fakepkg:Est")
    assert params_cache.fingerprint("fakepkg:Est") == before
    (package / "__init__.py").write_text("class Est:\n    def __init__(self, a=1, b=2): pass\n")
    os.utime(package / "__init__.py", ns=(1, 1))  # an upgrade: other bytes, another time
    assert params_cache.fingerprint("fakepkg:Est") != before


def test_a_sealed_probe_s_answer_is_kept_per_machine_state(
    own_private_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(seal.ISOLATION_ENV, raising=False)
    seal._FOUND.clear()
    found = seal.isolation()
    if found.mode != "namespaces":
        assert not (own_private_folder / "isolation").exists() or not list((own_private_folder / "isolation").iterdir())
        pytest.skip(f"no namespaces here ({found.line}): only a sealed answer is kept")
    _plant(own_private_folder, "isolation", ["namespaces", "kept answer"])
    seal._FOUND.clear()
    assert seal.isolation().summary == "kept answer"  # read back: no probe
    monkeypatch.setenv(seal.ISOLATION_ENV, "fallback")  # another key: probed (and a fallback is not kept)
    assert seal.isolation().mode == "fallback"
    assert len(list((own_private_folder / "isolation").glob("*.json"))) == 1
    seal._FOUND.clear()


def test_ground_truth_sizes_are_counted_once_then_kept(own_private_folder: Path) -> None:
    from srtui.results.scoring.tables import _truth_sizes

    infos: dict[str, dict[str, Any]] = {
        "t1": {"ground_truth": "x0*x1 + 2", "features": ["x0", "x1"]},
        "t2": {"ground_truth": "", "features": ["x0"]},
        "t3": {"ground_truth": "sin(", "features": ["x0"]},  # unparsable: no size
        "t4": {"features": ["x0"]},  # a task without one
    }
    sizes = _truth_sizes(infos)
    assert sizes["t1"] == 5.0 and math.isnan(sizes["t3"]) and not {"t2", "t4"} & set(sizes)
    _plant(own_private_folder, "truth-sizes", {"t1": 99, "t3": None})
    again = _truth_sizes(infos)
    assert again["t1"] == 99.0 and math.isnan(again["t3"])  # read back, sympy not asked
    other = _truth_sizes({**infos, "t1": {"ground_truth": "x0 + x1", "features": ["x0", "x1"]}})
    assert other["t1"] == 3.0  # another truth: counted again
    assert kept.cached("nothing-here", "0" * 64) is None


def test_a_version_written_anew_in_place_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A develop install (setuptools' egg_info) writes PKG-INFO anew in place, the folder's time
    unchanged: the kept versions (srtui.engine.methods.dist_cache) are of the new one (issue 56)."""
    from srtui.engine.methods import dist_cache

    info = tmp_path / "src" / "srtui_probe_dist.egg-info"
    info.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))

    def version_now(text: str) -> str:
        (info / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: srtui-probe-dist\nVersion: {text}\n")
        monkeypatch.setattr(dist_cache, "_TABLE", None)  # another driver
        base.KNOWN_VERSIONS.pop("srtui-probe-dist", None)
        dist_cache.remember(["srtui-probe-dist"])
        return base.KNOWN_VERSIONS.pop("srtui-probe-dist")

    assert version_now("1.0") == "srtui-probe-dist==1.0"
    folder_time = os.stat(info).st_mtime_ns
    assert version_now("1.0") == "srtui-probe-dist==1.0"  # kept
    assert version_now("2.0") == "srtui-probe-dist==2.0"
    assert os.stat(info).st_mtime_ns == folder_time
