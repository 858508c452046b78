"""``feature_absence``: the share of the task's irrelevant (or shortcut) features the model leaves out."""

from __future__ import annotations

from srtui.results.metrics.declare import Example, Metric, ModelView, declare


def feature_absence(v: ModelView) -> float | None:
    from srtui.results.metrics.releases import feature_absence as absent

    return absent({str(s) for s in v.clean.free_symbols}, v.unwanted)


declare(
    Metric(
        name="feature_absence",
        releases=("srbench2022",),
        direction="higher",
        label="features not used",
        unit="share",
        doc="share of the irrelevant/shortcut features absent from the simplified, rounded model",
        default="srbench2022",
        compute=feature_absence,
        order=50,
        examples=(
            Example("x0 + 1", {"srbench2022.feature_absence": 1.0}, unwanted=("x1",)),
            Example("x0 + x1", {"feature_absence": 0.0}, unwanted=("x1",)),
        ),
    )
)
