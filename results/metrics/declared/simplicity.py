"""``simplicity``: -round(log5(nodes of the simplified model), 1), as 2022 and 2.0 compute it."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, ModelView, declare


def simplicity(v: ModelView) -> float | None:
    from srtui.results.metrics.releases import simplicity as of_size

    return of_size(v.clean_nodes)


declare(
    Metric(
        name="simplicity",
        releases=("srbench2022", "srbench2025"),
        direction="higher",
        label="simplicity (-log5 size, simplified)",
        unit="-log5 nodes",
        doc="-round(log5(nodes of the simplified model), 1) with numpy's rounding",
        default="srbench2022",
        compute=simplicity,
        order=30,
        examples=(
            Example("x0*x1 + 2.5", {"srbench2022.simplicity": -1.0, "srbench2025.simplicity": -1.0}),
            Example("x0", {"simplicity": 0.0}),
        ),
    )
)
