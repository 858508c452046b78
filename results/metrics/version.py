"""The metrics' definition version, and which stored metrics are older: what `srtui score`,
`plot` and `report` check before they read metrics, without the metric code's sympy (issue 56)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from srtui.results.metrics import accuracy
from srtui.results.metrics.declare import version_offset

if TYPE_CHECKING:
    from srtui.results.store.store import Store

#: bump when a definition changes: `srtui rescore` then recomputes every job, not only new ones
#: (2: expression metrics per SRBench release, results/metrics/releases.py; 3: after a timed-out simplify,
#: 2022 and 2.0 keep the unsimplified model as their code does; 4: 2.0's verdict is its published
#: pipeline's (assess + collate, 2021's code), evaluation.py's a variant, both with 2.0's truth reading;
#: 5: protected operators are one node each in srtui's exact tree, which changes gplearn models'
#: diversity; 6: each deadline counts the metric worker's CPU time, with a wall-clock backstop
#: (srtui.engine.pool), so a model that ran out of a busy machine's wall clock gets its values); each
#: declared metric's own version (results/metrics/declared/, results/metrics/accuracy.py) is added to it
METRICS_VERSION = 6 + version_offset() + accuracy.version_offset()


def stale_metric_jobs(store: Store, suite: str | None = None) -> int:
    """Finished jobs whose stored metrics are of an older definition (`srtui rescore` updates them)."""
    q = "SELECT count(*) FROM metrics m JOIN jobs j USING (job_id) WHERE m.name = '_version' AND m.value < ?" + (
        " AND j.suite = ?" if suite else ""
    )
    return int(store.conn.execute(q, (METRICS_VERSION, suite) if suite else (METRICS_VERSION,)).fetchone()[0])
