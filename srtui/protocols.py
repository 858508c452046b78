"""A run under a protocol: tuning jobs planned from the suite, final jobs from their results.

``plan_searches`` replaces each (task, method, seed) whose protocol searches a grid by its
configuration x fold tuning jobs (suite ``SUITE@tuning``, data = the fold's npz: the fold's
training rows as train, its validation rows as test, so a tuning job's ``r2_test`` is its
validation score). After those ran, ``final_specs`` reads their scores from the store and
returns the one final job per (task, method, seed) with the chosen configuration. A final job
is an ordinary job: a resumed run finds it done, or plans it again from the same scores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.spec import JobSpec
from engine.tuning import Protocol, best_configuration, configurations, kfold

TUNING_SUFFIX = "@tuning"


@dataclass
class Search:
    """The tuning of one (task, method, seed): ``jobs[c][f]`` is configuration c on fold f."""

    final: JobSpec  # the final job with its params still to choose
    grid: list[dict[str, Any]]
    jobs: list[list[JobSpec]]


def fold_fingerprint(task_fingerprint: str, folds: int, seed: int, fold: int) -> str:
    key = f"{task_fingerprint}|kfold-shuffle|{folds}|{seed}|{fold}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def plan_searches(
    protocol: Protocol,
    specs: list[JobSpec],
    methods: dict[str, Any],
    tasks: dict[str, Any],
    data_cache: Path,
    write: Callable[[Path, dict], None] | None,
) -> tuple[list[JobSpec], list[Search], dict[str, str]]:
    """(specs to run now, searches, fold npz path per data fingerprint)."""
    if protocol.search is None:
        return specs, [], {}
    now, searches, paths = [], [], {}
    for spec in specs:
        method = methods[spec.method]
        grid = configurations(method.default_params, method.hyper_params, spec.params)
        if len(grid) < 2:  # nothing to choose between
            now.append(spec)
            continue
        task = tasks[spec.task]
        fold_fps = []
        for k, (train, valid) in enumerate(kfold(len(task.y_train), protocol.folds, spec.seed)):
            fp = fold_fingerprint(spec.data_fingerprint, protocol.folds, spec.seed, k)
            path = data_cache / f"{fp}.npz"
            paths[fp] = str(path)
            if write is not None and not path.exists():
                write(path, _fold_arrays(task, train, valid))
            fold_fps.append(fp)
        jobs = [[replace(spec, suite=spec.suite + TUNING_SUFFIX, params=params, data_fingerprint=fp) for fp in fold_fps]
                for params in grid]
        searches.append(Search(spec, grid, jobs))
        now += [job for row in jobs for job in row]
    return now, searches, paths


def _fold_arrays(task, train, valid) -> dict:
    return {
        "X_train": task.X_train[train], "y_train": task.y_train[train],
        "X_test": task.X_train[valid], "y_test": task.y_train[valid],
        "train_index": task.train_index[train], "test_index": task.train_index[valid],
        "feature_names": list(task.feature_names),
    }


def final_specs(searches: list[Search], scores_of: Callable[[list[str]], dict[str, tuple[str, float | None]]]) -> list[JobSpec]:
    """The final job of each search whose tuning jobs all ended (any status); ``scores_of``
    maps job ids to (status, r2_test)."""
    records = scores_of([job.job_id for s in searches for row in s.jobs for job in row])
    finals = []
    for search in searches:
        rows = [[records.get(job.job_id) for job in row] for row in search.jobs]
        if any(r is None or r[0] in ("pending", "running", "interrupted", "lost") for row in rows for r in row):
            continue  # not all tuning jobs ended: no choice yet
        scores = [[r[1] if r[0] == "ok" else None for r in row] for row in rows]
        chosen, _means = best_configuration(scores)
        finals.append(replace(search.final, params=search.grid[chosen]))
    return finals
