"""Recovery after a driver crash: the store's running jobs whose driver is dead become lost
(retried by this run), and the processes those jobs left behind are killed."""

from __future__ import annotations

from engine.backends.dask_worker import records_dir
from engine.process import tree
from engine.process.supervise import now_iso
from results.store.queries import driver_alive
from results.store.store import Store

__all__ = ["driver_alive", "recover"]


def recover(store: Store) -> tuple[int, int]:
    """(jobs marked lost, orphan processes killed)."""
    lost = 0
    for job in store.running_jobs():
        if driver_alive(job.get("driver")):
            continue
        if store.mark_lost(job["job_id"], job["attempt"], now_iso(), "the driver running this job died"):
            lost += 1
    store.end_dead_runs(driver_alive, now_iso())
    killed = tree.sweep_orphans(store.workspace_id + ":")
    # what the jobs of dead drivers left without the token (a cleared environment): their records
    killed += tree.sweep_records(store.workspace.cache / "pids")
    # and those of a local Dask cluster's workers, recorded in this host's folder for the workspace
    killed += tree.sweep_records(records_dir(store.workspace_id))
    return lost, len(set(killed))
