"""What the plots show: one run's predictions against the truth (over dates for a time series),
and a suite's plots: every figure kind's data (srtui.results.outputs.figures.plotdata.Plot), as
`srtui plot` draws it; the app draws it in the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import TERMINAL
from srtui.results.metrics.profiles import Profile
from srtui.results.outputs.figures.plotdata import Plot
from srtui.results.store.queries import Reader
from srtui.views.jobs import DetailError, built_task, job_row, task_arrays


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
class PlotKind:
    """A figure kind as the app's Plots screen lists it (srtui.results.outputs.figures.kinds())."""

    name: str
    summary: str
    terminal: str = ""  # why the terminal cannot draw it ("" when it can)


@dataclass(frozen=True)
class SuiteAggregate:
    """A suite's plots: every figure kind's data (plotdata.Plot), as `srtui plot` draws it."""

    suite: str
    methods: tuple[str, ...]
    n_tasks: int
    kinds: tuple[PlotKind, ...]  # every figure kind, in listing order
    plots: dict[str, Plot]  # kind -> its data, for the kinds the terminal draws
    #: method -> (glyph, colour): its look in every figure of the workspace
    looks: dict[str, tuple[str, str]] = field(default_factory=dict)
    profile: str = "reference"
    #: kind -> why it has nothing to draw here, one line
    missing: dict[str, str] = field(default_factory=dict)


def suite_aggregate(reader: Reader, suite: str, profile: str = "reference") -> SuiteAggregate:
    """Every figure kind's data for a suite's finished runs under ``profile``, as `srtui plot`
    draws them: from the same rules' Scores, each computed once."""
    from srtui.results.outputs.figures import kinds, plot_data, workspace_data
    from srtui.results.scoring import RULES

    with reader.lock:
        store = reader.store()
        if store is None:
            raise DetailError("no workspace yet")
        data = workspace_data(store, suite, {"profile": Profile(profile)})
    runs = data.runs
    if runs is None or runs.empty or not runs["status"].isin(TERMINAL).any():
        raise DetailError(f"suite {suite} has no finished runs")
    data.runs = runs[runs["status"].isin(TERMINAL)]
    listed = tuple(PlotKind(k.name, k.summary, k.terminal) for k in kinds().values())
    plots: dict[str, Plot] = {}
    missing: dict[str, str] = {}
    for kind in kinds().values():
        if kind.terminal:
            missing[kind.name] = f"{kind.name}: {kind.terminal}; not drawn in a terminal (f saves it as a PDF)"
            continue
        rule = RULES.get(kind.rule)  # the profile goes to the rules that have one (friedman has none)
        data.options = {"profile": Profile(profile)} if rule is not None and "profile" in rule.options else {}
        try:
            plots[kind.name] = plot_data(kind.name, data)
        except (SrtuiError, ValueError) as exc:  # the rule cannot score these runs: say why
            missing[kind.name] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    methods = tuple(sorted(str(m) for m in data.runs["method"].unique()))
    looks = {m: (data.look(m).glyph, data.look(m).color) for m in methods}
    return SuiteAggregate(suite, methods, int(data.runs["task"].nunique()), listed, plots, looks, profile, missing)
