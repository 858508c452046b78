"""Issue 58: a built environment installs offline elsewhere from a wheelhouse.

`srtui env create sklearn-0.24.1` compiled scikit-learn 0.24.1 from its source (37:40 under load)
and needed the registry on every machine. With ``--wheelhouse DIR`` the first build writes every
wheel it installs into DIR (a source build happens once); a later build from a DIR that holds the
spec's wheels installs with ``--no-index``: no registry, seconds. ``srtui env export NAME DIR``
fills a wheelhouse from an environment built without one.

The environment here is a small stand-in (one pure-Python package), built by real pip steps; the
offline build runs with every pip index pointed at a closed port, so it cannot reach a registry.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import srtui

from srtui.engine.methods.env_specs import get
from srtui.engine.methods.environments import WHEELHOUSE_MARKER, Environment

STAND_IN = Environment("wheelhouse-stand-in", (("six==1.17.0",),), "import six\nassert six.__version__ == '1.17.0'")
CLOSED = "http://127.0.0.1:9/simple"  # the discard port: nothing answers there


def _pip(step: list[str]) -> str | None:
    """The pip command a step runs (``install``, ``wheel``), None for another step."""
    return step[step.index("pip") + 1] if "pip" in step[:5] else None


def _build(env: Environment, wheelhouse: Path, extra_env: dict[str, str] | None = None) -> list[list[str]]:
    steps = env.install_steps(wheelhouse)
    for step in steps:
        done = subprocess.run(
            step, capture_output=True, text=True, timeout=600, env={**os.environ, **(extra_env or {})}
        )
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-2000:])
    return steps


@pytest.mark.slow  # two venvs with pip: over 8 s on a quiet machine
def test_a_wheelhouse_build_then_an_offline_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("SRTUI_ENVS", str(tmp_path / "first"))
    first = _build(STAND_IN, wheels)
    assert any(_pip(step) == "wheel" for step in first)  # built its wheels into the folder
    assert list(wheels.glob("six-1.17.0-*.whl")) and STAND_IN.wheelhouse_filled(wheels)
    assert STAND_IN.built_as_declared()

    monkeypatch.setenv("SRTUI_ENVS", str(tmp_path / "second"))  # another machine's environments
    offline = {"PIP_INDEX_URL": CLOSED, "PIP_EXTRA_INDEX_URL": CLOSED, "PIP_FIND_LINKS": "", "PIP_RETRIES": "0"}
    second = _build(STAND_IN, wheels, offline)
    assert not any(_pip(step) == "wheel" for step in second)
    assert all("--no-index" in step for step in second if _pip(step) == "install")
    assert all(step[1] == "-P" for step in second)  # no cwd first on any sys.path (#54)
    assert STAND_IN.built_as_declared() and STAND_IN.folder == tmp_path / "second" / STAND_IN.name
    version = subprocess.run([str(STAND_IN.python), "-c", "import six; print(six.__version__)"], capture_output=True)
    assert version.stdout.decode().strip() == "1.17.0"


def test_the_cli_says_where_the_wheels_come_from(tmp_path: Path) -> None:
    name = "sklearn-0.24.1"
    env = {"SRTUI_ENVS": str(tmp_path / "envs")}
    wheels = tmp_path / "wheels"
    build = srtui("env", "create", name, "--wheelhouse", str(wheels), "--dry-run", env=env, check=True).stdout
    assert f"building its wheels into {wheels}" in build and "pip wheel" in build and "--no-index" in build
    wheels.mkdir()
    (wheels / f"{name}{WHEELHOUSE_MARKER}").write_text(get(name).environment.wheelhouse_fingerprint())
    offline = srtui("env", "create", name, "--wheelhouse", str(wheels), "--dry-run", env=env, check=True).stdout
    assert f"offline from {wheels}" in offline and "pip wheel" not in offline
    not_built = srtui("env", "export", name, str(wheels), env=env)
    assert not_built.returncode == 2 and not_built.stderr.count("\n") == 1
    assert "is not created" in not_built.stderr and f"srtui env create {name}" in not_built.stderr
    (tmp_path / "file").write_text("")
    refused = srtui("env", "create", name, "--wheelhouse", str(tmp_path / "file"), env=env)
    assert refused.returncode == 2 and "is not a folder" in refused.stderr


@pytest.mark.slow  # a venv with pip
def test_export_fills_a_wheelhouse_from_a_built_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRTUI_ENVS", str(tmp_path / "envs"))
    for step in STAND_IN.install_steps():  # built the ordinary way, from the registry
        assert subprocess.run(step, capture_output=True, timeout=600).returncode == 0, step
    out = tmp_path / "exported"
    out.mkdir()
    for step in STAND_IN.export_steps(out):
        assert step[0] == str(STAND_IN.python)  # the environment's own interpreter and pip
        assert subprocess.run(step, capture_output=True, timeout=600).returncode == 0, step
    assert list(out.glob("six-1.17.0-*.whl")) and STAND_IN.wheelhouse_filled(out)
