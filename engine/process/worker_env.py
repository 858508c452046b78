"""The environment every worker starts with: an allow-list of the driver's, one thread per
library, srtui first on the path. A module of its own so that the launchers and the supervisor
both read it without importing each other."""

from __future__ import annotations

import os

from srtui.engine import source
from srtui.engine.process import tree

#: every threading library's knob, set to 1 (the job's one core: its CPU limit is the slot's)
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "JULIA_NUM_THREADS",
    "BLIS_NUM_THREADS",
)


#: what a job's environment takes from the driver's (by name, or by a prefix ending in "_"):
#: nothing else (no tokens, no paths of the workspace, no terminal)
ENV_ALLOWED = (
    "PATH", "LANG", "LANGUAGE", "TZ", "LC_", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "JULIA_",
    "SRTUI_CPU_TDP_W", "SRTUI_PROBE_PIDFILE",
)  # fmt: skip


def allowed_env(name: str) -> bool:
    return any(name == a or (a.endswith("_") and name.startswith(a)) for a in ENV_ALLOWED)


def worker_environment(extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every worker of this driver starts with (the job adds its token, CPU
    limit and core), from an allow-list of the driver's (``ENV_ALLOWED``): one thread per
    library, unbuffered output, this engine first on the path, a HOME in its private /tmp."""
    env = {k: v for k, v in os.environ.items() if allowed_env(k)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = "/tmp"
    env.update({var: "1" for var in THREAD_VARS})
    env.update(extra_env or {})
    env.update(
        {
            tree.DRIVER_ENV: tree.driver_identity(),
            "SRTUI_PARENT_PID": str(os.getpid()),
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(p for p in [source.import_root(), env.get("PYTHONPATH", "")] if p),
        }
    )
    return env
