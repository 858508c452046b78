"""``symbolic_solution``: the release's published verdict, model vs ground truth (the checks:
srtui.results.metrics.solutions)."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, declare

declare(
    Metric(
        name="symbolic_solution",
        releases=("srbench2021", "srbench2022", "srbench2025"),
        direction="higher",
        label="symbolic solution",
        unit="0/1",
        doc="1 when the release's own check finds the model equal to the truth up to a constant",
        default="srbench2022",
        source="solution",
        order=40,
        examples=(
            Example(
                "x1*x0",
                {"srbench2021.symbolic_solution": 1, "srbench2022.symbolic_solution": 1, "symbolic_solution": 1},
                truth="x0*x1",
            ),
            Example("x0 + x1", {"srbench2025.symbolic_solution": 0, "symbolic_solution": 0}, truth="x0*x1"),
        ),
    )
)
