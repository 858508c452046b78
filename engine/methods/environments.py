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

    def built_as_declared(self) -> bool:
        """Ready, and built from this very spec: installing it again would change nothing."""
        try:
            with open(self.folder / READY, encoding="utf-8") as fh:
                return fh.read(64) == self.fingerprint() and self.python.exists()
        except OSError:
            return False

    def install_steps(self, wheelhouse: Path | None = None) -> list[list[str]]:
        """The commands that build the environment, in order (`srtui methods install` runs them):
        a venv of this Python's base interpreter, the pinned pip steps, the check.

        With a ``wheelhouse``: a wheelhouse this spec filled before (its marker holds the spec's
        fingerprint) installs offline (``--no-index``: no registry, seconds); otherwise each step
        first builds its wheels into it (``pip wheel``: a source build happens once), then installs
        from it alone, and the marker is written, so the folder can be copied to another machine."""
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
            if not filled:
                steps.append(self._wheelhouse_marker(py, wheelhouse))
        steps.append([py, "-P", "-c", f"{self.check}\nopen({marker!r}, 'w').write({self.fingerprint()!r})"])
        return steps

    def export_steps(self, wheelhouse: Path) -> list[list[str]]:
        """The commands that fill ``wheelhouse`` with the wheels of this (built) environment's
        steps, run by its own interpreter (pip's cache makes a wheel it built before quick)."""
        py = str(self.python)
        return [
            *[self._wheel_step(py, wheelhouse, step) for step in self.steps],
            self._wheelhouse_marker(py, wheelhouse),
        ]

    def wheelhouse_filled(self, wheelhouse: Path) -> bool:
        """Whether ``wheelhouse`` holds the wheels of this very spec (written by a build or an export)."""
        try:
            with open(wheelhouse / f"{self.name}{WHEELHOUSE_MARKER}", encoding="utf-8") as fh:
                return fh.read(64) == self.fingerprint()
        except OSError:
            return False

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
        return [py, "-P", "-c", f"open({marker!r}, 'w').write({self.fingerprint()!r})"]

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
