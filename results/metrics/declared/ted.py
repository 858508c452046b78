"""``ted``: SRSD's tree edit distance to the truth, unnormalised (srtui.results.metrics.releases.srsd_op)."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, declare

declare(
    Metric(
        name="ted",
        releases=("srsd",),
        direction="lower",
        label="tree edit distance to truth",
        unit="edits",
        doc="SRSD's tree edit distance to the truth (numbers labelled `Const`, unit costs)",
        default=None,
        source="srsd",
        order=61,
        examples=(Example("x0*x1 + 1", {"srsd.ted": 2}, truth="x0*x1"),),
    )
)
