"""A run under a protocol, planned: tuning jobs from the suite, on the protocol's own data.

``plan_searches`` replaces each (task, method, seed) whose protocol searches a grid by its first
tuning jobs (suite ``SUITE@tuning``, data = a fold's npz: the fold's training rows as train, its
validation rows as test, so a tuning job's ``r2_test`` is its validation score), and applies the
protocol's split, cap and scaling to every job. Each search (srtui.runs.tuning_search) then
plans its later jobs, and the final job, from their scores. ``TuningOptions`` is a suite's
``[tuning]`` table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.outcome_check import TaskArrays
from srtui.engine.protocols import (
    FitDraws,
    Protocol,
    ProtocolError,
    applied,
    capped_rows,
    configurations,
    halving_folds,
    halving_schedule,
    kfold,
    train_test_split_rows,
)
from srtui.engine.scaling import SCALING_KEY, SCALINGS, statistics
from srtui.engine.spec import JobSpec, Limits, SpecError
from srtui.runs.tuning_search import Search

if TYPE_CHECKING:
    from srtui.engine.methods.base import Method
    from srtui.tasks.model import Task

#: writes a data file (``srtui.runs.data.write_arrays``)
WriteData = Callable[[Path, TaskArrays], None]


@dataclass
class TuningOptions:
    """A suite's ``[tuning]`` table: what it changes of the protocol.

    ``scaling``: "none", "x", "y", "xy" or "method" (each method's ``eval_kwargs`` scale_x /
    scale_y), or a table of those per method (key ``default`` for the others); ``grids``: per
    method, the configurations tried besides the defaults (replaces its ``hyper_params``);
    ``limits``: the limits of each tuning job (per configuration and fold) over the suite's."""

    scaling: dict[str, str] = field(default_factory=dict)
    grids: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    limits: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_table(cls, table: dict[str, Any], where: str = "suite") -> TuningOptions:
        unknown = set(table) - {"scaling", "grids", "limits"}
        if unknown:
            raise ProtocolError(f"{where}: [tuning] has no option {sorted(unknown)[0]!r} (scaling, grids, limits)")
        scaling = table.get("scaling", {})
        scaling = {"default": scaling} if isinstance(scaling, str) else scaling
        if not isinstance(scaling, dict) or any(v not in (*SCALINGS, "method") for v in scaling.values()):
            raise ProtocolError(
                f"{where}: [tuning] scaling must be one of {', '.join(SCALINGS)}, method "
                "(or a table of those per method)"
            )
        grids = table.get("grids", {})
        if not isinstance(grids, dict) or not all(
            isinstance(g, list) and all(isinstance(c, dict) for c in g) for g in grids.values()
        ):
            raise ProtocolError(f"{where}: [tuning.grids] must give each method a list of tables")
        limits = table.get("limits", {})
        if not isinstance(limits, dict):
            raise ProtocolError(f"{where}: [tuning.limits] must be a table")
        return cls(dict(scaling), dict(grids), dict(limits))

    def scaling_for(self, name: str, method: Method, protocol: Protocol) -> str:
        option = self.scaling.get(name, self.scaling.get("default", protocol.scaling))
        if option != "method":
            return option
        # evaluate_model.py's defaults (every release): scale_x=True, scale_y=True
        kwargs = {"scale_x": True, "scale_y": True, **protocol.method_scaling, **getattr(method, "eval_kwargs", {})}
        return {(True, True): "xy", (True, False): "x", (False, True): "y"}.get(
            (bool(kwargs.get("scale_x")), bool(kwargs.get("scale_y"))), "none"
        )

    def tuning_limits(self, limits: Limits) -> Limits:
        try:
            return limits.over(**self.limits)
        except (SpecError, TypeError) as exc:
            raise ProtocolError(f"[tuning.limits]: {exc}") from None


Cut = tuple[np.ndarray, np.ndarray]  # a fold's (train rows, validation rows)


def fold_fingerprint(
    base: str, kind: str, folds: int, seed: int, fold: int, rows: int | None = None, cut: Cut | None = None
) -> str:
    """The data file's name: a halving fold names its rows too (``cut``), since its subsample
    depends on the draws before it (the search's schedule, its fits' draws), not on its size alone:
    two methods of a run share a file only when they drew the same rows."""
    key = f"{base}|{kind}|{folds}|{seed}|{fold}" + ("" if rows is None else f"|{rows}")
    digest = hashlib.sha256(key.encode())
    for part in cut or ():
        digest.update(b"|" + np.ascontiguousarray(part, dtype=np.int64).tobytes())
    return digest.hexdigest()[:16]


@dataclass
class DataWriter:
    """Where fold and split data go (``data_cache/FP.npz``) and whether to write them now."""

    data_cache: Path
    write: WriteData | None
    paths: dict[str, str]

    def put(self, fp: str, make: Callable[[], TaskArrays]) -> str:
        path = self.data_cache / f"{fp}.npz"
        self.paths[fp] = str(path)
        if self.write is not None:  # checked if there (a job may have changed it), else written
            self.write(path, make())
        return fp


def plan_searches(
    protocol: Protocol,
    specs: list[JobSpec],
    methods: Mapping[str, Method],
    tasks: Mapping[str, Task],
    data_cache: Path,
    write: WriteData | None,
    options: TuningOptions | None = None,
    notes: list[str] | None = None,
) -> tuple[list[JobSpec], list[Search], dict[str, str]]:
    """(specs to run now, searches, data path per fingerprint of the protocol's own data).

    The one place where a run's protocol meets its jobs, whatever the method's kind (built-in,
    method folder, own environment): the split, the cap, the scaling and the tuning are applied
    here, and recorded in each job's spec (``JobSpec.protocol``); what a method cannot follow is
    said once per method in ``notes``."""
    options = options or TuningOptions()
    writer = DataWriter(data_cache, write, {})
    now: list[JobSpec] = []
    searches: list[Search] = []
    said: set[str] = set()
    for spec in specs:
        task = _split(protocol, spec, tasks[spec.task], writer)
        capped = isinstance(task, _SplitTask) and task.capped
        if isinstance(task, _SplitTask):
            spec = replace(spec, data_fingerprint=task.fingerprint_)
        method = methods[spec.method]
        scale = options.scaling_for(spec.method, method, protocol)
        spec = replace(spec, params=_scaled_params(spec.params, scale, method))
        hyper = options.grids.get(spec.method, method.hyper_params[: protocol.max_configs])
        grid = configurations(method.default_params, hyper, spec.params, protocol.search_defaults)
        why = _untuned_why(method, protocol, grid)
        if why and notes is not None and spec.method not in said:
            said.add(spec.method)
            notes.append(f"{spec.method}: not tuned under protocol {protocol.name}: {why}")
        spec = replace(spec, protocol=applied(protocol, scale, capped, len(grid), spec.seed, why))
        if protocol.search is None or len(grid) < 2:  # nothing to choose between
            now.append(spec)
            continue
        limits = options.tuning_limits(spec.limits)
        draws: FitDraws = getattr(method, "fit_draws", ())
        rng = task.rng if isinstance(task, _SplitTask) else None
        search = _search(protocol, grid, task, spec, writer, limits, rng, draws)
        searches.append(search)
        now += search.first_jobs()
    return now, searches, writer.paths


def _untuned_why(method: Method, protocol: Protocol, grid: list[dict[str, Any]]) -> str:
    """Why a protocol that tunes does not tune this method (empty: it does, or tunes nothing)."""
    if protocol.search is None or len(grid) >= 2:
        return ""
    return "it has no hyper_params; its defaults run"


def _scaled_params(params: dict[str, Any], scale: str, method: Method) -> dict[str, Any]:
    """Params under the run's scaling (none, x, y or xy): once, over the whole training set,
    before its folds, by the job's worker for every kind of method. A method folder never
    scales on its own in a run (its ``srbench`` option says so): the protocol honours the
    folder's ``eval_kwargs`` when its scaling is "method"."""
    from srtui.engine.methods.srbench_eval import OPTIONS_KEY

    out = {**params, SCALING_KEY: scale} if scale != "none" else dict(params)
    if getattr(method, "scales_itself", False):
        out[OPTIONS_KEY] = {**(params.get(OPTIONS_KEY) or {}), "scaling": "none"}
    return out


def _search(
    protocol: Protocol,
    grid: list[dict[str, Any]],
    task: Task | TaskArrays,
    spec: JobSpec,
    writer: DataWriter,
    limits: Limits,
    rng: np.random.RandomState | None = None,
    fit_draws: FitDraws = (),
) -> Search:
    """The tuning of one (task, method, seed); ``rng`` is numpy's global generator as the split
    left it (SRBench 2021 draws the halving subsamples from it), None: ``RandomState(seed)``;
    ``fit_draws`` what each of the method's fits draws from it (``halving_folds``)."""
    n_rows = len(task.y_train)
    stats = statistics(task.X_train, task.y_train) if SCALING_KEY in spec.params else {}
    if protocol.search == "grid":
        rows, cuts = [n_rows], [kfold(n_rows, protocol.folds, spec.seed)]
    else:
        rows = halving_schedule(len(grid), n_rows, protocol.folds)
        cuts = halving_folds(n_rows, protocol.folds, spec.seed, rows, rng, fit_draws, len(grid))
    folds: list[list[str]] = []
    n_valid = [[len(v) for _, v in cut] for cut in cuts]
    for it, cut in enumerate(cuts):
        kind = "kfold-shuffle" if protocol.search == "grid" else "halving"
        row_fps: list[str] = []
        for k, (train, valid) in enumerate(cut):
            fp = fold_fingerprint(
                spec.data_fingerprint,
                kind,
                protocol.folds,
                spec.seed,
                k,
                None if protocol.search == "grid" else rows[it],
                None if protocol.search == "grid" else (train, valid),
            )
            row_fps.append(writer.put(fp, partial(_fold_data, task, train, valid, stats)))
        folds.append(row_fps)
    return Search(spec, grid, folds, rows, protocol, limits, n_valid)


@dataclass(kw_only=True)
class _SplitTask(TaskArrays):
    """A task re-split by the protocol: its rows (the data file), its fingerprint, and numpy's
    global generator after the split (and the cap's draw)."""

    fingerprint_: str
    rng: np.random.RandomState
    capped: bool = False


def _split(protocol: Protocol, spec: JobSpec, task: Task, writer: DataWriter) -> Task | _SplitTask:
    """The task as the protocol splits it: its own rows, or SRBench's 75/25 split per seed (2021's,
    2022's and 2.0's code alike: ``train_test_split(X, y, train_size=0.75, test_size=0.25,
    random_state=seed)`` of the task's rows in their original order), then the protocol's cap on
    training rows (``capped_rows``)."""
    if protocol.split == "task":
        return task
    index = np.concatenate([task.train_index, task.test_index])
    order = np.argsort(index, kind="stable")
    X = np.concatenate([task.X_train, task.X_test])[order]
    y = np.concatenate([task.y_train, task.y_test])[order]
    rows = index[order]
    train, test = train_test_split_rows(len(y), 0.75, spec.seed)
    rng = np.random.RandomState(spec.seed % 2**32)  # evaluate_model.py: np.random.seed(random_state)
    capped = capped_rows(len(train), len(y), protocol.train_cap, rng, protocol.cap_draw)
    if capped is not None:
        train = train[capped]
    kind = "split-" + protocol.split
    if capped is not None:  # 2021's name unchanged (its stored fingerprints); 2.0's draw named
        kind += f"-cap{protocol.train_cap}" + ("" if protocol.cap_draw == "srbench2021" else "-" + protocol.cap_draw)
    fp = fold_fingerprint(spec.data_fingerprint, kind, 0, spec.seed, 0)
    split = _SplitTask(
        X[train],
        y[train],
        X[test],
        y[test],
        rows[train],
        rows[test],
        list(task.feature_names),
        fingerprint_=fp,
        rng=rng,
        capped=capped is not None,
    )
    writer.put(fp, lambda: split)
    return split


def _fold_data(
    task: Task | TaskArrays, train: np.ndarray, valid: np.ndarray, stats: dict[str, np.ndarray]
) -> TaskArrays:
    """A fold's data file: its rows and, when the protocol scales, the training rows' statistics."""
    return TaskArrays(
        task.X_train[train],
        task.y_train[train],
        task.X_train[valid],
        task.y_train[valid],
        task.train_index[train],
        task.train_index[valid],
        list(task.feature_names),
        scale_stats=stats,
    )
