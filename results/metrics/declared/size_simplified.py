"""``size_simplified``: nodes of the model after the release's rounding and simplify."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, ModelView, declare


def size_simplified(v: ModelView) -> int:
    return v.clean_nodes


declare(
    Metric(
        name="size_simplified",
        releases=("srbench2021", "srbench2022"),
        direction="lower",
        label="size after simplify (nodes)",
        unit="nodes",
        doc="nodes after the release's float rounding and simplify",
        default="srbench2022",
        compute=size_simplified,
        order=20,
        examples=(
            Example(
                "x0 + x0 + 0.00001",
                {"srbench2021.size_simplified": 3, "srbench2022.size_simplified": 3, "size_simplified": 3},
            ),
        ),
    )
)
