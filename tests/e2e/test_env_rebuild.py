"""An environment already built from its spec is not built again: another srtui's runs may be
using it, and `venv --clear` under them breaks their jobs (seen: CI's `srtui methods install
sgd-sklearn024` on a machine whose benchmark ran in that environment, 296 jobs failed while pip
rebuilt it). `--force` still rebuilds; a spec that changed rebuilds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import srtui

from srtui.engine.methods.env_specs import get

NAME = "sklearn-0.24.1"  # the environment of the built-in sgd-sklearn024


def _fake_built(root: Path, marker: str) -> Path:
    folder = root / NAME
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    (folder / ".srtui-ready").write_text(marker)
    environment = get(NAME).environment
    (folder / ".srtui-contract").write_text(environment.contract_fingerprint())  # its contract layer, in
    (folder / "in-use").write_text("a run's files")  # a rebuild (venv --clear) would remove it
    return folder


def test_an_environment_built_from_its_spec_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"SRTUI_ENVS": str(tmp_path)}
    monkeypatch.setenv("SRTUI_ENVS", str(tmp_path))  # this process's view of the same spec
    folder = _fake_built(tmp_path, get(NAME).environment.fingerprint())
    for args in (["env", "create", NAME], ["methods", "install", "sgd-sklearn024"]):
        proc = srtui(*args, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "already built from this spec" in proc.stdout and "$ " not in proc.stdout, proc.stdout
        assert (folder / "in-use").exists()
    forced = srtui("env", "create", NAME, "--force", "--dry-run", env=env)
    assert forced.returncode == 0 and "venv --clear" in forced.stdout, forced.stdout


def test_an_environment_of_another_spec_is_built_again(tmp_path: Path) -> None:
    _fake_built(tmp_path, "ok")  # the marker of an older srtui, or of other pins
    proc = srtui("env", "create", NAME, "--dry-run", env={"SRTUI_ENVS": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "venv --clear" in proc.stdout and "already built" not in proc.stdout, proc.stdout
