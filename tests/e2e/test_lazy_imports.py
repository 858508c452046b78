"""Commands answer at interpreter speed (issue 56): the real CLI, in a subprocess, imports no heavy
library it does not use. Checked on the modules the driver ended with (never on seconds, which a
loaded machine stretches): planning a run (``--dry-run``) imports no method and no scikit-learn,
pandas, sympy or matplotlib; a grid only a job can read is read once, then kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_data_dir, srtui
from test_srbench2021_method_files import GPLEARN, _write

#: what planning and reading the store never need
HEAVY = ("sklearn", "pandas", "sympy", "matplotlib", "scipy", "textual")

#: runs ``python -m srtui ARGS`` as the console does, then writes the driver's sys.modules (only
#: the driver's: a process forked from it exits without running atexit's handlers)
BOOT = """
import atexit, os, runpy, sys
pid, out = os.getpid(), os.environ["SRTUI_MODULES_FILE"]
def dump():
    if os.getpid() == pid:
        with open(out, "w") as fh:
            fh.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
sys.argv = ["srtui", *sys.argv[1:]]
runpy.run_module("srtui", run_name="__main__", alter_sys=True)
"""


def imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The real CLI's answer to ``args`` and the modules its driver imported."""
    out_file = tmp_path / f"modules-{len(list(tmp_path.glob('modules-*')))}.txt"
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    env["SRTUI_MODULES_FILE"] = str(out_file)
    proc = subprocess.run(
        [sys.executable, "-c", BOOT, *args], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path
    )
    assert out_file.exists(), proc.stderr
    return proc, set(out_file.read_text().split())


def heavy(modules: set[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY))


#: all `srtui --help` and a misspelt command may import of srtui's own packages
HELP_MODULES = {"srtui.engine", "srtui.engine.errors", "srtui.engine.textsafe", "srtui", "srtui.warnings_policy"}


@pytest.mark.parametrize("args", [("--help",), ("rnu",), ("-w", "ws", "rnu")])
def test_help_and_a_misspelt_command_import_no_command(tmp_path: Path, args: tuple[str, ...]) -> None:
    proc, modules = imported(tmp_path, *args)
    if args == ("--help",):
        assert proc.returncode == 0 and "│ run " in proc.stdout and "│ review " in proc.stdout
    else:
        assert proc.returncode == 2 and "No such command 'rnu'. Did you mean 'run'?" in proc.stderr
    ours = {m for m in modules if m.split(".")[0] == "srtui"}
    cli = {f"srtui.cli{m}" for m in ("", ".coercion", ".command_table", ".common", ".lazy", ".tui_cmd")}
    assert ours - cli == HELP_MODULES
    # nor numpy, nor a store, nor the pydantic typer coerces values with (srtui.cli.coercion)
    assert {m.split(".")[0] for m in modules} & {*HEAVY, "numpy", "sqlite3", "multiprocessing", "pydantic"} == set()


def srbench_methods() -> Path:
    """SRBench 2.0's method folders, read in place from the shared data (never copied here)."""
    env = os.environ.get("SRTUI_SRBENCH_METHODS")
    data = shared_data_dir()
    bases = ([Path(env)] if env else []) + ([data / "srbench-methods"] if data else [])
    for base in bases:
        if (base / "sklearn_ridge" / "regressor.py").is_file() and (base / "sklearn_linear" / "regressor.py").is_file():
            return base
    pytest.skip("SRBench method folders sklearn_ridge and sklearn_linear not found in ../shared/data/srbench-methods/")


def test_a_dry_run_with_two_srbench_folders_imports_no_method(tmp_path: Path) -> None:
    base = srbench_methods()
    args = ["run", "smoke", "--protocol", "srbench2021", "--dry-run", "-w", str(tmp_path / "ws")]
    args += ["--method-dir", str(base / "sklearn_ridge"), "--method-dir", str(base / "sklearn_linear")]
    for _ in range(2):
        proc, modules = imported(tmp_path, *args)
        assert proc.returncode == 0, proc.stderr
        assert "note: grid of sklearn_ridge: 64 configuration(s), the literal hyper_params" in proc.stderr
        assert "tuning sklearn_ridge on smoke-interaction" in proc.stdout
        assert heavy(modules) == []
        assert not {"urllib.request", "http.client", "ssl"} & modules  # a plan that downloads nothing
    assert not (tmp_path / "ws").exists()  # a dry run writes nothing


def test_a_grid_a_job_read_is_kept_for_the_next_plan(tmp_path: Path) -> None:
    gplearn = _write(tmp_path, "gplearn", GPLEARN)
    args = ["run", "smoke", "--protocol", "srbench2021", "--tasks", "smoke-interaction", "--seeds", "1"]
    args += ["--methods", "gplearn", "--method-dir", str(gplearn), "--dry-run", "-w", str(tmp_path / "ws")]
    first, _ = imported(tmp_path, *args)
    assert "note: grid of gplearn: 6 configuration(s), read by running gplearn.py in a job\n" in first.stderr
    second, modules = imported(tmp_path, *args)
    assert "note: grid of gplearn: 6 configuration(s), read by running gplearn.py in a job, kept from" in second.stderr
    assert second.stdout == first.stdout and heavy(modules) == []
    gplearn.write_text(GPLEARN.replace("[1000,500,100]", "[1000,500]"))  # other code: read again
    third, _ = imported(tmp_path, *args)
    assert "note: grid of gplearn: 4 configuration(s), read by running gplearn.py in a job\n" in third.stderr


def test_status_and_results_read_the_store_only(tmp_path: Path, suite_file) -> None:
    ws = tmp_path / "ws"
    srtui("run", str(suite_file(methods=("probe-noop",))), "-w", str(ws), check=True)
    proc, modules = imported(tmp_path, "status", "-w", str(ws))
    assert proc.returncode == 0 and "1 jobs" in proc.stdout, proc.stdout + proc.stderr
    assert heavy(modules) == [] and not {"numpy", "pydantic", "srtui.runs.sink", "srtui.engine.backends"} & modules
    proc, modules = imported(tmp_path, "results", "--format", "json", "-w", str(ws))
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["method"] == "probe-noop"
    assert heavy(modules) == [] and not {"numpy", "pydantic"} & modules


def test_methods_check_runs_the_job_without_a_metrics_pass_or_pandas(tmp_path: Path) -> None:
    import sqlite3

    proc, modules = imported(tmp_path, "methods", "check", "linear", "--json", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "ok", proc.stderr
    assert not {"pandas", "srtui.results.metrics.tasks", "sqlite_utils"} & modules  # the store made WAL without them
    # the job's libraries are its server's, the parser's its checker's: the driver's recorder
    # scores the job with numpy alone (srtui.engine.r2), not through the parser's sympy
    assert heavy(modules) == [] and "srtui.engine.expression" not in modules
    with sqlite3.connect(tmp_path / "ws" / "checks" / "linear" / "srtui.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_suite_s_method_parameters_are_checked_without_importing_the_method(tmp_path: Path) -> None:
    """Issue 55/56: a misspelt parameter is refused before any job, the estimator's signature read
    in a process of its own: the driver imports neither scikit-learn nor gplearn nor pyoperon."""
    suite = tmp_path / "typo.toml"
    base = 'name = "typo"\ntasks = ["smoke-linear"]\nmethods = ["gplearn", "ridge", "pyoperon"]\nseeds = [1]\n'
    suite.write_text(base + "[params.pyoperon]\ngeneratoins = 3\n")
    proc, modules = imported(tmp_path, "run", str(suite), "--dry-run", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "method 'pyoperon' has no parameter 'generatoins'" in proc.stderr and "'generations'" in proc.stderr
    suite.write_text(base + "[params.ridge]\nalphas = [1.0]\n[params.gplearn]\ngenerations = 3\n")
    proc, modules = imported(tmp_path, "run", str(suite), "--dry-run", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr
    assert not heavy(modules) and not {"gplearn", "pyoperon"} & {m.split(".")[0] for m in modules}
