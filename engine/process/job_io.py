"""A job as data on both sides of ``run_job``: what it is handed (``JobPayload``) and what it
returns (``JobOutcome``), with the driver's timestamps (``now_iso``).

Plain picklable records, shared by the backends (a payload may travel to a Dask worker and its
outcome back), the store's columns and the run's sink; srtui.engine.process.supervise makes the
outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from srtui.engine.spec import JobSpec

STDERR_TAIL_CHARS = 2000


@dataclass
class JobPayload:
    """Everything a job needs (picklable: it may travel to a Dask worker)."""

    spec: JobSpec
    attempt: int
    workspace_token: str  # prefix of the job token: sweeps find this workspace's processes
    data_path: str | None = None  # local backend: the npz in the workspace cache
    data_bytes: bytes | None = None  # remote backends: the npz itself
    method_ref: str | None = None  # how to load the method if not by spec name (srbench folders)
    extra_env: dict[str, str] = field(default_factory=dict)
    launcher: str = "exec"  # "fork": forked by a pre-imported server (srtui.engine.process.launch); same limits
    #: the method's own environment's interpreter and its worker path (srtui.engine.methods.environments)
    python: str | None = None
    python_path: str | None = None
    allow_network: bool = False  # --allow-network METHOD: the job keeps the host's network

    @property
    def job_id(self) -> str:
        return self.spec.job_id


@dataclass
class JobOutcome:
    job_id: str
    attempt: int
    status: str
    host: str
    started_at: str
    ended_at: str
    wall_s: float
    cpu_s: float | None = None
    returncode: int | None = None
    signal: int | None = None
    peak_rss_mb: float | None = None
    limit_detail: str | None = None
    error: str | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    model: str | None = None
    dialect: str = "python"
    pareto: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    fit_s: float | None = (
        None  # the method's load, fit and predictions, timed by the driver (srtui.engine.process.measure)
    )
    energy_j: float | None = None  # joules over fit_s, measured by the driver (srtui.engine.process.energy)
    energy_method: str | None = None  # "rapl" or "estimate"
    train_pred: np.ndarray | None = None
    test_pred: np.ndarray | None = None
    leftover_pids: list[int] = field(default_factory=list)

    @property
    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL_CHARS * 2 :].decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
