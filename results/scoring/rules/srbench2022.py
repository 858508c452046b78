"""What the SRBench 2022 competition's rules share (de Franca et al., "SRBench++", 2023): the
task properties, the expert's trust ratings and the representative run of the real-world track.
The rules themselves are ``srbench2022_qualification``, ``srbench2022_synthetic`` and
``srbench2022_realworld``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from srtui.results.scoring.base import ScoreError

RELEASE = "srbench2022"

#: the metric of each task property (corrected profile; srtui's own columns)
PROPERTY_COLUMNS = {
    "exact_rediscovery": "symbolic_solution",
    "feature_absence": "feature_absence",
    "extrapolation": "r2_extrapolation",
    "noise_robustness": "noise_robustness",
}

#: the metric of each task property in the competition's judge (stage1.ipynb ``task_property``):
#: every other task, noise and extrapolation included, is judged on plain test R2
REFERENCE_PROPERTY = {"exact_rediscovery": "symbolic_solution", "feature_absence": "feature_absence"}


def task_column(runs: pd.DataFrame, name: str, default: object = None) -> pd.Series:
    """A per-task column (property, difficulty) filled across the task's rows."""
    if name not in runs.columns:
        return pd.Series(default, index=runs.index, dtype=object)
    first = runs[name].groupby(runs["task"]).first()
    return runs["task"].map(first).where(lambda s: s.notna(), default)


def load_expert_scores(path: str | Path) -> pd.DataFrame:
    """The SRBench 2022 expert's ratings file -> DataFrame(task, method, trust)."""
    try:
        data = json.loads(Path(path).read_text())
        rows = [(t, m, float(v)) for t, by_m in data["ratings"].items() for m, v in by_m.items()]
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise ScoreError(f"cannot read expert trust ratings from {path}: {exc}") from None
    return pd.DataFrame(rows, columns=["task", "method", "trust"])


def match_trust(trust: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """Trust ratings name tasks as the competition did ('cases'); match our names by suffix.
    Returns (task, method, trust, expert_task): ``expert_task`` is the name the ratings use."""
    out = []
    for t in tasks:
        hit = trust[trust["task"] == t]
        if hit.empty:  # srbench2022-realworld-cases, 135_NY_value_cases_14_14, ...
            tokens = set(re.split(r"[-_]", t))
            hit = trust[trust["task"].astype(str).isin(tokens)]  # a list mask of no ratings would pick columns
        out.append(hit.assign(expert_task=hit["task"], task=t))
    cols = ["task", "method", "trust", "expert_task"]
    return pd.concat(out)[cols] if out else pd.DataFrame(columns=cols)


def representative(frame: pd.DataFrame, how: str) -> pd.Series | None:
    """The run of one (task, method) shown to the expert: the finished run whose test R2 is closest
    to the median test R2 of the finished runs (stage2_final_ratings.ipynb), or the best run."""
    ok = frame[(frame["status"] == "ok") & frame["r2_test"].notna()]
    if ok.empty:
        return None
    ok = ok.sort_values("seed")
    if how == "best":
        return ok.iloc[int(np.argmax(ok["r2_test"].to_numpy()))]
    med = float(np.median(ok["r2_test"]))
    return ok.iloc[int(np.argmin(np.abs(ok["r2_test"].to_numpy() - med)))]  # first (lowest seed) among equals


_representative = representative  # the name srtui.reviews.items imports
