"""Backends run planned jobs: the same job function (srtui.engine.process.supervise.run_job) everywhere.

``local``: slot threads on this machine (srtui.engine.backends.local.LocalBackend).
``dask``: Dask distributed futures (srtui.engine.backends.dask.DaskBackend), loaded only when asked for.
Both implement srtui.engine.backends.base.Backend; this module picks and makes one.
"""

from __future__ import annotations

from pathlib import Path

from srtui.engine.backends.base import Backend, BackendError, BackendOptions

KINDS = ("local", "dask")


def backend_kind(
    backend: str | None, dask_scheduler: str | None, cluster: str | None, cluster_config: Path | None
) -> str:
    """--backend, given or implied: a cluster option means dask; with --backend local it is an error."""
    wants_dask = bool(dask_scheduler or cluster or cluster_config)
    if backend is None:
        return "dask" if wants_dask else "local"
    if backend not in KINDS:
        raise BackendError(f"unknown backend {backend!r} (choose {' or '.join(KINDS)})")
    if backend == "local" and wants_dask:
        raise BackendError(
            "--dask-scheduler, --cluster and --cluster-config need --backend dask (or leave --backend out)"
        )
    return backend


def make_backend(options: BackendOptions, scratch_root: Path) -> Backend:
    if options.kind == "local":
        from srtui.engine.backends.local import LocalBackend

        return LocalBackend(options.n_slots, scratch_root)
    if options.kind == "dask":
        try:
            from srtui.engine.backends.dask import DaskBackend
        except ImportError as exc:
            raise BackendError(f"the dask backend needs dask[distributed]: {exc}") from None
        return DaskBackend(options, scratch_root)
    raise BackendError(f"unknown backend {options.kind!r} (choose {' or '.join(KINDS)})")
