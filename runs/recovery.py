"""Recovery after a driver crash: the store's running jobs whose driver is dead become lost
(retried by this run), and the processes those jobs left behind are killed."""

from __future__ import annotations

from engine import proctree
from engine.launcher import now_iso
from results.store import Store


def driver_alive(driver: str | None) -> bool:
    """Is the driver process that claimed a job (its proctree identity) still running?"""
    return bool(driver) and proctree.identity_alive(driver or "")


def recover(store: Store) -> tuple[int, int]:
    """(jobs marked lost, orphan processes killed)."""
    lost = 0
    for job in store.running_jobs():
        if driver_alive(job.get("driver")):
            continue
        if store.mark_lost(job["job_id"], job["attempt"], now_iso(), "the driver running this job died"):
            lost += 1
    store.end_dead_runs(driver_alive, now_iso())
    killed = proctree.sweep_orphans(store.workspace_id + ":")
    return lost, len(killed)
