"""The accuracy metrics, each declared once with :func:`accuracy` beside the function computing it.

A declaration gives the stored name, the ranking direction, label, unit, doc line and golden
examples; its ``scope`` says what the function reads:

- ``split``: ``(y, yhat)`` of one split, stored as ``<name>_train`` and ``<name>_test``;
- ``test``: ``(y, yhat)`` of the test split, stored as ``<name>``;
- ``predictions``: ``(train_pred, test_pred)``, stored as ``<name>``;
- ``task``: computed where the task's property is known (srtui.results.metrics.compute:
  ``r2_extrapolation`` in ``prepare_job``, ``noise_robustness`` in ``noise_robustness``); declared
  here for its direction, listing and docs only.

A split's or the test's function only ever sees predictions of the data's shape, all finite: for
any other the value is None (missing, ranked worst). From the declarations come
:func:`prediction_metrics` (what ``srtui.results.metrics.compute`` stores), the ranking direction of
each stored name (:func:`lower_is_better`, read by srtui.results.scoring.stats), `srtui rescore
--list` and the docs table (:func:`docs_table`, docs/scoring.md "Accuracy metrics";
tests/unit/test_registries.py fails when the two differ). Each is stored once: the per-split R2, MSE
and MAE in the job's own row (srtui.results.store.columns.ACCURACY, written by srtui.runs.sink as the job
ends), the others in the ``metrics`` table; every consumer reads both through
:mod:`srtui.results.metrics.pivot`. Adding an accuracy metric is adding one decorated function here;
tests/unit/test_accuracy_contracts.py then checks its golden examples and its direction, and
tests/e2e/test_accuracy_consumers.py that a declared metric reaches `srtui results`, `srtui
export`, a rule and the app, with no edit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from srtui.results.metrics.declare import Direction

if TYPE_CHECKING:  # numpy loads when a metric is computed: `srtui results` reads the names only
    import numpy as np

Scope = Literal["split", "test", "predictions", "task"]
SPLITS = ("train", "test")
#: SRBench 2022's np.isclose accuracy (its metrics/evaluation.py)
ISCLOSE = {"atol": 1e-3, "rtol": 0.05, "share": 0.95}


@dataclass(frozen=True)
class Golden:
    """``compute(y, yhat)`` is ``value`` (for scope ``predictions``: ``compute(y, yhat)`` with
    ``y`` the training predictions and ``yhat`` the test ones)."""

    y: tuple[float, ...]
    yhat: tuple[float, ...]
    value: float


@dataclass(frozen=True)
class Accuracy:
    name: str
    direction: Direction
    label: str  # the app's and the figures' words for it
    unit: str
    doc: str  # one line: what it measures (the docs table, `srtui rescore --list`)
    scope: Scope
    compute: Callable[..., Any] | None
    examples: tuple[Golden, ...] = ()
    #: bump when the definition changes (a new metric starts at 1): stored jobs are then recomputed
    version: int = 0

    def stored(self) -> tuple[str, ...]:
        """The names its values are stored under."""
        return tuple(f"{self.name}_{s}" for s in SPLITS) if self.scope == "split" else (self.name,)


_DECLARED: dict[str, Accuracy] = {}


def accuracy(
    name: str,
    direction: Direction,
    label: str,
    unit: str,
    doc: str,
    scope: Scope = "split",
    *examples: Golden,
    version: int = 0,
) -> Callable[[Callable[[np.ndarray, np.ndarray], Any]], Callable[[np.ndarray, np.ndarray], Any]]:
    """Declare the decorated function as the accuracy metric ``name`` (module level, once)."""

    def register(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[[np.ndarray, np.ndarray], Any]:
        declare(Accuracy(name, direction, label, unit, doc, scope, fn, examples, version))
        return fn

    return register


#: a stored name is a column name everywhere (SQL, CSV, the runs table): lower-case words
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def declare(metric: Accuracy) -> None:
    if not _NAME.fullmatch(metric.name):
        raise ValueError(f"accuracy metric {metric.name!r}: a name is lower-case letters, digits and _")
    if metric.name in _DECLARED:
        raise ValueError(f"accuracy metric {metric.name!r} is declared twice")
    if (metric.scope == "task") != (metric.compute is None):
        raise ValueError(f"accuracy metric {metric.name!r}: every scope but task has a compute function")
    _DECLARED[metric.name] = metric


def metrics() -> tuple[Accuracy, ...]:
    """Every accuracy metric, in the order they are declared (and stored)."""
    return tuple(_DECLARED.values())


def version_offset() -> int:
    """The sum of the declarations' versions: part of ``srtui.results.metrics.version.METRICS_VERSION``."""
    return sum(m.version for m in metrics())


def _r2(y: np.ndarray, yhat: np.ndarray) -> float:
    """scikit-learn's R2 (the fidelity check's: srtui.engine.r2, without the parser's sympy) of finite predictions."""
    import numpy as np

    from srtui.engine.r2 import r2_score

    return r2_score(np.asarray(y, dtype=np.float64), np.asarray(yhat, dtype=np.float64))


# --- the declarations, in the order the values are stored ------------------------------------

_Y = (1.0, 2.0, 3.0, 4.0)
_YHAT = (1.5, 2.0, 3.0, 3.5)  # off by 0.5 on the first and the last point


@accuracy(
    "r2",
    "higher",
    "R²",
    "-",
    "coefficient of determination (scikit-learn's; 1 or 0 for a constant target)",
    "split",
    Golden(_Y, _YHAT, 0.9),
)
def r2_split(y: np.ndarray, yhat: np.ndarray) -> float:
    return _r2(y, yhat)


@accuracy("mse", "lower", "MSE", "target units²", "mean squared error", "split", Golden(_Y, _YHAT, 0.125))
def mse(y: np.ndarray, yhat: np.ndarray) -> float:
    import numpy as np

    return float(np.mean((y - yhat) ** 2))


@accuracy("mae", "lower", "MAE", "target units", "mean absolute error", "split", Golden(_Y, _YHAT, 0.25))
def mae(y: np.ndarray, yhat: np.ndarray) -> float:
    import numpy as np

    return float(np.mean(np.abs(y - yhat)))


@accuracy(
    "nmse",
    "lower",
    "NMSE",
    "target units",
    "mean((y - yhat)^2 / (abs(y) + 1e-5))",
    "split",
    Golden(_Y, _YHAT, (0.25 / (1 + 1e-5) + 0.25 / (4 + 1e-5)) / 4),
)
def nmse(y: np.ndarray, yhat: np.ndarray) -> float:
    import numpy as np

    return float(np.mean((y - yhat) ** 2 / (np.abs(y) + 1e-5)))


@accuracy(
    "nonfinite_predictions",
    "lower",
    "non-finite predictions",
    "0/1",
    "1 when any prediction is nan or inf (the other accuracy metrics are then missing, and rank worst)",
    "predictions",
    Golden((1.0, 2.0), (1.0, float("nan")), 1),
    Golden((1.0, 2.0), (3.0, 4.0), 0),
)
def nonfinite_predictions(train_pred: np.ndarray | None, test_pred: np.ndarray | None) -> int:
    import numpy as np

    finite = all(p is not None and np.all(np.isfinite(p)) for p in (train_pred, test_pred))
    return 0 if finite else 1


@accuracy(
    "r2_test_3",
    "higher",
    "R² test (3 decimals)",
    "-",
    "test R2 rounded to 3 decimals (SRBench 2022 rules)",
    "test",
    Golden(_Y, _YHAT, 0.9),
    Golden((0.0, 1.0, 2.0), (0.0, 1.0, 2.0004), 1.0),
)
def r2_test_3(y: np.ndarray, yhat: np.ndarray) -> float:
    return round(_r2(y, yhat), 3)


def _solved(threshold: float) -> Callable[[np.ndarray, np.ndarray], int]:
    return lambda y, yhat: int(_r2(y, yhat) > threshold)


for _name, _threshold in (("solved_r2_095", 0.95), ("solved_r2_099", 0.99), ("solved_r2_0999", 0.999)):
    accuracy(
        _name,
        "higher",
        f"solved (R² > {_threshold})",
        "0/1",
        f"1 when the test R2 is above {_threshold}",
        "test",
        Golden(_Y, _YHAT, 0),
        Golden(_Y, _Y, 1),
    )(_solved(_threshold))


@accuracy(
    "isclose_frac",
    "higher",
    "isclose share",
    "share",
    f"share of test points with np.isclose(yhat, y, atol={ISCLOSE['atol']}, rtol={ISCLOSE['rtol']})",
    "test",
    Golden(_Y, _YHAT, 0.5),
)
def isclose_frac(y: np.ndarray, yhat: np.ndarray) -> float:
    import numpy as np

    return float(np.mean(np.isclose(yhat, y, atol=ISCLOSE["atol"], rtol=ISCLOSE["rtol"])))


@accuracy(
    "isclose_acc",
    "higher",
    "close to truth (>= 95 % of points)",
    "0/1",
    f"1 when the isclose share is at least {ISCLOSE['share']:.0%} (SRBench 2022's accuracy)",
    "test",
    Golden(_Y, _YHAT, 0),
    Golden(_Y, _Y, 1),
)
def isclose_acc(y: np.ndarray, yhat: np.ndarray) -> int:
    return int(isclose_frac(y, yhat) >= ISCLOSE["share"])


declare(
    Accuracy(
        "r2_extrapolation",
        "higher",
        "extrapolation R²",
        "-",
        "the test R2 of a task whose property is extrapolation (an out-of-range test split)",
        "task",
        None,
    )
)
declare(
    Accuracy(
        "noise_robustness",
        "higher",
        "noise robustness",
        "ratio",
        "test R2 over the median test R2 of the same method on the task's noiseless twin, when that is positive",
        "task",
        None,
    )
)


# --- what the declarations give --------------------------------------------------------------


def _valid(y: np.ndarray, yhat: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(y, yhat)`` as floats, or None when the predictions are missing, of another shape or
    not all finite."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    pred = np.asarray(yhat, dtype=float)
    return None if pred.shape != y.shape or not np.all(np.isfinite(pred)) else (y, pred)


def split_metrics(
    y: np.ndarray, yhat: np.ndarray | None, part: str, only: Collection[str] | None = None
) -> dict[str, Any]:
    """The split metrics of ``part`` (train or test); None each when the predictions are not usable."""
    pair = _valid(y, yhat)
    return {
        f"{m.name}_{part}": None if pair is None or m.compute is None else m.compute(*pair)
        for m in metrics()
        if m.scope == "split" and (only is None or f"{m.name}_{part}" in only)
    }


def prediction_metrics(
    y_train: np.ndarray,
    train_pred: np.ndarray | None,
    y_test: np.ndarray,
    test_pred: np.ndarray | None,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """Every accuracy metric of one job but the task-scoped ones, by stored name (``only``: those
    stored under these names: the job's row, written when the job ends, srtui.runs.sink)."""
    out: dict[str, Any] = {}
    for part, y, pred in (("train", y_train, train_pred), ("test", y_test, test_pred)):
        out.update(split_metrics(y, pred, part, only))
    test = _valid(y_test, test_pred)
    for m in metrics():
        if only is not None and m.name not in only:
            continue
        if m.scope == "predictions" and m.compute is not None:
            out[m.name] = m.compute(train_pred, test_pred)
        elif m.scope == "test" and m.compute is not None:
            out[m.name] = None if test is None else m.compute(*test)
    return out


def by_stored_name() -> dict[str, Accuracy]:
    return {name: m for m in metrics() for name in m.stored()}


def lower_is_better(column: str) -> bool | None:
    """The declared direction of a stored accuracy name; None when no accuracy metric stores it."""
    metric = by_stored_name().get(column)
    return None if metric is None else metric.direction == "lower"


def labels() -> dict[str, str]:
    """Every stored name's words (a split metric's with its split)."""
    out = {}
    for m in metrics():
        for name in m.stored():
            out[name] = f"{m.label} {name.rpartition('_')[2]}" if m.scope == "split" else m.label
    return out


def docs_table() -> str:
    """The table of docs/scoring.md "Accuracy metrics" (and `srtui rescore --list`'s rows)."""
    from srtui.results.store.columns import ACCURACY

    rows = ["| stored as | better | unit | stored in | meaning |", "| --- | --- | --- | --- | --- |"]
    for m in metrics():
        names = ", ".join(f"`{n}`" for n in m.stored())
        where = "the job's row" if set(m.stored()) <= set(ACCURACY) else "metrics table"
        rows.append(f"| {names} | {m.direction} | {m.unit} | {where} | {m.doc} |")
    return "\n".join(rows) + "\n"
