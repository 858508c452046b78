"""`srtui methods check` starts what its one job waits for before it plans (issue 56), and the
run then uses those very servers: one lean fork server (its family's modules, not sympy), the
model checkers' forkserver (which leaves at once when its driver has gone), the interpreter's
versions asked once. Each in a real interpreter of its own: the servers are this process's pool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

#: a driver that starts the check early, then runs it, and says what its pool holds
CHECK_DRIVER = """
import json, os, sys
from pathlib import Path
from srtui.engine.process.fork_server import LEAN_ENV
from srtui.engine.process.launch import POOL
from srtui.engine.workspace import resolve
from srtui.runs.check import check_method, start_early

forked = start_early("linear")
rows = check_method("linear", resolve(Path(sys.argv[1])), 20.0)
servers = list(POOL.servers.values())
envs = [open(f"/proc/{s.pid}/environ", "rb").read().split(b"\\0") for s in servers]
print(json.dumps({
    "forked": forked,
    "status": [r["status"] for r in rows],
    "servers": len(servers),
    "lean": [f"{LEAN_ENV}=1".encode() in e for e in envs],
}))
"""


def _python(code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def test_the_check_starts_one_lean_server_early_and_its_job_forks_from_it(tmp_path: Path) -> None:
    proc = _python(CHECK_DRIVER, str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.splitlines()[-1])
    # started before the plan, and the plan's own start found it: one server, the job ran on it
    assert found == {"forked": True, "status": ["ok"], "servers": 1, "lean": [True]}, proc.stderr


def test_nothing_is_started_early_for_a_folder_an_environment_or_an_unknown_name(tmp_path: Path) -> None:
    code = """
import sys
from srtui.engine.process.launch import POOL
from srtui.runs.check import start_early
print([start_early(sys.argv[1]), start_early("linear", env="sklearn-0.24.1"), start_early("nosuch")], len(POOL.servers))
"""
    proc = _python(code, str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[False,", "False,", "False]", "0"]


PRELOAD = """
import json, os, sys
from srtui.engine.process import fork_server
failed = fork_server._preload(sys.argv[1])
print(json.dumps({"sympy": "sympy" in sys.modules, "numpy": "numpy" in sys.modules, "failed": failed}))
"""


@pytest.mark.parametrize("family", ["srtui.engine.methods.probes", "srtui.engine.methods.sklearn_baselines"])
def test_a_lean_server_leaves_sympy_to_its_job_a_full_one_imports_what_its_family_declares(family: str) -> None:
    import importlib

    from srtui.engine.process.fork_server import BASE_MODULES, LEAN_ENV

    lean = _python(PRELOAD, family, env={LEAN_ENV: "1"})
    full = _python(PRELOAD, family, env={LEAN_ENV: ""})
    assert lean.returncode == 0 and full.returncode == 0, lean.stderr + full.stderr
    assert json.loads(lean.stdout) == {"sympy": False, "numpy": True, "failed": []}
    # a full server imports BASE_MODULES, or what the family declares its jobs need (the baselines: no sympy)
    declared = getattr(importlib.import_module(family), "FORK_SERVER_IMPORTS", BASE_MODULES)
    assert json.loads(full.stdout) == {"sympy": "sympy" in declared, "numpy": True, "failed": []}


ARMED = """
import multiprocessing as mp
import srtui.engine.forkserver_exit as here

def armed(_):
    import srtui.engine.forkserver_exit as there
    return there.ARMED

if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["srtui.engine.forkserver_exit"])
    with ctx.Pool(1) as pool:
        print(here.ARMED, pool.map(armed, [0])[0])
"""


def test_the_quick_exit_is_armed_in_the_checkers_forkserver_only(tmp_path: Path) -> None:
    script = tmp_path / "armed.py"
    script.write_text(ARMED)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=REPO, env=dict(os.environ)
    )
    # imported by a driver: inert; imported by the forkserver's preload: armed (its forks inherit it)
    assert proc.returncode == 0 and proc.stdout.split() == ["False", "True"], proc.stderr


COUNTED = """#!/bin/sh
echo asked >> "{log}"
exec "{python}" "$@"
"""


def test_an_interpreter_s_versions_are_asked_once_however_many_callers_come(tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    python = tmp_path / "python"
    python.write_text(COUNTED.format(log=log, python=sys.executable))
    python.chmod(0o755)
    code = """
import sys, threading
from srtui.engine.process.measure import interpreter_versions, prefetch_versions
prefetch_versions(sys.argv[1])
found = []
threads = [threading.Thread(target=lambda: found.append(interpreter_versions(sys.argv[1]))) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(len(found), len({repr(sorted(f.items())) for f in found}), found[0].get("numpy") is not None)
"""
    proc = _python(code, str(python))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["4", "1", "True"]
    assert log.read_text().splitlines() == ["asked"]


def test_every_method_installed_with_srtui_is_fork_safe_as_the_early_start_assumes() -> None:
    from srtui.engine.methods import registry

    # start_early starts a non-optional method's server from its declaration, before its adapter
    # is imported: a method that is not fork-safe would cost the check a server it never uses
    installed = [d.name for d in registry.declared() if not d.optional]
    assert "linear" in installed
    assert [n for n in installed if not registry.load(n).fork_safe] == []


def _left_behind(root: Path, kept: bool = False) -> list[str]:
    """Processes whose working folder is under ``root`` (the check's servers: the fork server
    works in the private folder, the checkers' forkserver in the command's own folder); those
    but the kept fork servers (srtui.engine.process.kept_servers, left for the next check on
    purpose), or (``kept``) those alone."""
    import psutil

    left = []
    for proc in psutil.process_iter(["cwd", "pid", "cmdline"]):
        cwd = proc.info.get("cwd") or ""
        is_kept = "--kept" in (proc.info.get("cmdline") or [])
        if cwd.startswith(str(root)) and proc.info["pid"] != os.getpid() and is_kept == kept:
            left.append(f"{proc.info['pid']} in {cwd}")
    return left


def test_the_check_leaves_at_once_yet_runs_every_exit_handler(tmp_path: Path, monkeypatch) -> None:
    import shutil
    import tempfile

    from srtui.engine.private import socket_dir

    # a private folder of this test's own, short enough to hold multiprocessing's socket folder
    runtime, cwd = Path(tempfile.mkdtemp(prefix="srtui-t", dir="/tmp")), tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert socket_dir().is_relative_to(runtime)
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    try:
        _check_twice(env, runtime, cwd)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _check_twice(env: dict[str, str], runtime: Path, cwd: Path) -> None:
    import time

    for method, code in (("linear", 0), ("probe-crash", 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "srtui", "methods", "check", method, "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=cwd,
            env=env,
        )
        out = json.loads(proc.stdout)  # flushed whole before the quick exit
        assert proc.returncode == code and (out["status"] == "ok") == (code == 0), proc.stderr
    # multiprocessing's folder (the checkers' socket) was removed by its exit handler
    assert not list((runtime / "srtui").rglob("pymp-*"))
    # the fork server was waited for, the checkers' forkserver left once its driver had gone
    deadline = time.monotonic() + 60
    while (_left_behind(runtime) or _left_behind(cwd)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _left_behind(runtime) == [] and _left_behind(cwd) == []
    kept = _left_behind(runtime, kept=True)  # one of each family's (and its init maker)
    for entry in kept:
        os.kill(int(entry.split()[0]), 9)
    assert len(kept) == 4, kept
