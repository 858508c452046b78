"""``ted_norm``: SRSD's normalised tree edit distance to the truth (srtui.results.metrics.releases.srsd_op)."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, declare

declare(
    Metric(
        name="ted_norm",
        releases=("srsd",),
        direction="lower",
        label="tree edit distance to truth (normalised)",
        unit="share of truth's nodes",
        doc="min(d, n)/n: SRSD's edit distance d to the truth, n the truth's nodes",
        default="srsd",
        source="srsd",
        order=60,
        examples=(Example("x0*x1 + 1", {"srsd.ted_norm": 2 / 3, "ted_norm": 2 / 3}, truth="x0*x1"),),
    )
)
