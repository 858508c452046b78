"""Issue 54, 1: no interpreter srtui starts imports from a folder another account can write.

`python -m` puts its cwd first on ``sys.path``, ``-c`` an empty entry (the cwd): a fork server
started in the shared temp dir imported an ``engine/__init__.py`` planted there, as the driver's
user. Every interpreter srtui starts now runs with ``-P`` (engine/private.py): here packages
planted in a world-writable TMPDIR and in the driver's cwd, each writing a marker when imported,
must never be imported by any process of a real `srtui run` (both launchers, the checkers'
forkserver, the seal probe) or `srtui methods check`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: what a planted folder shadows: srtui's own packages, the stdlib modules the worker starters
#: import by name (multiprocessing's ``-c``, ``-m venv``), and a library every process imports
PLANTED = ("engine", "srtui", "runs", "results", "numpy", "multiprocessing")
MARKER = "import os\nopen(os.path.join({marks!r}, '{name}-' + str(os.getpid())), 'w').close()\n"


def plant(folder: Path, marks: Path) -> None:
    for name in PLANTED:
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "__init__.py").write_text(MARKER.format(marks=str(marks), name=name))


def console_srtui() -> str:
    """The installed console script: how srtui is run (``python -m srtui`` would itself put
    the cwd first, by the user's own choice)."""
    script = Path(sys.executable).with_name("srtui")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable}")
    return str(script)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    marks = tmp_path / "marks"
    marks.mkdir()
    marks.chmod(0o777)
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp: anyone may write
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    plant(shared, marks)
    plant(cwd, marks)
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "PYTHONSAFEPATH", "XDG_RUNTIME_DIR")}
    env["TMPDIR"] = str(shared)
    return marks, cwd, env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "how",
    [
        ["--launcher", "fork"],
        pytest.param(["--launcher", "exec"], marks=pytest.mark.slow),  # over 8 s under load
        pytest.param(["--backend", "dask", "--cluster", "local"], marks=pytest.mark.slow),  # workers are spawned
    ],
    ids=["fork", "exec", "dask-local"],
)
def test_a_run_imports_nothing_planted_in_the_temp_dir_or_the_cwd(planted, tmp_path: Path, how: list[str]) -> None:
    marks, cwd, env = planted
    suite = tmp_path / "p.toml"
    suite.write_text(
        'name = "p"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop", "linear"]\nseeds = [1]\n[limits]\ntime_s = 60\n'
    )
    proc = run([console_srtui(), "run", str(suite), *how, "-w", str(tmp_path / "ws")], cwd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert sorted(os.listdir(marks)) == [], "planted packages imported by srtui's processes"
    status = run([console_srtui(), "status", "-w", str(tmp_path / "ws")], cwd, env)
    assert status.returncode == 0, status.stderr
    assert sorted(os.listdir(marks)) == []


def test_methods_check_imports_nothing_planted(planted) -> None:
    marks, cwd, env = planted
    proc = run([console_srtui(), "methods", "check", "linear"], cwd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert sorted(os.listdir(marks)) == []


def test_the_seal_probe_imports_nothing_planted(planted) -> None:
    """The probe alone (``srtui.engine.process.seal.isolation``), in a fresh driver whose cwd and
    TMPDIR hold the planted packages."""
    marks, cwd, env = planted
    code = "from srtui.engine.process import seal; print(seal.isolation().mode)"
    proc = run([sys.executable, "-P", "-c", code], cwd, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("namespaces", "fallback")
    assert sorted(os.listdir(marks)) == []
