"""Job specifications: what a job is, and the stable id that names it.

A job is one (suite, task, method + params, seed) under given limits on given data with a given
method version. ``job_id`` hashes all of it, so re-running the same spec is recognised (resume)
while any change - noise level (it changes the data fingerprint), params, limits, a method
upgrade - makes a new job instead of overwriting an old result.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from srtui.engine.errors import SrtuiError

#: every status a job record can have
STATUSES = (
    "pending",
    "running",
    "ok",
    "error",
    "timeout",
    "cpu_timeout",
    "oom",
    "crashed",
    "interrupted",
    "lost",
    "invalid_model",
    "disk",  # the job's folder grew past its disk limit (Limits.disk_mb)
)
TERMINAL = frozenset({"ok", "error", "timeout", "cpu_timeout", "oom", "crashed", "invalid_model", "disk"})
#: re-run only with --retry-failed
RETRY_ON_REQUEST = frozenset({"error", "timeout", "cpu_timeout", "oom", "crashed", "disk"})
#: re-run automatically (the job never got a fair chance), up to MAX_AUTO_ATTEMPTS attempts
RETRY_AUTOMATIC = frozenset({"interrupted", "lost"})
MAX_AUTO_ATTEMPTS = 3
#: the longest model string a job's result carries: far past the parser's limit (a longer one is
#: stored cut and marked too large, and no size is read from it)
MODEL_CAP = 100_000


class SpecError(SrtuiError, ValueError):
    """Invalid limits or spec fields; one line for the CLI."""


#: the job process's environment variable with its CPU seconds (the worker sets RLIMIT_CPU from it)
CPU_ENV = "SRTUI_CPU_S"
#: past the wall limit and the grace period, before a sealed job's watchdog kills
WATCHDOG_MARGIN_S = 5.0


#: what a job's folder may hold in total unless the suite's [limits] say otherwise (disk_mb)
DEFAULT_DISK_MB = 1024.0

#: ceilings of the limits: beyond them a value is a typo (or an attack), not a benchmark setting
LIMIT_CEILINGS = {
    "time_s": 30 * 86400.0,
    "cpu_s": 45 * 86400.0,
    "mem_mb": 16 * 2**20,
    "grace_s": 60.0,
    "disk_mb": 16 * 2**20,
}
CEILING_WHY = {
    "time_s": "30 days",
    "cpu_s": "45 days",
    "mem_mb": "16 TB",
    "disk_mb": "16 TB",
    "grace_s": "a job is killed at most a minute after its limit",
}


class FitBudget(float):
    """Seconds a fit may take (``Limits.fit_budget``, less the worker's start-up: ``after``).

    ``nominal`` is the job's budget before the worker's start-up was taken out. A method that
    sizes a fixed amount of work from its budget (gplearn's generation cap) reads ``nominal``,
    so the same job does the same work, and returns the same model, however long start-up took.
    """

    nominal: float

    def __new__(cls, seconds: float, nominal: float | None = None) -> FitBudget:
        obj = super().__new__(cls, seconds)
        obj.nominal = float(seconds if nominal is None else nominal)
        return obj

    def after(self, startup_s: float) -> FitBudget:
        """What is left once the worker's start-up (imports, data) took ``startup_s`` seconds:
        interpreter start-up counts against the wall limit, so on a loaded machine the method
        gets less than the nominal figure (never under a tenth of it)."""
        return FitBudget(max(0.1 * self.nominal, self.nominal - max(0.0, startup_s)), nominal=self.nominal)


@dataclass(frozen=True)
class Limits:
    """Hard limits of one job. Memory is of the whole process tree; CPU time is per process."""

    time_s: float = 3600.0
    mem_mb: float = 10_000.0
    cpu_s: float | None = None  # None: derived from time_s (see effective_cpu_s)
    grace_s: float = 5.0
    disk_mb: float = DEFAULT_DISK_MB  # what the job's folder may hold in total

    def __post_init__(self) -> None:
        for name in ("time_s", "mem_mb", "grace_s", "cpu_s", "disk_mb"):
            value = getattr(self, name)
            if name == "cpu_s" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise SpecError(f"limit {name} must be a positive number, got {value!r}")
            if value > LIMIT_CEILINGS[name]:
                raise SpecError(
                    f"limit {name} must be at most {LIMIT_CEILINGS[name]:g} ({CEILING_WHY[name]}), got {value:g}"
                )

    @property
    def effective_cpu_s(self) -> int:
        # One core per job, so CPU time tracks wall time; the margin keeps RLIMIT_CPU a backstop
        # for runaway threads rather than a second, earlier wall clock.
        return math.ceil(self.cpu_s if self.cpu_s is not None else self.time_s * 1.5 + 10)

    @property
    def fit_budget(self) -> FitBudget:
        """Seconds the method's fit is given: the wall limit minus room to start, predict, write
        (the worker takes its measured start-up out of it: ``FitBudget.after``)."""
        return FitBudget(max(self.time_s * 0.5, self.time_s - min(0.1 * self.time_s, 30.0) - 1.0))

    def crossing(self) -> tuple[dict[str, str], dict[str, float]]:
        """What the job's own process is told of these limits, derived here alone: its
        environment (``CPU_ENV``: the worker's RLIMIT_CPU) and the limits of job.json's ``seal``
        section (a sealed job's watchdog: wall time; its memory). The fit budget the worker
        reads from the spec itself (``JobSpec.to_dict``'s ``limits``, read back by ``from_dict``)."""
        env = {CPU_ENV: str(self.effective_cpu_s)}
        return env, {"wall_s": self.time_s + self.grace_s + WATCHDOG_MARGIN_S, "mem_mb": self.mem_mb}

    def over(self, **given: float | None) -> Limits:
        """These limits with the ``given`` ones (not None) over them, by the suite file's names."""
        unknown = set(given) - set(LIMIT_CEILINGS)
        if unknown:
            raise SpecError(f"unknown limit(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        # asdict's deep copy of five numbers, for every job id of a plan, cost more than the hash
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if out["disk_mb"] == DEFAULT_DISK_MB:  # the ids of jobs planned before disk_mb stay theirs
            del out["disk_mb"]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        known = {k: data[k] for k in LIMIT_CEILINGS if k in data}
        unknown = set(data) - set(known)
        if unknown:
            raise SpecError(f"unknown limit(s): {', '.join(sorted(unknown))}")
        return cls(**known)


@dataclass(frozen=True)
class JobSpec:
    """The one job carrier: planned by srtui.runs.planning, it travels as itself (pickled to the launcher's
    thread, a Dask worker) and crosses into the job's own process once, as ``job.json``."""

    suite: str
    task: str
    method: str  # registry name (or "srbench:/path" for an SRBench method folder)
    seed: int
    limits: Limits
    data_fingerprint: str
    method_version: str
    params: dict[str, Any] = field(default_factory=dict)
    #: what the run's protocol applied to this job (srtui.engine.protocols.applied): part of what the
    #: job is, so of its id; empty for a spec made outside a run (tests, the app's demo)
    protocol: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "suite": self.suite,
            "task": self.task,
            "method": self.method,
            "params": self.params,
            "seed": self.seed,
            "limits": self.limits.to_dict(),
            "data_fingerprint": self.data_fingerprint,
            "method_version": self.method_version,
        }
        if self.protocol:
            out["protocol"] = self.protocol
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobSpec:
        return cls(
            suite=data["suite"],
            task=data["task"],
            method=data["method"],
            params=dict(data.get("params") or {}),
            seed=int(data["seed"]),
            limits=Limits.from_dict(data["limits"]),
            data_fingerprint=data["data_fingerprint"],
            method_version=data["method_version"],
            protocol=dict(data.get("protocol") or {}),
        )

    @cached_property
    def job_id(self) -> str:
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]
