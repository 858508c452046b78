"""A method in its own Python environment: a virtual environment built from pinned requirements,
its jobs' workers started with that environment's interpreter.

A method that declares an ``Environment`` is installed by ``srtui methods install NAME``: a venv
under ``$SRTUI_ENVS`` (else ``$XDG_DATA_HOME/srtui/envs``, else ``~/.local/share/srtui/envs``),
each pip step run with the venv's own interpreter, then the ``check`` code, which marks the
environment ready. Its workers (exec'd, or forked from a fork server that runs the same
interpreter) import only srtui's ``engine`` package, linked into the environment's own path
entry, and the method's libraries from the environment: nothing from the driver's site-packages. This is how SRBench
2021's baselines run on the scikit-learn of 2021 (SRBench's issue #151 asks for this).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srtui.engine import source
from srtui.engine.errors import SrtuiError

READY = ".srtui-ready"
#: the marker of an environment's contract layer (``Environment.contract``): its fingerprint
CONTRACT_READY = ".srtui-contract"
ENGINE_PATH = "srtui-path"  # the one entry of the worker's PYTHONPATH: a link to the srtui package
#: NAME + this, in a wheelhouse: the fingerprint of the spec whose wheels it holds
WHEELHOUSE_MARKER = ".srtui-wheelhouse"


class MethodEnvironmentError(SrtuiError):
    """An environment that is not installed or cannot be used; one line for the CLI."""


@dataclass(frozen=True)
class Environment:
    name: str  # its folder under the environments root
    steps: tuple[tuple[str, ...], ...]  # arguments of `python -m pip install`, one step each
    check: str  # Python run by the environment's interpreter once installed; fails if unusable
    #: what SRBench's method contracts hand a method besides its own packages (pandas: a folder's
    #: DataFrame), in the era's version. A layer of its own, installed after the steps with a
    #: marker of its own: adding it to an environment built before extends that environment in
    #: seconds and never rebuilds the method's packages (scikit-learn 0.24.1 compiles for minutes)
    contract: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        return envs_root() / self.name

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"

    def ready(self) -> bool:
        return (self.folder / READY).is_file() and self.python.exists()

    def fingerprint(self) -> str:
        """What the environment is built from (its pip steps, its check, this Python's version):
        the ready marker holds it, so a rebuild is needed only when the spec changed."""
        import hashlib
        import json
        import sys

        spec = json.dumps([list(map(list, self.steps)), self.check, list(sys.version_info[:2])])
        return hashlib.sha256(spec.encode()).hexdigest()[:16]

    def contract_fingerprint(self) -> str:
        """What the contract layer is built from (its requirements, this Python's version)."""
        import hashlib
        import json
        import sys

        return hashlib.sha256(json.dumps([list(self.contract), list(sys.version_info[:2])]).encode()).hexdigest()[:16]

    def contract_ready(self) -> bool:
        """The contract layer is in (or the spec has none: its steps install what it needs)."""
        return not self.contract or _marker(self.folder / CONTRACT_READY) == self.contract_fingerprint()

    def built_as_declared(self) -> bool:
        """Ready, and built from this very spec: installing it again would change nothing."""
        return self.base_as_declared() and self.contract_ready()

    def base_as_declared(self) -> bool:
        """The method's steps are built from this very spec (the contract layer aside)."""
        return _marker(self.folder / READY) == self.fingerprint() and self.python.exists()

    def install_steps(self, wheelhouse: Path | None = None) -> list[list[str]]:
        """The commands that build the environment, in order (`srtui methods install` runs them):
        a venv of this Python's base interpreter, the pinned pip steps, the check.

        With a ``wheelhouse``: a wheelhouse this spec filled before (its marker holds the spec's
        fingerprint) installs offline (``--no-index``: no registry, seconds); otherwise each step
        first builds its wheels into it (``pip wheel``: a source build happens once), then installs
        from it alone, and the marker is written, so the folder can be copied to another machine.
        The contract layer's steps come last (``contract_steps``)."""
        import sys

        py = str(self.python)
        marker = str(self.folder / READY)
        steps = [[sys.executable, "-P", "-m", "venv", "--clear", str(self.folder)]]
        if wheelhouse is None:
            steps += [[*self._pip(), *step] for step in self.steps]
        else:
            filled = self.wheelhouse_filled(wheelhouse)
            for step in self.steps:
                if not filled:
                    steps.append(self._wheel_step(py, wheelhouse, step))
                steps.append([*self._pip(), "--no-index", "--find-links", str(wheelhouse), *step])
            if not filled and not self.contract:
                steps.append(self._wheelhouse_marker(py, wheelhouse))
        steps.append([py, "-P", "-c", f"{self.check}\nopen({marker!r}, 'w').write({self.fingerprint()!r})"])
        return steps + self.contract_steps(wheelhouse)

    def extends(self, force: bool = False) -> bool:
        """Whether building it means adding the contract layer alone: the rest is built from this
        very spec (``srtui env create`` and ``srtui methods install`` then run ``contract_steps``)."""
        return (
            not force
            and bool(self.contract)
            and self.base_as_declared()
            and not self.contract_ready()
            and (self.folder / "pyvenv.cfg").is_file()  # pip installs into it, never into another Python
        )

    def contract_steps(self, wheelhouse: Path | None = None) -> list[list[str]]:
        """The commands that install the contract layer into the built environment, then its
        marker (after an import of each of its modules); none when the spec has no layer.
        ``srtui env create`` runs only these when the rest is built from this spec already."""
        if not self.contract:
            return []
        py = str(self.python)
        steps = []
        if wheelhouse is None:
            steps.append([*self._pip(), *self.contract])
        else:
            filled = self.wheelhouse_filled(wheelhouse)  # (before any step runs, as install_steps reads it)
            if not filled:
                steps.append(self._wheel_step(py, wheelhouse, self.contract))
            steps.append([*self._pip(), "--no-index", "--find-links", str(wheelhouse), *self.contract])
            if not filled:
                steps.append(self._wheelhouse_marker(py, wheelhouse))
        modules = ", ".join(sorted({_module_of(req) for req in self.contract}))
        marker = str(self.folder / CONTRACT_READY)
        steps.append(
            [py, "-P", "-c", f"import {modules}\nopen({marker!r}, 'w').write({self.contract_fingerprint()!r})"]
        )
        return steps

    def export_steps(self, wheelhouse: Path) -> list[list[str]]:
        """The commands that fill ``wheelhouse`` with the wheels of this (built) environment's
        steps, run by its own interpreter (pip's cache makes a wheel it built before quick)."""
        py = str(self.python)
        layer = [self.contract] if self.contract else []
        return [
            *[self._wheel_step(py, wheelhouse, step) for step in (*self.steps, *layer)],
            self._wheelhouse_marker(py, wheelhouse),
        ]

    def wheelhouse_filled(self, wheelhouse: Path) -> bool:
        """Whether ``wheelhouse`` holds the wheels of this very spec (written by a build or an export)."""
        return _marker(wheelhouse / f"{self.name}{WHEELHOUSE_MARKER}") == self.wheelhouse_fingerprint()

    def wheelhouse_fingerprint(self) -> str:
        """The spec's fingerprint, its contract layer's too when it has one."""
        return self.fingerprint() + (f"+{self.contract_fingerprint()}" if self.contract else "")

    def _pip(self) -> list[str]:
        return [str(self.python), "-P", "-m", "pip", "install", "--disable-pip-version-check"]

    @staticmethod
    def _wheel_step(py: str, wheelhouse: Path, step: tuple[str, ...]) -> list[str]:
        where = str(wheelhouse)
        return [
            py,
            "-P",
            "-m",
            "pip",
            "wheel",
            "--disable-pip-version-check",
            "--wheel-dir",
            where,
            "--find-links",
            where,
            *step,
        ]

    def _wheelhouse_marker(self, py: str, wheelhouse: Path) -> list[str]:
        marker = str(wheelhouse / f"{self.name}{WHEELHOUSE_MARKER}")
        return [py, "-P", "-c", f"open({marker!r}, 'w').write({self.wheelhouse_fingerprint()!r})"]

    def worker_path(self) -> Path:
        """The PYTHONPATH entry of this environment's workers: a folder holding only a link to the
        ``srtui`` package that runs (made again if srtui moved)."""
        folder = self.folder / ENGINE_PATH
        link = folder / "srtui"
        target = Path(source.package_folder())
        if not (link.is_symlink() and Path(os.readlink(link)) == target):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "engine").unlink(missing_ok=True)  # the link an older srtui made
            tmp = folder / "srtui.tmp"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(target, target_is_directory=True)
            tmp.replace(link)
        return folder

    def require(self, method: str) -> Path:
        """The interpreter, or a one-line refusal saying how to install the environment."""
        if not self.ready():
            from srtui.engine.methods import registry

            how = f"srtui methods install {method}" if method in registry.BUILTIN else f"srtui env create {self.name}"
            raise MethodEnvironmentError(
                f"method {method} runs in its own Python environment, not installed at {self.folder}: {how}"
            )
        return self.python


@dataclass(frozen=True)
class EnvSpec:
    """A named environment as ``srtui env`` lists and creates it (engine/methods/env_specs.py)."""

    environment: Environment
    source: str  # whose environment it reproduces
    #: what the source left unpinned, each with the version pinned here
    unpinned: tuple[str, ...] = ()
    #: what the source pins, as it writes it (its environment.yml, requirements.txt, install.sh)
    pinned_in_source: tuple[str, ...] = ()


def _marker(path: Path) -> str | None:
    """What a marker file holds (its first 64 characters), None if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(64)
    except OSError:
        return None


def _module_of(requirement: str) -> str:
    """The module a ``name==version`` requirement installs (the contract layers' are pandas)."""
    import re

    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def envs_root() -> Path:
    env = os.environ.get("SRTUI_ENVS")
    if env:
        return Path(env)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "srtui" / "envs"


def interpreters(methods: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Method name -> ``{"python": ..., "python_path": ...}`` (JobPayload fields) for each method
    that has its own environment; one that is not installed is refused in one line."""
    out = {}
    for name, method in methods.items():
        env = getattr(method, "environment", None)
        if env is not None:
            out[name] = {"python": str(env.require(name)), "python_path": str(env.worker_path())}
    return out
