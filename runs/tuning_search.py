"""A protocol's search as it goes: its tuning jobs, and from their scores the next ones.

A ``Search`` is the tuning of one (task, method, seed), planned by srtui.runs.tuning's
``plan_searches``. A grid search has one iteration; a halving search has several, each on more
rows, the later ones run only by the candidates the earlier ones kept. ``next_jobs`` reads the
scores from the store and returns every job that can be known so far: the next iteration's once
the previous one has ended, the one final job per (task, method, seed) with the chosen
configuration once the last one has. Every job is an ordinary job: a resumed run finds it done,
or plans it again from the same scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from srtui.engine.protocols import (
    Protocol,
    best_configuration,
    fold_score,
    halving_best,
    halving_keep,
    mean_scores,
)
from srtui.engine.spec import JobSpec, Limits
from srtui.results.store.tuning import SUMMARY_PREFIX, TUNING_SUFFIX, JobScore, failure_text, given_up

UNFINISHED = (None, "pending", "running", "interrupted", "lost")

Records = Callable[[list[str]], dict[str, JobScore]]


@dataclass
class Search:
    """The tuning of one (task, method, seed); ``folds[i][k]`` is the data fingerprint of fold k
    of iteration i, ``rows[i]`` that iteration's training rows (its resources), ``valid[i][k]``
    the fold's validation rows."""

    final: JobSpec  # the final job with its params still to choose
    grid: list[dict[str, Any]]
    folds: list[list[str]]
    rows: list[int]
    protocol: Protocol
    tuning_limits: Limits  # each configuration's limits (the final job keeps the suite's)
    valid: list[list[int]] = field(default_factory=list)

    def job(self, candidate: int, iteration: int, fold: int) -> JobSpec:
        return replace(
            self.final,
            suite=self.final.suite + TUNING_SUFFIX,
            params=self.grid[candidate],
            data_fingerprint=self.folds[iteration][fold],
            limits=self.tuning_limits,
        )

    def finals(self) -> list[JobSpec]:
        """The final job each configuration would give (its id depends on the configuration)."""
        return [replace(self.final, params=params) for params in self.grid]

    def tuning_job_ids(self) -> set[str]:
        """Every tuning job this search can ever plan (every candidate, iteration and fold)."""
        return {
            self.job(c, it, k).job_id
            for c in range(len(self.grid))
            for it, fps in enumerate(self.folds)
            for k in range(len(fps))
        }

    def iteration_sizes(self) -> list[int]:
        """The candidates of each iteration: every one in a grid search's single iteration; a
        halving search keeps a third (rounded up) of them for the next (``halving_keep``)."""
        sizes = [len(self.grid)]
        for _ in self.folds[1:]:
            sizes.append(math.ceil(sizes[-1] / 3))
        return sizes

    def expected_jobs(self) -> int:
        """How many jobs this search runs: its tuning jobs and the final one."""
        return sum(n * len(fps) for n, fps in zip(self.iteration_sizes(), self.folds)) + 1

    def positions(self) -> dict[str, str]:
        """Each tuning job's place in the search, as a progress line names it:
        ``config 2/6 fold 3/5`` (and ``iteration 1/3`` in a halving search)."""
        out = {}
        for it, fps in enumerate(self.folds):
            step = f" iteration {it + 1}/{len(self.folds)}" if len(self.folds) > 1 else ""
            for c in range(len(self.grid)):
                for k in range(len(fps)):
                    out[self.job(c, it, k).job_id] = f"config {c + 1}/{len(self.grid)} fold {k + 1}/{len(fps)}{step}"
        return out

    def describe(self) -> str:
        """One line for a plan: the search, its candidates and rows per iteration, its tuning jobs."""
        its = ", ".join(f"{n} on {rows} rows" for n, rows in zip(self.iteration_sizes(), self.rows))
        what = f"{self.final.method} on {self.final.task} seed {self.final.seed}"
        return f"tuning {what}: {self.protocol.search} search, {its}: {self.expected_jobs() - 1} tuning jobs"

    def first_jobs(self) -> list[JobSpec]:
        return [self.job(c, 0, k) for c in range(len(self.grid)) for k in range(len(self.folds[0]))]

    def advance(self, records: Records) -> tuple[list[JobSpec], JobSpec | None, dict[str, Any]]:
        """(every tuning job known so far, the final job once chosen, the summary of the scores).

        A fold job that failed, or was lost past the retry limit (``given_up``), has no score:
        its configuration is ranked as failed and the search goes on without waiting for it."""
        candidates = list(range(len(self.grid)))
        jobs: list[JobSpec] = []
        summary: dict[str, Any] = {"protocol": self.protocol.name, "search": self.protocol.search, "iterations": []}
        for it, fps in enumerate(self.folds):
            specs = [[self.job(c, it, k) for k in range(len(fps))] for c in candidates]
            jobs += [s for row in specs for s in row]
            got = records([s.job_id for row in specs for s in row])
            ended = [[got.get(s.job_id) for s in row] for row in specs]
            if any(r is None or (r.status in UNFINISHED and not given_up(r)) for row in ended for r in row):
                return jobs, None, summary
            rule = self.protocol.halving_rule
            scores = [[self._score(r, it, k) for k, r in enumerate(row)] for row in ended]
            if self.protocol.search == "grid":
                index, means = best_configuration(scores)
                chosen: int | None = candidates[index]
            else:
                means = mean_scores(scores, self.protocol.error_score)
                chosen = halving_best(candidates, means, rule) if it == len(self.folds) - 1 else None
            summary["iterations"].append(
                {
                    "rows": self.rows[it],
                    "candidates": [
                        _candidate(self.grid[c], m, row, done)
                        for c, m, row, done in zip(candidates, means, scores, ended)
                    ],
                }
            )
            if chosen is not None:
                summary["chosen"] = self.grid[chosen]
                return jobs, replace(self.final, params=self.grid[chosen]), summary
            candidates = halving_keep(candidates, means, rule=rule)
        return jobs, None, summary  # not reached: the last iteration always chooses

    def _score(self, record: JobScore | None, iteration: int, fold: int) -> float | None:
        """A fold's score (``fold_score``): None without one, NaN where scikit-learn 0.24.1 had NaN."""
        if record is None:
            return None
        n_valid = self.valid[iteration][fold] if self.valid else 2
        return fold_score(record.status == "ok", record.r2_test, n_valid, self.protocol.halving_rule)


def _candidate(
    params: dict[str, Any], mean: float, scores: list[float | None], ended: list[JobScore | None]
) -> dict[str, Any]:
    """One candidate of an iteration in the summary; ``failed`` says why a fold has no score,
    ``nan_folds`` which folds scored NaN (then ``mean_nan``: the mean is NaN, as 0.24.1's was)."""
    out: dict[str, Any] = {"params": params, "mean_r2": _finite(mean), "fold_r2": [_finite(s) for s in scores]}
    failed, nan = [], []
    for fold, (record, score) in enumerate(zip(ended, scores), 1):  # 1-based, as the summary text says
        if record is not None and record.status != "ok":
            failed.append({"fold": fold, "why": failure_text(record)})
        elif record is not None and score is None:
            failed.append({"fold": fold, "why": "ok but no score (predictions not finite)"})
        elif score is not None and math.isnan(score):
            nan.append(fold)
    if failed:
        out["failed"] = failed
    if nan:
        out["nan_folds"] = nan
    if math.isnan(mean):
        out["mean_nan"] = True
    return out


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def next_jobs(
    searches: list[Search], records: Records, save_summary: Callable[[str, str], None] | None = None
) -> list[JobSpec]:
    """Every job of the searches known from the scores so far (tuning jobs and chosen finals);
    the tuning summary of each chosen final is saved under ``SUMMARY_PREFIX + job_id``."""
    out: list[JobSpec] = []
    for search in searches:
        jobs, final, summary = search.advance(records)
        out += jobs
        earlier = chosen_earlier(search, records)
        if earlier is not None:  # the choice stands, and so does the summary saved with it
            out.append(earlier)
        elif final is not None:
            out.append(final)
            if save_summary is not None:
                save_summary(SUMMARY_PREFIX + final.job_id, json.dumps(summary, sort_keys=True))
    return out


def chosen_earlier(search: Search, records: Records) -> JobSpec | None:
    """The final job a run already planned for this search, if any. The choice stands: a tuning
    job retried later (``--retry-failed``) must not choose a second final job for the same task,
    method and seed, whose scores would then disagree with the first one's."""
    finals = search.finals()
    known = records([f.job_id for f in finals])
    return next((f for f in finals if f.job_id in known), None)


def settled_tuning_jobs(searches: list[Search], records: Records) -> set[str]:
    """The tuning jobs of the searches whose final job is planned: not retried, since their
    scores can no longer change the choice."""
    out: set[str] = set()
    for search in searches:
        if chosen_earlier(search, records) is not None:
            out |= search.tuning_job_ids()
    return out
