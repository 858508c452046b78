"""Shared fixtures: real workspaces in temp dirs, the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def srtui(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """Run the real `srtui` CLI (as `python -m srtui`) and capture its output."""
    full_env = dict(os.environ)
    full_env.pop("SRTUI_WORKSPACE", None)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"srtui {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def results_json(workspace: Path) -> list[dict]:
    out = srtui("results", "--format", "json", "--workspace", str(workspace), check=True)
    return json.loads(out.stdout)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def suite_file(tmp_path: Path):
    """Write a suite TOML for a test and return its path."""

    def make(name: str = "t", tasks=("smoke-linear",), methods=("probe-noop",), seeds=(1,), limits=None, params=None) -> Path:
        lines = [
            f'name = "{name}"',
            f"tasks = {json.dumps(list(tasks))}",
            f"methods = {json.dumps(list(methods))}",
            f"seeds = {json.dumps(list(seeds))}",
        ]
        if limits:
            lines.append("[limits]")
            lines += [f"{k} = {v}" for k, v in limits.items()]
        for method, values in (params or {}).items():
            lines.append(f'[params."{method}"]')
            lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
        path = tmp_path / f"{name}.toml"
        path.write_text("\n".join(lines) + "\n")
        return path

    return make
