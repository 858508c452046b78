"""The core of runs (issue 17): one SrtuiError hierarchy printed one way by the CLI, the root
-w honoured or refused by every subcommand, one Backend protocol, every backend closed."""

from __future__ import annotations

import ast
import importlib
import json
import time
from pathlib import Path

import psutil
import pytest
from conftest import srtui

from srtui.engine.errors import SrtuiError

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "tasks", "results", "reviews", "runs", "srtui")


def exception_classes() -> list[tuple[str, str]]:
    """(module, class) of every exception class defined in the project's packages."""
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            module = module if package == "srtui" else f"srtui.{module}"
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and (
                    node.name.endswith("Error")
                    or any(isinstance(b, ast.Name) and b.id in ("Exception", "ValueError") for b in node.bases)
                ):
                    found.append((module, node.name))
    return found


def test_every_exception_class_of_the_project_is_a_srtui_error() -> None:
    classes = exception_classes()
    assert len(classes) >= 22, classes  # the scan itself finds them
    strays = []
    for module, name in classes:
        cls = getattr(importlib.import_module(module), name)
        if issubclass(cls, BaseException) and not issubclass(cls, SrtuiError):
            strays.append(f"{module}.{name}")
    assert not strays, f"not under srtui.engine.errors.SrtuiError: {strays}"


def one_error_line(proc: object, code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)  # type: ignore[attr-defined]
    lines = proc.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("srtui: error: "), proc.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in proc.stderr  # type: ignore[attr-defined]
    return lines[0]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    "args, says",
    [
        (["run", "no-such-suite", "--dry-run"], "no-such-suite"),
        (["run", "smoke", "--methods", "no-such-method", "--dry-run"], "no-such-method"),
        (["run", "smoke", "--tasks", "no-such-task", "--dry-run"], "no-such-task"),
        (["run", "smoke", "--protocol", "no-such-protocol", "--dry-run"], "no-such-protocol"),
        (["tasks", "show", "no-such-task"], "no-such-task"),
        (["expr", "x +"], ""),
        (["score", "srbench2021", "--from-csv", "/nonexistent/runs.csv"], "/nonexistent"),
        (["methods", "check", "no-such-method"], "no-such-method"),
    ],
)
def test_every_command_prints_an_expected_failure_as_one_line_with_exit_2(
    tmp_path: Path, args: list[str], says: str
) -> None:
    with_workspace = args if args[0] in ("expr", "score") else [*args, "--workspace", str(tmp_path / "ws")]
    assert says in one_error_line(srtui(*with_workspace, cwd=tmp_path))


# the root -w ---------------------------------------------------------------------------------


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_root_workspace_is_used_by_tasks_add_status_run_and_methods_check(tmp_path: Path) -> None:
    ws = tmp_path / "given"
    csv = tmp_path / "data.csv"
    csv.write_text("a,b,y\n" + "".join(f"{i},{i % 7},{2 * i + 1}\n" for i in range(40)))
    added = srtui("-w", str(ws), "tasks", "add", "mine", str(csv), "--target", "y", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    listed = srtui("-w", str(ws), "tasks", "list", cwd=tmp_path)
    assert listed.returncode == 0 and "mine" in listed.stdout, listed.stderr
    ran = srtui(
        "-w",
        str(ws),
        "run",
        "smoke",
        "--methods",
        "probe-noop",
        "--tasks",
        "mine",
        "--seeds",
        "1",
        "--time-limit",
        "60",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    status = srtui("-w", str(ws), "status", "--json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["workspace"] == str(ws) and shown["total"] == 1
    results = srtui("-w", str(ws), "results", "--format", "json", cwd=tmp_path)
    assert [r["task"] for r in json.loads(results.stdout)] == ["mine"]
    assert not (tmp_path / "srtui-workspace").exists()  # nothing went to the default place


def test_root_workspace_is_refused_where_it_cannot_apply_or_contradicts(tmp_path: Path) -> None:
    line = one_error_line(srtui("-w", str(tmp_path / "ws"), "methods", "list", cwd=tmp_path))
    assert "does not apply to `srtui methods list`" in line
    line = one_error_line(srtui("-w", str(tmp_path / "ws"), "expr", "x0 + 1", cwd=tmp_path))
    assert "does not apply to `srtui expr`" in line
    line = one_error_line(srtui("-w", str(tmp_path / "a"), "status", "-w", str(tmp_path / "b"), cwd=tmp_path))
    assert "two workspaces" in line
    same = srtui("-w", str(tmp_path / "a"), "tasks", "list", "-w", str(tmp_path / "a"), cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert not (tmp_path / "srtui-workspace").exists()


# backends ------------------------------------------------------------------------------------


def test_dask_scheduler_has_its_own_option_and_the_old_name_says_so(tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    new = srtui("run", "smoke", "--dask-scheduler", "tcp://127.0.0.1:1", "--dry-run", "-w", ws)
    assert new.returncode == 0, new.stderr
    assert "slots: those of the workers of tcp://127.0.0.1:1" in new.stdout and "deprecated" not in new.stderr
    old = srtui("run", "smoke", "--scheduler", "tcp://127.0.0.1:1", "--dry-run", "-w", ws)
    assert old.returncode == 0, old.stderr
    assert "--scheduler is deprecated" in old.stderr and "--dask-scheduler" in old.stderr
    assert "slots: those of the workers of tcp://127.0.0.1:1" in old.stdout
    both = srtui("run", "smoke", "--scheduler", "tcp://a:1", "--dask-scheduler", "tcp://b:1", "--dry-run", "-w", ws)
    assert "give only --dask-scheduler" in one_error_line(both)
    local = srtui("run", "smoke", "--backend", "local", "--dask-scheduler", "tcp://a:1", "--dry-run", "-w", ws)
    assert "need --backend dask" in one_error_line(local)


def test_every_backend_implements_the_backend_protocol() -> None:
    from srtui.engine.backends.base import Backend
    from srtui.engine.backends.dask import DaskBackend
    from srtui.engine.backends.local import LocalBackend

    wanted = {name for name in vars(Backend) if not name.startswith("_")} | set(Backend.__annotations__)
    assert {"prepare", "run", "close", "name"} <= wanted
    for cls in (LocalBackend, DaskBackend):
        missing = sorted(
            name for name in wanted if not hasattr(cls, name) and name not in cls.__init__.__code__.co_names
        )
        assert not missing, f"{cls.__name__} lacks {missing}"


def _new_children(before: set[int]) -> list[psutil.Process]:
    """Processes this test started that still run (multiprocessing's own helpers, which live as
    long as the interpreter, aside)."""
    left = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.pid in before or proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if any("resource_tracker" in part or "forkserver" in part for part in proc.cmdline()):
                continue
        except psutil.NoSuchProcess:
            continue
        left.append(proc)
    return left


def test_a_dask_cluster_started_before_the_store_is_closed_when_the_store_fails(tmp_path: Path) -> None:
    """The cluster is started before the store is opened (a bad cluster touches nothing); a
    store that then cannot be opened must not leave the cluster's worker processes running."""
    pytest.importorskip("distributed", reason="dask[distributed] is in the cluster extra")
    from srtui.engine.workspace import resolve
    from srtui.results.store.store import StoreError
    from srtui.runs.execution import execute
    from srtui.runs.options import RunRequest
    from srtui.runs.planning import plan_run

    ws = resolve(tmp_path / "ws")
    ws.ensure()
    req = RunRequest(suite="smoke", methods=["probe-noop"], tasks=["smoke-linear"], seeds=1, cluster="local", jobs=1)
    plan = plan_run(ws, req)
    ws.db_path.write_bytes(b"this is not a database " * 100)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(StoreError, match="not a usable srtui database"):
        execute(plan, req)
    deadline = time.monotonic() + 60  # a loaded machine takes its time to stop processes
    while _new_children(before) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _new_children(before)
    assert not left, f"the Dask cluster's processes outlived the failed run: {[p.cmdline() for p in left]}"
