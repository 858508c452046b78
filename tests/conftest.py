"""Shared fixtures: real workspaces in temp dirs, the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
#: the fork servers `methods check` keeps (srtui.engine.process.kept_servers) live a minute after
#: a test's last check, not ten: the suite leaves none behind for long
os.environ.setdefault("SRTUI_KEEP_SERVER_S", "60")

#: The unit tests are the modules in tests/unit/: in-process calls of srtui's functions and classes,
#: no app under a pilot, (almost) no CLI subprocess; the whole set takes seconds to a minute. Every
#: module in tests/e2e/ (or anywhere else), and every test marked slow, is end to end (marker
#: ``e2e``): the real CLI in subprocesses, the Textual app, real method fits under the engine's
#: limits, real servers. ``pytest -m "not e2e"`` is the fast run; the default run has both. A new
#: module goes into tests/unit/ only if it runs in-process and fast.
UNIT_DIR = Path(__file__).resolve().parent / "unit"


@pytest.hookimpl(tryfirst=True)  # before -m selects on the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not item.path.resolve().is_relative_to(UNIT_DIR) or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.e2e)


def shared_data_dir() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def srtui(
    *args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None, check: bool = False
) -> subprocess.CompletedProcess:
    """Run the real `srtui` CLI (as `python -m srtui`) and capture its output."""
    full_env = dict(os.environ)
    full_env.pop("SRTUI_WORKSPACE", None)
    full_env.update(env or {})
    from probe_folders import as_launched

    proc = subprocess.run(
        [sys.executable, "-m", "srtui", *as_launched(args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"srtui {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def start_srtui(*args: str, env: dict | None = None, **popen: Any) -> subprocess.Popen:
    """Start the real `srtui` CLI (as `python -m srtui`) without waiting for it: a driver a test
    kills, interrupts or polls. The environment is `srtui`'s (this one without SRTUI_WORKSPACE,
    plus ``env``); stdout and stderr go to /dev/null unless ``popen`` says (``stdout=``,
    ``stderr=``, ``text=``)."""
    full_env = dict(os.environ)
    full_env.pop("SRTUI_WORKSPACE", None)
    full_env.update(env or {})
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    from probe_folders import as_launched

    return subprocess.Popen([sys.executable, "-m", "srtui", *as_launched(args)], env=full_env, **popen)


def results_json(workspace: Path) -> list[dict]:
    out = srtui("results", "--format", "json", "--workspace", str(workspace), check=True)
    return json.loads(out.stdout)


def poll_db(workspace: Path, query: str) -> list[tuple]:
    """Rows of ``query`` on a running driver's database, or [] while it is not there or busy.
    Read-only: a plain connect would create an empty ``srtui.db`` first, which srtui refuses
    (an empty database is what a truncated one looks like)."""
    import sqlite3

    path = workspace / "srtui.db"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute(query).fetchall()
    except sqlite3.OperationalError:
        return []


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder of its own: nothing it does depends on where pytest was
    started, or on what the README's first command left there (./srtui-workspace), and nothing
    it writes by default lands in the checkout."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    monkeypatch.delenv("SRTUI_WORKSPACE", raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def job_writable() -> Iterator[Path]:
    """A folder a job can write a probe's pid file in when it runs as a uid of its own (the
    fallback as root: engine/process/fallback.py), which pytest's 0700 tmp_path is not."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="srtui-test-open-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def suite_file(tmp_path: Path):
    """Write a suite TOML for a test and return its path."""

    def make(
        name: str = "t", tasks=("smoke-linear",), methods=("probe-noop",), seeds=(1,), limits=None, params=None
    ) -> Path:
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


#: SRBench 2.0's method folders are GPL-3.0 code of cavalab/srbench: never committed here (a
#: workplace rule); tests take them, unmodified, from the first of these places that has them
SRBENCH_MIRROR = Path("/work/.mirror/cavalab+srbench/repo")
SRBENCH_BRANCH = "srbench_2025"


@pytest.fixture
def srbench_folder(tmp_path: Path):
    """``srbench_folder(NAME)``: SRBench 2.0's ``experiment/methods/NAME``, byte for byte, from
    ``$SRTUI_SRBENCH_METHODS/NAME``, ``../shared/data/srbench-methods/NAME`` next to the repo, or
    the git mirror of cavalab/srbench (branch srbench_2025, extracted into tmp_path); skips the
    test with the reason when none of them is there."""

    def get(name: str) -> Path:
        env = os.environ.get("SRTUI_SRBENCH_METHODS")
        for base in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data" / "srbench-methods"]:
            if (base / name / "regressor.py").is_file():
                return base / name
        if SRBENCH_MIRROR.is_dir():
            out = tmp_path / "srbench"
            out.mkdir(exist_ok=True)
            archive = subprocess.run(
                ["git", f"--git-dir={SRBENCH_MIRROR}", "archive", SRBENCH_BRANCH, f"experiment/methods/{name}"],
                capture_output=True,
                timeout=120,
            )
            if archive.returncode == 0:
                subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True, timeout=120)
                return out / "experiment" / "methods" / name
        pytest.skip(
            f"SRBench method folder {name!r} not found: set SRTUI_SRBENCH_METHODS to a copy of SRBench's "
            f"experiment/methods (branch {SRBENCH_BRANCH}), or put it in ../shared/data/srbench-methods/"
        )

    return get


#: ``fork`` is the launcher every built-in method gets by default (``auto``); the ``exec`` runs
#: of the same tests are marked ``slow`` (not in the default run; the step `.ci/run --full` adds)
@pytest.fixture(params=["fork", pytest.param("exec", marks=pytest.mark.slow)])
def launcher(request) -> str:
    """Both job launchers (srtui.engine.process.launch): a test taking it runs once forked, once exec'd."""
    return request.param


#: jobs run unsealed (srtui.engine.process.seal's fallback): for the tests of the fallback's own
#: containment (escapees, fork loops, records), whose probes write host pids to a file of the test
FALLBACK = {"SRTUI_ISOLATION": "fallback"}


#: the containment, limit and escapee tests run a third time with their probes as method folders
#: forked from the folder fork server (tests/probe_folders.py; ``slow`` like ``exec``)
@pytest.fixture(
    params=["fork", pytest.param("exec", marks=pytest.mark.slow), pytest.param("folder", marks=pytest.mark.slow)]
)
def contained_launcher(request) -> str:
    """``launcher``'s two and ``folder``: ``--launcher folder`` is made real by ``srtui``."""
    return request.param
