"""Backends run planned jobs: the same job function (engine.launcher.run_job) everywhere.

``local``: slot threads on this machine (engine.backends.local.LocalBackend).
``dask``: Dask distributed futures (engine.backends.dask), loaded only when asked for.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path


class BackendError(ValueError):
    """A backend that cannot be set up; one line for the CLI."""


@dataclass
class BackendOptions:
    kind: str = "local"
    n_slots: int = 1
    scheduler: str | None = None  # dask: tcp://HOST:8786 of a running scheduler
    cluster: str | None = None  # dask: local | ssh | slurm
    cluster_config: Path | None = None  # dask: TOML with the cluster's settings
    cancel: threading.Event | None = None  # set by Ctrl-C: a cluster start in progress gives up
    log_path: Path | None = None  # dask: where Dask's own log lines go (not the terminal)


def backend_kind(backend: str | None, scheduler: str | None, cluster: str | None, cluster_config: Path | None) -> str:
    """--backend, given or implied: a cluster option means dask; with --backend local it is an error."""
    wants_dask = bool(scheduler or cluster or cluster_config)
    if backend is None:
        return "dask" if wants_dask else "local"
    if backend == "local" and wants_dask:
        raise BackendError("--scheduler, --cluster and --cluster-config need --backend dask (or leave --backend out)")
    return backend


def make_backend(options: BackendOptions, scratch_root: Path):
    if options.kind == "local":
        from engine.backends.local import LocalBackend

        return LocalBackend(options.n_slots, scratch_root)
    if options.kind == "dask":
        try:
            from engine.backends.dask import DaskBackend
        except ImportError as exc:
            raise BackendError(f"the dask backend needs dask[distributed]: {exc}") from None
        return DaskBackend(options, scratch_root)
    raise BackendError(f"unknown backend {options.kind!r} (choose local or dask)")
