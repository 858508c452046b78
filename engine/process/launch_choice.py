"""Which launcher each method's jobs get (``exec``, or ``fork`` of a server): decided while a run is
planned, ``--dry-run`` included, so it lives apart from the servers themselves
(``srtui.engine.process.launch``: psutil and the fork server, loaded when jobs start; #56)."""

from __future__ import annotations

from typing import Any

from srtui.engine.errors import SrtuiError

LAUNCHERS = ("auto", "fork", "exec")
DEFAULT_LAUNCHER = "auto"


class LauncherError(SrtuiError, ValueError):
    """An unknown launcher name; one line for the CLI."""


def check_launcher(name: str) -> str:
    if name not in LAUNCHERS:
        raise LauncherError(f"unknown launcher {name!r} (choose {', '.join(LAUNCHERS)})")
    return name


def choose(requested: str, fork_safe: bool) -> str:
    """The launcher a job of a method gets: ``auto`` follows the method's declaration."""
    if check_launcher(requested) == "auto":
        return "fork" if fork_safe else "exec"
    return requested


def choose_for_method(
    requested: str, methods: dict[str, Any], folders_fork_safe: bool | None, notes: list[str]
) -> dict[str, str]:
    """Method name -> launcher for a run; a note for each method forked against its declaration
    and for each folder exec'd by ``auto`` (why, in one line). ``folders_fork_safe``: the suite's
    override for folders; None: each folder's imports decide (srtui.engine.process.fork_plan)."""
    from srtui.engine.methods.srbench_dir import SRBenchMethod
    from srtui.engine.process.fork_plan import for_folder

    out = {}
    for name, method in methods.items():
        why_not = None
        if not isinstance(method, SRBenchMethod):
            safe = bool(method.fork_safe)
        elif folders_fork_safe is not None:
            safe = folders_fork_safe
        else:
            why_not = for_folder(str(method.regressor_py if method.single else method.path)).why_not
            safe = why_not is None
        out[name] = choose(requested, safe)
        if out[name] == "fork" and not safe:
            notes.append(f"--launcher fork: {name} is not declared fork-safe; its jobs are forked anyway")
        elif why_not is not None and requested == "auto":
            notes.append(f"{name} runs exec'd: {why_not}")
    return out
