"""Method registry: every built-in method is a ``Method`` subclass declared with ``@builtin``
(srtui.engine.methods.base) in a module of this package, found by walking the package's source.

Listing methods must not import their packages (pyoperon, jax, ...), nor their adapters' modules:
the driver stays light and a broken optional install cannot take the CLI down. So the
declarations are read from each module's source (the decorator's literal flags and the class's
literal ``name``: 1.5 ms for the package), once per process; ``load`` imports the one module it needs, and
``tests/e2e/test_method_contracts.py`` checks that importing every module declares exactly what
was read.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srtui.engine.errors import SrtuiError, did_you_mean
from srtui.engine.methods.base import Method
from srtui.engine.names import quoted


class MethodError(SrtuiError, ValueError):
    """An unknown or unloadable method; the message is one line for the CLI."""


@dataclass(frozen=True)
class Declared:
    """One ``@builtin`` class as its module's source declares it."""

    name: str
    target: str  # module:Class
    optional: bool = False  # not installed with srtui (`srtui methods install NAME`)
    default_sr: bool = False  # an SR method installed with srtui: the default SR set of suites


#: a declaration: the decorator's call, the class, and the class body up to the next top-level line
_DECLARATION = re.compile(r"^@builtin(\([^()]*\))\n(?:@.*\n)*class (\w+)\b.*?:\n((?:[ \t]+.*\n|\n)*)", re.M)
_NAME = re.compile(r"^    name = (\"[^\"\n]*\"|'[^'\n]*')", re.M)


def _declared_in(module: str, path: Path) -> list[Declared]:
    """The ``@builtin`` classes of one module, read from its source (never imported): the
    decorator's literal flags and the class's literal ``name``. A full parse of every module
    took 50 ms of each command's start; this reads only the declarations' lines."""
    text = path.read_text(encoding="utf-8")
    found = []
    for call, cls, body in _DECLARATION.findall(text):
        flags = ast.parse(f"f{call}", mode="eval").body
        if not isinstance(flags, ast.Call):
            raise MethodError(f"{path.name}: @builtin{call} of {cls} is not a call with literal flags")
        named = _NAME.search(body)
        if named is None:
            raise MethodError(f"{path.name}: @builtin class {cls} sets no literal name = '...'")
        kwargs = {k.arg: ast.literal_eval(k.value) for k in flags.keywords if k.arg}
        found.append(Declared(ast.literal_eval(named.group(1)), f"{module}:{cls}", **kwargs))
    return found


#: the order `srtui methods list` and the docs show: probes, baselines, the default SR, the optional
def _rank(d: Declared) -> int:
    return 0 if d.name.startswith("probe-") else 3 if d.optional else 2 if d.default_sr else 1


@functools.lru_cache(maxsize=1)
def declared() -> tuple[Declared, ...]:
    """Every built-in method, found by walking this package (its modules' source, not imports)."""
    package = Path(__file__).parent
    found: list[Declared] = []
    for info in pkgutil.iter_modules([str(package)]):
        if not info.ispkg:
            found += _declared_in(f"{__package__}.{info.name}", package / f"{info.name}.py")
    seen: set[str] = set()
    for d in found:
        if d.name in seen:
            raise MethodError(f"method {d.name!r} is declared twice")
        seen.add(d.name)
    return tuple(sorted(found, key=_rank))  # stable: each module's order, modules by name


def __getattr__(attr: str) -> Any:
    """``BUILTIN`` (name -> module:Class), ``OPTIONAL`` and ``DEFAULT_SR``: made from the declarations."""
    if attr == "BUILTIN":
        return {d.name: d.target for d in declared()}
    if attr == "OPTIONAL":
        return tuple(d.name for d in declared() if d.optional)
    if attr == "DEFAULT_SR":
        return tuple(d.name for d in declared() if d.default_sr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


#: prefix of methods loaded from an SRBench method folder (``--method-dir``)
SRBENCH_PREFIX = "srbench:"


def names(include_probes: bool = False) -> list[str]:
    return [d.name for d in declared() if include_probes or not d.name.startswith("probe-")]


def load(name: str) -> Method:
    """Instantiate the adapter of ``name`` (imports its module)."""
    if name.startswith(SRBENCH_PREFIX):
        # one adapter for every folder
        from srtui.engine.methods.srbench_dir import SRBenchMethod

        return SRBenchMethod(Path(name[len(SRBENCH_PREFIX) :]))
    target = next((d.target for d in declared() if d.name == name), None)
    if target is None:
        raise MethodError(f"unknown method {quoted(name)} (see `srtui methods list`){did_you_mean(name, names())}")
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MethodError(f"method {name!r} cannot be loaded: {exc}") from None
    method: Method = getattr(module, cls_name)()
    return method
