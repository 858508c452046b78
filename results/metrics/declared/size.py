"""``size``: nodes of the model as the release reads it, before any simplify."""

from __future__ import annotations

from results.metrics.declare import Example, Metric, ModelView, declare


def size(v: ModelView) -> int | None:
    """2.0's ``sympy_complexity`` (``pi`` -> 3.1415926535, 2021's rounding, no simplify); 2021's
    count of the model as ``clean_pred_model`` reads it (2022 reports no size)."""
    from results.metrics.releases import node_count, sympy_complexity

    if v.release == "srbench2025":
        return sympy_complexity(v.text, v.features, v.dialect)
    return node_count(v.raw)


declare(
    Metric(
        name="size",
        releases=("srbench2021", "srbench2025"),
        direction="lower",
        label="size (nodes)",
        unit="nodes",
        doc="nodes of the model as the release reads it, not simplified",
        default="srbench2025",
        compute=size,
        order=10,
        examples=(Example("x0*x1 + 2.5", {"srbench2021.size": 5, "srbench2025.size": 5, "size": 5}),),
    )
)
