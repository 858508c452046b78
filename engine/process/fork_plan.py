"""Whether a method folder's jobs may be forked from a pre-imported server, and what it pre-imports.

Decided from the folder's code read as text (``ast``; nothing of it runs in the driver or a
server): every ``import`` of ``regressor.py`` and of the folder's own modules it imports, followed
through the folder. Each imported name is the standard library, the folder's own, or a library.
The folder forks when every library is one of ``KNOWN_FORK_SAFE`` (their import starts no thread
and leaves no state a forked child could trip on, measured: the server checks it is still
single-threaded after importing them, else its jobs run exec'd); the server then pre-imports
exactly those modules (``sklearn.linear_model``, ``pandas``, ...), and the job imports the folder
itself after the fork, inside its limits and token, as an exec'd worker would.

A folder is exec'd, with one line saying why, when it imports a library that is not known
fork-safe (a JIT runtime, a thread pool at import, a GPU context), when a file of its own would
shadow a pre-imported library (its ``numpy.py`` would be the job's ``numpy`` under exec, not
under fork), or when its code cannot be read.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: libraries whose import is fork-safe (no thread, no process-wide handle a child would share)
KNOWN_FORK_SAFE = ("numpy", "scipy", "sklearn", "pandas", "sympy")
#: srtui itself, which every server and worker imports: neither a library nor pre-imported
SERVER_OWN = ("srtui",)
#: bounds on what is read: files followed through the folder, bytes of each, modules pre-imported
MAX_FILES = 64
MAX_SOURCE = 1 << 20
MAX_MODULES = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class ForkPlan:
    """``modules``: what the folder's server pre-imports (besides its base); ``why_not``: why the
    folder is exec'd (None: it may fork)."""

    modules: tuple[str, ...] = ()
    why_not: str | None = None

    @property
    def safe(self) -> bool:
        return self.why_not is None


def plan_folder(source: Path, roots: list[Path]) -> ForkPlan:
    """The fork plan of a method's code: ``source`` (a folder's ``regressor.py``, or a 2021 method
    file), ``roots`` the directories on its job's path (the folder itself, its SRBench checkout's
    experiment/, srtui's stand-ins), where its imports of its own resolve and are read in turn."""
    stdlib = set(sys.stdlib_module_names) | {"__future__", *SERVER_OWN}
    shadowed = [lib for lib in KNOWN_FORK_SAFE if _local(lib, roots) is not None]
    if shadowed:
        return ForkPlan(why_not=f"its own {shadowed[0]} would shadow the library a fork server pre-imports")
    todo, seen, modules, unknown = [source], set(), set(), set()
    if source.name == "regressor.py" and (source.parent / "_params.py").is_file():
        todo.append(source.parent / "_params.py")
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_FILES:
            return ForkPlan(why_not=f"more than {MAX_FILES} files of its own to read")
        names = _imports(path)
        if names is None:
            return ForkPlan(why_not=f"{path.name} cannot be read as Python")
        for name in names:
            top = name.removeprefix(".").partition(".")[0]
            own = _local(top, roots)
            if own is not None:
                todo.append(own)
            elif name.startswith("."):
                continue  # a name of the folder's package that is not a module of its own
            elif top in KNOWN_FORK_SAFE:
                if not name.rpartition(".")[2][:1].isupper():  # a class is no module
                    modules.add(name)
            elif top not in stdlib:
                unknown.add(top)
    if unknown:
        return ForkPlan(why_not=f"it imports {', '.join(sorted(unknown)[:3])}, not known fork-safe")
    return ForkPlan(modules=tuple(sorted(modules)[:MAX_MODULES]))


def _local(top: str, roots: list[Path]) -> Path | None:
    """The file a top-level name resolves to among the folder's own (a module or a package)."""
    for root in roots:
        if (root / f"{top}.py").is_file():
            return root / f"{top}.py"
        if (root / top / "__init__.py").is_file():
            return root / top / "__init__.py"
    return None


def _imports(path: Path) -> list[str] | None:
    """Module names a file imports, anywhere in it (``from a import b`` gives ``a`` and ``a.b``:
    ``b`` may be a submodule; a relative import gives ``.name``); None if it cannot be parsed."""
    try:
        with path.open("rb") as fh:
            tree = ast.parse(fh.read(MAX_SOURCE))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
        elif isinstance(node, ast.ImportFrom):  # relative: the folder's own modules, by name
            names += ["." + n for n in ([node.module] if node.module else [a.name for a in node.names])]
    return [n for n in names if _NAME.fullmatch(n.removeprefix("."))]


#: the family (adapter module) of every folder's server, and how its pre-imports are appended
FOLDER_FAMILY = "srtui.engine.methods.srbench_dir"
_SEP = "+"


@functools.lru_cache(maxsize=256)
def for_folder(path: str) -> ForkPlan:
    """The plan of the method folder (or 2021 method file) at ``path``, read once per driver, its
    imports followed through the places its job's path holds (srtui.engine.methods.srbench_dir)."""
    from srtui.engine.methods.srbench_dir import SUPPORT_DIR, import_paths

    given = Path(path)
    single = given.suffix == ".py" and not given.is_dir()  # a 2021 method file
    folder = given.parent if single else given
    roots = [*(Path(p) for p in import_paths(folder, single)), SUPPORT_DIR]
    return plan_folder(given if single else given / "regressor.py", roots)


def folder_family(path: str) -> str:
    """The server family of a folder's jobs: folders with the same pre-imports share a server
    (it runs none of their code, so sharing it shares nothing of theirs)."""
    modules = for_folder(path).modules
    return FOLDER_FAMILY + (_SEP + ",".join(modules) if modules else "")


def split_family(family: str) -> tuple[str, list[str]]:
    """(adapter module, further modules to pre-import) of a server family."""
    module, _, extra = family.partition(_SEP)
    return module, [m for m in extra.split(",") if _NAME.fullmatch(m) and m.partition(".")[0] in KNOWN_FORK_SAFE]
