"""srtui is one import package with no import loop (issue 57).

The rooms (engine/, tasks/, results/, runs/, reviews/) stay beside srtui/ in the source tree and
are reached as ``srtui.engine`` and so on; a wheel holds ``srtui/`` alone, so nothing named after
a room collides with another distribution's package or a folder of the user's.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOMS = ("engine", "tasks", "results", "runs", "reviews")


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module (the import loops)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))
    return loops


def test_the_loop_finder_finds_a_loop() -> None:
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_module_of_srtui_is_in_an_import_loop() -> None:
    """Every import that runs counts, a function's lazy one too (grimp's graph, import-linter's
    reader); an import under ``if TYPE_CHECKING:`` is an annotation's, never executed."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter, in the test extra")
    graph = grimp.build_graph("srtui", exclude_type_checking_imports=True)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert len(edges) > 200  # the graph reached every room through srtui's links
    assert _strongly_connected(edges) == []


def test_no_file_imports_a_room_by_its_top_level_name() -> None:
    strays = []
    for folder in (REPO / "srtui", *(REPO / room for room in ROOMS), REPO / "tests"):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                strays += [f"{path.relative_to(REPO)}:{node.lineno} {n}" for n in names if n.split(".")[0] in ROOMS]
    assert strays == []


def test_python_m_srtui_ignores_the_folders_of_the_working_directory(tmp_path: Path) -> None:
    """``python -m`` puts the working directory first on the path: a folder holding a results/
    package, a tasks.py and an engine/ of its own must not be what srtui imports."""
    marks = tmp_path / "marks"
    marks.mkdir()
    here = tmp_path / "project"
    for name in ("results", "engine", "runs", "reviews"):
        (here / name).mkdir(parents=True)
        (here / name / "__init__.py").write_text(f"open({str(marks / name)!r}, 'w').close()\nraise SystemExit(9)\n")
    (here / "tasks.py").write_text(f"open({str(marks / 'tasks')!r}, 'w').close()\nraise SystemExit(9)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", "-w", str(tmp_path / "ws"), "run", "smoke", "--dry-run"],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "smoke-linear" in proc.stdout
    assert list(marks.iterdir()) == []


def test_the_wheel_installs_one_top_level_package(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("srtui-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"srtui"}
    assert "srtui/engine/process/job_worker.py" in names and "srtui/views/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith("srtui/tests")]
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
    )
    probe = (
        "import importlib.util as u, sys\n"
        # the wheel's copy first, and not the source tree an editable install of this srtui adds
        f"sys.path[:] = [{str(target)!r}] + [p for p in sys.path if p != {str(REPO)!r}]\n"
        f"print(sorted(n for n in {ROOMS!r} if u.find_spec(n)), u.find_spec('srtui.engine').origin)\n"
    )
    found = subprocess.run(
        [sys.executable, "-P", "-c", probe], capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path
    )
    assert found.stdout.split()[0] == "[]"  # no room importable by its own name
    assert found.stdout.split()[1].startswith(str(target))
