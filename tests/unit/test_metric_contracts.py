"""Every declared expression metric (results/metrics/declared/) against its own declaration: its
golden values through the real batch (pool workers, cache), its ranking direction and its stored
names (the docs table: tests/unit/test_registries.py). Parametrised over the registry: a new
metric is tested with no edit here."""

from __future__ import annotations

import pytest

from srtui.results.metrics import declare
from srtui.results.metrics.expr_batch import ExprCache, ModelItem, expression_metrics

METRICS = declare.metrics()
IDS = [m.name for m in METRICS]


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_golden_values_through_the_batch(metric: declare.Metric) -> None:
    assert metric.examples, f"{metric.name} declares no golden example"
    items = [
        ModelItem(e.model, e.features, "python", e.truth, e.unwanted, r2_test=0.99 if e.truth else None)
        for e in metric.examples
    ]
    out, _ = expression_metrics(items, ExprCache(), workers=1, timeout=60)
    for example, got in zip(metric.examples, out, strict=True):
        for name, value in example.values.items():
            assert got.get(name) == pytest.approx(value), f"{example.model}: {name}"


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_every_release_that_stores_it_has_a_golden_value(metric: declare.Metric) -> None:
    named = {n for e in metric.examples for n in e.values}
    assert {f"{r}.{metric.name}" for r in metric.releases} <= named
    assert metric.default is None or metric.default in metric.releases
    for release in metric.releases:
        assert metric.name in declare.stored(release)
        assert f"{release}.{metric.name}" in declare.stored_names()


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_rankings_follow_the_declared_direction(metric: declare.Metric) -> None:
    from srtui.results.scoring.stats import higher_better

    up = metric.direction == "higher"
    names = [metric.name, *(f"{r}.{metric.name}" for r in metric.releases)]
    names += [f"{r}.{n}" for r in metric.releases for n in declare.stored(r) if n.startswith(f"{metric.name}:")]
    for name in names:
        assert higher_better(name) is up, name


def test_a_failed_run_counts_as_the_worst_size_not_the_best() -> None:
    """The direction reaches the statistics rules: a failure takes the worst finite value, which
    for a lower-is-better metric under a release's name is above every real one (a name-prefix
    list once ranked ``srbench2025.size`` as higher-is-better, so failures looked smallest)."""
    import pandas as pd

    from srtui.results.scoring.stats import matrix

    rows = [{"task": t, "method": "small", "seed": 0, "status": "ok", "srbench2025.size": 3.0} for t in "ab"]
    rows += [
        {"task": "a", "method": "failing", "seed": 0, "status": "ok", "srbench2025.size": 30.0},
        {"task": "b", "method": "failing", "seed": 0, "status": "timeout", "srbench2025.size": float("nan")},
    ]
    grid = matrix(pd.DataFrame(rows), "srbench2025.size")
    assert grid.to_numpy(dtype=float)[list(grid.index).index("b"), list(grid.columns).index("failing")] > 30.0


def test_the_expr_view_and_the_app_labels_come_from_the_declarations() -> None:
    from srtui.views.expression import metric_label

    for metric in METRICS:
        assert metric_label(metric.name) == metric.label
    assert set(declare.expr_rows()) == {m.name for m in METRICS if m.source != "srsd"}
