"""Where each searched method's grid comes from, and the grids only running the method's file can
read (SRBench 2021's ``gplearn.py`` builds ``hyper_params`` in a loop).

A method file's literal ``hyper_params`` is read without running it
(``srtui.engine.methods.srbench_dir.literal_settings``). One it builds is read by running the file in a
job: an ordinary engine job (``srtui.engine.process.supervise.run_job``: the same sandbox, limits,
launcher and environment as the method's fits) whose worker imports the file and reports
``hyper_params`` instead of fitting; what comes back is untrusted JSON, read within the job
result's caps and checked here (``checked_grid``). A grid that cannot be read is an error, never
an untuned run. A grid read is kept by the method's fingerprint (``srtui.runs.grid_cache``): the next
plan of the same code in the same interpreter, ``--dry-run`` included, runs no job for it.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import JobSpec, Limits

if TYPE_CHECKING:
    from srtui.engine.methods.base import Method

#: the most configurations a grid read by a job may have, and the longest parameter name
MAX_CONFIGS = 100_000
MAX_NAME = 200
#: the wall-clock limit of a grid-reading job at most (it imports a file; it fits nothing)
MAX_READ_S = 300.0
#: ``SRBenchMethod.grid_from`` of a grid a job read for an earlier plan (``srtui.runs.grid_cache``)
GRID_CACHED = "cached"


class GridError(SrtuiError):
    """A method's grid could not be read; one line for the CLI."""


def origin(name: str, method: Method, overridden: bool) -> str:
    """Where ``name``'s grid comes from, in a few words (the plan prints it)."""
    from srtui.engine.methods.srbench_dir import GRID_BY_JOB, GRID_LITERAL, GRID_NONE, SRBenchMethod

    if overridden:
        return "the suite's [tuning.grids]"
    if not isinstance(method, SRBenchMethod):
        return "srtui's adapter" if method.hyper_params else "none (srtui's adapter has no grid)"
    file = method.regressor_py.name
    return {
        GRID_LITERAL: f"the literal hyper_params of {file}",
        GRID_BY_JOB: f"read by running {file} in a job",
        GRID_CACHED: f"read by running {file} in a job, kept from an earlier plan",
        GRID_NONE: f"none ({file} has no hyper_params)",
    }[method.grid_from]


def read_grids(
    methods: Mapping[str, Method],
    refs: Mapping[str, str],
    limits: Limits,
    pythons: Mapping[str, dict[str, str]],
    skip: set[str],
) -> None:
    """Set ``hyper_params`` of each method file whose grid only running it can read (not those
    in ``skip``: the suite gives their grids); raises GridError when a job cannot read one."""
    from srtui.engine.methods.srbench_dir import GRID_BY_JOB, SRBenchMethod
    from srtui.runs import grid_cache

    for name, method in methods.items():
        if name in skip or not isinstance(method, SRBenchMethod) or method.grid_from != GRID_BY_JOB:
            continue
        file = f"method {name} ({method.regressor_py.name})"
        key = grid_cache.fingerprint(method, pythons.get(name, {}))
        kept = _kept(grid_cache.cached(key), file)
        if kept is not None:  # read by an earlier plan from the same code and interpreter
            method.hyper_params = kept  # type: ignore[misc]
            method.grid_from = GRID_CACHED
            continue
        method.hyper_params = _read_by_job(name, method, refs[name], limits, pythons.get(name, {}))  # type: ignore[misc]
        grid_cache.keep(key, method.hyper_params)


def _read_by_job(name: str, method: Method, ref: str, limits: Limits, python: dict[str, str]) -> list[dict[str, Any]]:
    import numpy as np

    from srtui.engine.methods.srbench_dir import READ_GRID_KEY
    from srtui.engine.outcome_check import TaskArrays
    from srtui.engine.process.job_io import JobPayload
    from srtui.engine.process.supervise import run_job
    from srtui.runs.data import write_arrays

    file = getattr(method, "regressor_py", Path(name)).name
    capped = limits.over(time_s=min(limits.time_s, MAX_READ_S))
    with tempfile.TemporaryDirectory(prefix="srtui-grid-") as tmp:
        data = Path(tmp) / "data.npz"
        x = np.arange(8.0).reshape(4, 2)
        write_arrays(data, TaskArrays(x, x[:, 0], x[:2], x[:2, 0], np.arange(4), np.arange(2), ["x1", "x2"]))
        spec = JobSpec("grid", "grid", name, 0, capped, "grid", method.version(), {READ_GRID_KEY: True})
        payload = JobPayload(
            spec,
            1,
            f"srtui-grid-{uuid.uuid4().hex[:8]}",
            data_path=str(data),
            method_ref=ref,
            python=python.get("python"),
            python_path=python.get("python_path"),
        )
        outcome = run_job(payload, Path(tmp) / "job")
    if outcome.status != "ok":
        from srtui.engine.textsafe import visible

        why = visible(f"{outcome.status}: {outcome.error or outcome.limit_detail or ''}", one_line=True)[:300]
        raise GridError(f"method {name}: its hyper_params could not be read by running {file} in a job ({why})")
    return checked_grid(outcome.notes.get("hyper_params"), f"method {name} ({file})")


def _kept(value: Any, where: str) -> list[dict[str, Any]] | None:
    try:
        return None if value is None else checked_grid(value, where)
    except GridError:  # not what a job reported: read it again
        return None


def checked_grid(value: Any, where: str) -> list[dict[str, Any]]:
    """A grid a job reported, as configurations of JSON scalars (or lists of them), or GridError."""
    if not isinstance(value, list) or len(value) > MAX_CONFIGS:
        raise GridError(f"{where}: its hyper_params did not come back as a list of at most {MAX_CONFIGS} tables")
    for config in value:
        if not isinstance(config, dict) or not all(
            isinstance(k, str) and 0 < len(k) <= MAX_NAME and _plain(v, 2) for k, v in config.items()
        ):
            raise GridError(f"{where}: a configuration of its hyper_params is not a table of plain values")
    return value


def _plain(value: Any, depth: int) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return not isinstance(value, str) or len(value) <= 10_000
    return depth > 0 and isinstance(value, list) and len(value) <= 1000 and all(_plain(v, depth - 1) for v in value)
