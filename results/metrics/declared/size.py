"""``size``: nodes of the model as the release reads it, before any simplify."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, ModelView, declare


def size(v: ModelView) -> int | None:
    """2.0's ``sympy_complexity`` (``pi`` -> 3.1415926535, 2021's rounding, no simplify); 2021's
    count of the model as ``clean_pred_model`` reads it (2022 reports no size). 2021's stored
    ``srbench2021.size`` is its evaluate_model.py's ``model_size`` where that is not this count (a
    method's ``complexity()``, the number of features: srtui.results.metrics.compute), with this count
    as ``srbench2021.size:corrected``."""
    from srtui.results.metrics.releases import node_count, sympy_complexity

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
        doc="nodes of the model as the release reads it, not simplified; 2021's is its evaluate_model.py's "
        "model_size where that is not the count (a method's complexity(), else the number of features for a "
        "method file without one), the count then stored as `:corrected`",
        default="srbench2025",
        compute=size,
        order=10,
        corrected=("srbench2021",),
        version=1,  # 2021's model_size: a method's complexity(), the number of features
        examples=(Example("x0*x1 + 2.5", {"srbench2021.size": 5, "srbench2025.size": 5, "size": 5}),),
    )
)
