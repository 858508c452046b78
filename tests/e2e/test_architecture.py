"""The core (runs, engine, tasks, results, reviews) never imports Textual; the import layers hold.

Two independent proofs, as Harlequin does it: import-linter's contracts from pyproject.toml
(static, every import statement), and each core module imported in a fresh interpreter with
``textual`` absent from ``sys.modules`` afterwards (dynamic, catches lazy and indirect imports).
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = ("runs", "engine", "tasks", "results", "reviews")
#: the packages of pyproject's optional extras (cluster, srbench-optional, published): the only
#: imports a core module may lack here; any other import error fails the test
OPTIONAL = (
    "asyncssh",
    "dask_jobqueue",
    "pyarrow",
    "optuna",
    "lightgbm",
    "xgboost",
    "feyn",
    "bingo",
    "mpi4py",
    "rils_rols",
)


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the packages under ``root`` with its pyproject.toml, run through this
    interpreter (never a PATH lookup: CI does not activate the venv); ``root`` comes first on the
    path, so a copy of the packages is read instead of the installed ones."""
    pytest.importorskip("importlinter", reason="import-linter is in the test extra")
    cli = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", cli, "--config", str(root / "pyproject.toml")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_import_linter_contracts_are_kept():
    proc = lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "The core never imports Textual KEPT" in proc.stdout
    assert "The app enters the core through its facade KEPT" in proc.stdout
    assert "broken" in proc.stdout and " 0 broken" in proc.stdout


def test_the_app_facade_contract_fails_on_a_screen_that_reaches_past_the_facade(tmp_path: Path) -> None:
    """The contract above can fail: a screen importing the run's sink, or the store's query API
    (a door of its own before the facade held the Reader), breaks it."""
    for name in ("pyproject.toml", *CORE, "srtui"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    screen = tmp_path / "srtui" / "app" / "screens" / "monitor.py"
    past = "from srtui.runs.sink import StoreSink\nfrom srtui.results.store.queries import Reader as R"
    screen.write_text(screen.read_text() + f"\n{past}  # noqa: E402, F401\n")
    proc = lint_imports(tmp_path)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "The app enters the core through its facade BROKEN" in proc.stdout
    assert "srtui.app.screens.monitor -> srtui.runs.sink" in proc.stdout
    assert "srtui.app.screens.monitor -> srtui.results.store.queries" in proc.stdout
    assert "The core never imports Textual KEPT" in proc.stdout


def core_modules() -> list[str]:
    names = []
    for package in CORE:
        folder = REPO / package
        if not (folder / "__init__.py").is_file():
            continue
        names.append(f"srtui.{package}")
        names += [m.name for m in pkgutil.walk_packages([str(folder)], prefix=f"srtui.{package}.")]
    return names


def test_core_modules_do_not_load_textual_at_run_time():
    modules = core_modules()
    assert "srtui.engine.process.supervise" in modules and "srtui.results.store.store" in modules
    script = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        f"        if (exc.name or '').partition('.')[0] not in {OPTIONAL!r}: raise\n"
        "    if 'textual' in sys.modules or 'textual_plotext' in sys.modules:\n"
        "        bad.append(name); break\n"
        "print('LOADED-TEXTUAL:' + ','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "LOADED-TEXTUAL:\n" in proc.stdout, f"first core module that pulled in Textual: {proc.stdout}"


def test_the_app_package_is_the_one_that_loads_textual():
    """The check above can fail: importing the app does load Textual."""
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, srtui.app.app; print('textual' in sys.modules)"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.strip() == "True", proc.stderr[-2000:]
