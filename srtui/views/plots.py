"""What the plots show: one run's predictions against the truth (over dates for a time series),
and a suite's performance profiles, Pareto front and energy against time, as its figures draw them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import TERMINAL
from srtui.results.metrics.profiles import Profile
from srtui.results.outputs.figures.plotdata import EnergyPoint, Fronts, Profiles
from srtui.results.store.queries import Reader
from srtui.views.jobs import DetailError, built_task, job_row, task_arrays

_T = TypeVar("_T")


@dataclass(frozen=True)
class PredictionSeries:
    job_id: str
    label: str
    y_train: np.ndarray
    pred_train: np.ndarray
    y_test: np.ndarray
    pred_test: np.ndarray
    dates_train: tuple[str, ...] | None = None
    dates_test: tuple[str, ...] | None = None


def prediction_series(reader: Reader, job_id: str) -> PredictionSeries:
    job = job_row(reader, job_id)
    if job is None:
        raise DetailError(f"no job {job_id} in this workspace")
    with reader.lock:
        store = reader.store()
        preds = None if store is None else store.predictions(job_id)
    if preds is None:
        raise DetailError(f"job {job_id} has no stored predictions (status {job['status']})")
    arrays = task_arrays(reader.workspace, job["data_fingerprint"])
    if arrays is None:
        raise DetailError("the task's data is not in this workspace's cache")
    task = built_task(str(reader.workspace.root), job["task"])
    dates_train = dates_test = None
    if task is not None and task.dates_train is not None and task.dates_test is not None:
        dates_train, dates_test = tuple(map(str, task.dates_train)), tuple(map(str, task.dates_test))
    label = f"{job['method']} / {job['task']} / seed {job['seed']}"
    return PredictionSeries(
        job_id,
        label,
        arrays["y_train"],
        preds["train_pred"],
        arrays["y_test"],
        preds["test_pred"],
        dates_train,
        dates_test,
    )


@dataclass(frozen=True)
class SuiteAggregate:
    """A suite's plots, the data its figures draw (srtui.results.outputs.figures.plotdata)."""

    suite: str
    methods: tuple[str, ...]
    n_tasks: int
    profiles: Profiles | None  # srbench2025's performance profiles
    fronts: Fronts | None  # srbench2021's Pareto plot of median ranks
    energy: tuple[EnergyPoint, ...]  # srbench2025's energy against training time
    #: method -> (glyph, colour): its look in every figure of the workspace
    looks: dict[str, tuple[str, str]] = field(default_factory=dict)
    profile: str = "reference"
    #: plot ("profile", "front", "cost") -> why it has nothing to draw, one line
    missing: dict[str, str] = field(default_factory=dict)


#: the fronts the app's Pareto plot joins (the figure joins 6: a terminal shows the first)
APP_FRONTS = 1


def suite_aggregate(reader: Reader, suite: str, profile: str = "reference") -> SuiteAggregate:
    """The performance profiles, the Pareto front and the energy against time of a suite's runs
    under ``profile``, as `srtui plot` draws them: from the same rules' Scores, computed once."""
    from srtui.results.outputs.figures import workspace_data
    from srtui.results.outputs.figures.plotdata import energy_data, fronts_data, profiles_data

    with reader.lock:
        store = reader.store()
        if store is None:
            raise DetailError("no workspace yet")
        data = workspace_data(store, suite, {"profile": Profile(profile)})
    runs = data.runs
    if runs is None or runs.empty or not runs["status"].isin(TERMINAL).any():
        raise DetailError(f"suite {suite} has no finished runs")
    data.runs = runs[runs["status"].isin(TERMINAL)]
    missing: dict[str, str] = {}

    def drawn(plot: str, compute: Callable[[], _T]) -> _T | None:
        try:
            return compute()
        except (SrtuiError, ValueError) as exc:  # the rule cannot score these runs: say why
            missing[plot] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return None

    methods = tuple(sorted(str(m) for m in data.runs["method"].unique()))
    return SuiteAggregate(
        suite,
        methods,
        int(data.runs["task"].nunique()),
        drawn("profile", lambda: profiles_data(data)),
        drawn("front", lambda: fronts_data(data, APP_FRONTS)),
        drawn("cost", lambda: energy_data(data)) or (),
        {m: (data.look(m).glyph, data.look(m).color) for m in methods},
        profile,
        missing,
    )
