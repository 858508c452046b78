"""Recovery after a driver crash: the store's running jobs whose driver is dead become lost
(retried by this run), the processes those jobs left behind are killed, and their scratch
folders removed."""

from __future__ import annotations

import contextlib

from srtui.engine.backends.dask_worker import records_dir
from srtui.engine.process import tree
from srtui.engine.process.job_io import now_iso
from srtui.engine.untrusted import UntrustedFileError, remove_tree
from srtui.results.store.queries import driver_alive
from srtui.results.store.store import Store

__all__ = ["driver_alive", "recover"]


def recover(store: Store) -> tuple[int, int]:
    """(jobs marked lost, orphan processes killed)."""
    lost = 0
    scratch = []
    for job in store.running_jobs():
        if driver_alive(job.get("driver")):
            continue
        if store.mark_lost(job["job_id"], job["attempt"], now_iso(), "the driver running this job died"):
            lost += 1
            scratch.append(store.workspace.jobs_dir / f"{job['job_id']}-a{job['attempt']}")
    store.end_dead_runs(driver_alive, now_iso())
    killed = tree.sweep_orphans(store.workspace_id + ":")
    # what the jobs of dead drivers left without the token (a cleared environment): their records
    killed += tree.sweep_records(store.workspace.cache / "pids")
    # and those of a local Dask cluster's workers, recorded in this host's folder for the workspace
    killed += tree.sweep_records(records_dir(store.workspace_id, make=False))
    for folder in scratch:  # its processes are gone: what the lost attempt left goes too
        with contextlib.suppress(OSError, UntrustedFileError):
            remove_tree(folder)
    return lost, len(set(killed))
