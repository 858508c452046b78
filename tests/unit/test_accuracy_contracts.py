"""Every accuracy metric (results/metrics/accuracy.py) against its own declaration: its golden
values, its ranking direction, its stored names and where they are stored. Parametrised over the
registry: a new metric is tested with no edit here."""

from __future__ import annotations

import numpy as np
import pytest

from srtui.results.metrics import accuracy
from srtui.results.store.columns import ACCURACY, BY_NAME

METRICS = accuracy.metrics()
IDS = [m.name for m in METRICS]
COMPUTED = [m for m in METRICS if m.compute is not None]


@pytest.mark.parametrize("metric", COMPUTED, ids=[m.name for m in COMPUTED])
def test_golden_values(metric: accuracy.Accuracy) -> None:
    assert metric.examples, f"{metric.name} declares no golden example"
    for golden in metric.examples:
        y, yhat = np.array(golden.y), np.array(golden.yhat)
        assert metric.compute is not None
        assert metric.compute(y, yhat) == pytest.approx(golden.value), golden


@pytest.mark.parametrize("metric", COMPUTED, ids=[m.name for m in COMPUTED])
def test_golden_values_through_the_stored_record(metric: accuracy.Accuracy) -> None:
    """What srtui.results.metrics.compute stores: each stored name of the metric has the golden value
    when the predictions are the example's (a split metric: on both splits)."""
    for golden in metric.examples:
        y, yhat = np.array(golden.y), np.array(golden.yhat)
        if metric.scope == "predictions":  # the example's y and yhat are the two predictions
            got = accuracy.prediction_metrics(np.zeros(len(y)), y, np.zeros(len(yhat)), yhat)
            assert got[metric.name] == golden.value
            continue
        got = accuracy.prediction_metrics(y, yhat, y, yhat)
        for name in metric.stored():
            assert got[name] == pytest.approx(golden.value), name


@pytest.mark.parametrize("metric", COMPUTED, ids=[m.name for m in COMPUTED])
def test_the_better_prediction_scores_better_in_the_declared_direction(metric: accuracy.Accuracy) -> None:
    y = np.linspace(1.0, 9.0, 17)
    exact, far = y.copy(), y[::-1] + 5.0
    if metric.scope == "predictions":
        good, bad = metric.compute(exact, exact), metric.compute(exact, np.full_like(y, np.nan))  # type: ignore[misc]
    else:
        good, bad = metric.compute(y, exact), metric.compute(y, far)  # type: ignore[misc]
    assert good != bad
    assert (good > bad) is (metric.direction == "higher"), (good, bad)


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_rankings_follow_the_declared_direction(metric: accuracy.Accuracy) -> None:
    from srtui.results.scoring.stats import higher_better

    for name in metric.stored():
        assert higher_better(name) is (metric.direction == "higher"), name


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_each_value_is_stored_where_the_record_says(metric: accuracy.Accuracy) -> None:
    """A name of the job's row is one of its columns; the others go to the metrics table, and
    the stored record (for a task-scoped metric: its own step) gives every name."""
    for name in metric.stored():
        if name in ACCURACY:
            assert BY_NAME[name].kind == "real"
    record = accuracy.prediction_metrics(np.arange(3.0), np.arange(3.0), np.arange(3.0), np.arange(3.0))
    if metric.scope == "task":
        assert metric.name not in record
    else:
        assert set(metric.stored()) <= set(record)


def test_every_job_row_accuracy_column_is_declared() -> None:
    assert set(ACCURACY) <= set(accuracy.by_stored_name())


def test_unusable_predictions_give_missing_values_not_numbers() -> None:
    y = np.arange(4.0)
    for pred in (None, np.arange(5.0), np.array([0.0, np.inf, 2.0, 3.0])):
        got = accuracy.prediction_metrics(y, y, y, pred)
        assert got["nonfinite_predictions"] == (0 if pred is not None and len(pred) == 5 else 1)
        assert all(got[n] is None for m in COMPUTED if m.scope == "test" for n in m.stored())
        assert all(got[f"{m.name}_test"] is None for m in COMPUTED if m.scope == "split")
        assert all(got[f"{m.name}_train"] is not None for m in COMPUTED if m.scope == "split")


def test_a_metric_is_declared_once() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        accuracy.declare(METRICS[0])


@pytest.mark.parametrize("metric", METRICS, ids=IDS)
def test_the_app_shows_the_declared_label(metric: accuracy.Accuracy) -> None:
    from srtui.views.expression import metric_label

    for name in metric.stored():
        assert metric_label(name) == accuracy.labels()[name]
        assert metric.label in metric_label(name)
