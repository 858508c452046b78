"""The runs table every scoring rule reads: one row per job, from the store or from a CSV file.

Columns (``--from-csv`` files use the same names; only ``task``, ``method`` and ``r2_test`` are
required, the others are used by the rules that need them):

=====================  ==========================================================================
task, method           dataset and method names (SRBench's ``dataset``/``algorithm`` accepted)
seed                   run seed (``random_state`` accepted); default 0
status                 ``ok`` or a failure (error, timeout, oom, ...); default ``ok``; a run that
                       is not ok counts as the worst value in every rule
r2_test, r2_train      coefficient of determination
r2_test_3              test R2 rounded to 3 decimals (computed from r2_test when absent)
mse_test, mae_test     errors; nmse_test = mean((y - yhat)^2 / (|y| + 1e-5))
size                   node count of the unsimplified sympy tree (``model_size`` accepted)
size_simplified        node count after sympy simplify (``simplified_complexity`` accepted)
simplicity             round(-log5(size_simplified), 1) (computed when absent)
symbolic_solution      1 if the model is a symbolic solution, else 0
feature_absence        share of irrelevant/shortcut features the model leaves out (0..1)
r2_extrapolation       test R2 of an extrapolation task
noise_robustness       test R2 relative to the noiseless twin task
track, difficulty      the task's track and difficulty (per-difficulty breakdowns)
property               the task's scored property: exact_rediscovery, feature_absence,
                       extrapolation, noise_robustness, trust or accuracy
noise                  the task's noise level (solution rate per noise level)
truth_size             node count of the ground truth's unsimplified tree (Pareto fronts)
ground_truth           the task's ground-truth formula (empty: none; solution rates count only
                       tasks that have one)
=====================  ==========================================================================
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.results.metrics import pivot
from srtui.results.store.columns import ACCURACY, RUNS_COLUMNS
from srtui.results.store.typed import task_infos, typed_jobs

if TYPE_CHECKING:
    from srtui.results.store.store import Store

ALIASES = {
    "dataset": "task",
    "algorithm": "method",
    "random_state": "seed",
    "model_size": "size",
    "simplified_complexity": "size_simplified",
    "target_noise": "noise",
    "training time (s)": "wall_s",  # SRBench's collated docs/csv tables
}
REQUIRED = ("task", "method", "r2_test")
#: the job record's columns in the runs table (srtui.results.store.columns)
JOB_COLUMNS = RUNS_COLUMNS
TASK_FIELDS = ("track", "difficulty", "property", "noise")


class TablesError(SrtuiError, ValueError):
    """A runs table that cannot be read; one line for the CLI."""


def normalise(runs: pd.DataFrame) -> pd.DataFrame:
    """Fill derived columns and defaults so every rule sees the same shape."""
    runs = runs.rename(columns={k: v for k, v in ALIASES.items() if k in runs.columns and v not in runs.columns})
    missing = [c for c in REQUIRED if c not in runs.columns]
    if missing:
        raise TablesError(f"runs table lacks column(s) {', '.join(missing)} (see `srtui score --help`)")
    runs = runs.copy()
    if "seed" not in runs.columns:
        runs["seed"] = 0
    if "status" not in runs.columns:
        runs["status"] = "ok"
    runs["status"] = runs["status"].fillna("ok").astype(str)
    runs["task"], runs["method"] = runs["task"].astype(str), runs["method"].astype(str)
    for col in runs.columns:
        if (
            col
            not in (
                "task",
                "method",
                "status",
                "suite",
                "job_id",
                "model",
                "dialect",
                "track",
                "difficulty",
                "property",
                "error",
                "notes",
                "ground_truth",
            )
            and runs[col].dtype == object
        ):
            conv = pd.to_numeric(runs[col], errors="coerce")
            if conv.notna().sum() >= runs[col].notna().sum():
                runs[col] = conv
    # non-finite accuracy is no accuracy (a run with nan/inf predictions ranks worst)
    for col in [c for c in runs.columns if c.startswith(("r2_", "mse_", "mae_", "nmse_"))]:
        if pd.api.types.is_numeric_dtype(runs[col]):
            runs.loc[~np.isfinite(runs[col].astype(float)), col] = np.nan
    if "r2_test_3" not in runs.columns:
        runs["r2_test_3"] = runs["r2_test"].round(3)
    if "simplicity" not in runs.columns:
        size = runs["size_simplified"] if "size_simplified" in runs.columns else runs.get("size")
        if size is not None:
            runs["simplicity"] = [(_simplicity(s)) for s in size]
    return runs


def _simplicity(size: float | str | None) -> float:
    if size is None:
        return np.nan
    try:
        value = float(size)
    except (TypeError, ValueError):
        return np.nan
    return round(-math.log(value, 5), 1) + 0.0 if value >= 1 else np.nan


def read_runs_csv(path: str | Path) -> pd.DataFrame:
    """A CSV runs table (srtui's own, or SRBench's collated ``docs/csv`` tables: one row per method
    and dataset), or SRBench's ``evaluate_model.py`` JSON results (a directory or a ``.json``)."""
    path = Path(path)
    if path.is_dir() or (path.is_file() and path.suffix.lower() == ".json"):
        from srtui.results.scoring.srbench_files import SRBenchFileError, read_results

        try:
            return normalise(read_results(path))
        except SRBenchFileError as exc:
            raise TablesError(str(exc)) from None
    if not path.is_file():
        raise TablesError(f"no such file: {path}")
    skip = 0  # srtui's own CSV output starts with '# rule ...' comment lines
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            skip += 1
    try:
        df = pd.read_csv(path, skiprows=skip)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise TablesError(f"{path} is not a readable CSV file: {' '.join(str(exc).split())}") from None
    if "symbolic_solution_rate_(%)" in df.columns and "symbolic_solution" not in df.columns:
        df["symbolic_solution"] = df["symbolic_solution_rate_(%)"] / 100  # groundtruth.csv: a rate per dataset
    runs = normalise(df)
    for col in [c for c in runs.columns if c.startswith(("r2_", "mse_", "mae_", "nmse_"))]:
        if not pd.api.types.is_numeric_dtype(runs[col]):  # a score cannot be text
            bad = next(v for v in runs[col] if pd.notna(v) and pd.isna(pd.to_numeric(v, errors="coerce")))
            raise TablesError(f"{path}: column {col} must hold numbers, found {str(bad)[:40]!r}")
    return runs


def runs_frame(store: Store, suite: str | None = None) -> pd.DataFrame:
    """Every job of the workspace (or of one suite) with its metrics and its task's description."""
    # a read-only workspace of an older schema lacks the newer columns: they come out empty
    present = [c for c in JOB_COLUMNS if c in {r[1] for r in store.conn.execute("PRAGMA table_info(jobs)")}]
    jobs = typed_jobs(_jobs_frame(store, suite, present)).reindex(columns=list(JOB_COLUMNS))
    q = "SELECT m.job_id, m.name, m.value FROM metrics m"
    args: tuple[str, ...] = ()
    if suite:
        q, args = q + " JOIN jobs j ON j.job_id = m.job_id WHERE j.suite = ?", (suite,)
    long = pd.DataFrame(store.conn.execute(q, args).fetchall(), columns=["job_id", "name", "value"])
    if len(long):
        long["name"] = long["name"].astype(str)
        values = long["value"]  # numbers already unless some value is text or a blob (a Python call per value)
        if not pd.api.types.is_numeric_dtype(values):
            values = values.map(lambda v: v if isinstance(v, int | float) else None)
        long["value"] = pd.to_numeric(values)
        # accuracy is the job record's (a workspace before schema v7 has a copy here too)
        # "_version", "_where": bookkeeping rows, not metrics
        long = long[~long["name"].str.startswith("_") & ~long["name"].isin(ACCURACY)]
        wide = long.pivot(index="job_id", columns="name", values="value").reset_index()
        wide.columns.name = None
        jobs = jobs.merge(wide, on="job_id", how="left")
        notes = dict(store.conn.execute("SELECT job_id, detail FROM metrics WHERE name = '_version'"))
        jobs["notes"] = jobs["job_id"].map(notes)
    jobs = pivot.with_every_column(_with_search_time(store, jobs))  # every declared accuracy metric
    infos = task_infos(store)
    for field in TASK_FIELDS:
        jobs[field] = jobs["task"].map({t: info.get(field) for t, info in infos.items()})  # per task, not per row
    jobs["truth_size"] = jobs["task"].map(_truth_sizes(infos))
    # the formula, not only its size: a truth too large to parse is still a truth (srbench-groundtruth)
    jobs["ground_truth"] = jobs["task"].map({t: info.get("ground_truth") or None for t, info in infos.items()})
    return normalise(jobs) if len(jobs) else jobs


def _with_search_time(store: Store, jobs: pd.DataFrame) -> pd.DataFrame:
    """``search_s`` of a tuned final job: its search's fit times (the jobs of ``SUITE@tuning`` of
    its task, method and seed) plus its own, the whole ``HalvingGridSearchCV.fit`` that SRBench
    2021 timed as a run's training time (refit included); empty for a job nobody tuned."""
    from srtui.results.store.tuning import TUNING_SUFFIX

    if jobs.empty or "fit_s" not in jobs.columns:
        return jobs
    rows = store.conn.execute(
        "SELECT substr(suite, 1, length(suite) - ?), task, method, seed, SUM(fit_s) FROM jobs "
        "WHERE suite LIKE ? GROUP BY 1, 2, 3, 4",
        (len(TUNING_SUFFIX), "%" + TUNING_SUFFIX),
    ).fetchall()
    if not rows:
        return jobs
    search = pd.DataFrame(rows, columns=["suite", "task", "method", "seed", "_tuning_s"])
    out = jobs.merge(search, on=["suite", "task", "method", "seed"], how="left")
    out["search_s"] = pd.to_numeric(out["_tuning_s"], errors="coerce") + pd.to_numeric(out["fit_s"], errors="coerce")
    return out.drop(columns="_tuning_s")


def _jobs_frame(store: Store, suite: str | None, columns: list[str]) -> pd.DataFrame:
    """The jobs' columns, read 100,000 rows at a time (a million jobs as dicts would not fit)."""
    q = f"SELECT {', '.join(columns)} FROM jobs" + (" WHERE suite = ?" if suite else "")
    cur = store.conn.execute(q + " ORDER BY suite, task, method, seed, job_id", (suite,) if suite else ())
    parts = []
    while chunk := cur.fetchmany(100_000):
        parts.append(pd.DataFrame.from_records(chunk, columns=columns))
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).infer_objects()  # a chunk of only NULLs is not typed


def _truth_sizes(infos: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Each task's ground-truth node count; kept by the truths and the parser's code
    (``srtui.engine.kept``), so a second `score`, `plot` or `report` imports no sympy (1.5 s, #56)."""
    truths = {
        t: (str(i["ground_truth"]), [str(f) for f in i.get("features") or []])
        for t, i in infos.items()
        if i.get("ground_truth")
    }
    if not truths:
        return {}  # no sympy import (1.5 s) for tasks without a ground truth
    from srtui.engine import kept

    key = _truth_key(truths)
    found = kept.cached("truth-sizes", key)
    if isinstance(found, dict) and set(found) == set(truths) and all(_count(v) for v in found.values()):
        return {t: np.nan if v is None else float(v) for t, v in found.items()}
    out = _count_truths(truths)
    kept.keep("truth-sizes", key, {t: None if math.isnan(v) else v for t, v in out.items()})
    return out


def _count(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _truth_key(truths: dict[str, tuple[str, list[str]]]) -> str:
    """The truths, srtui's parser and sympy: what a node count depends on."""
    import hashlib
    import json

    from srtui.engine import kept

    parser = sorted(str(p) for p in (Path(__file__).parents[2] / "engine" / "expression").glob("*.py"))
    truth_text = json.dumps(sorted(truths.items()))
    key = kept.code_key("srtui-truth-sizes 1", ["sympy", "srtui.results.metrics.expr_metrics"], truth_text)
    digest = hashlib.sha256(key.encode())
    kept.stamp(digest, parser)  # srtui's parser, edited or not
    return digest.hexdigest()


def _count_truths(truths: dict[str, tuple[str, list[str]]]) -> dict[str, float]:
    from srtui.results.metrics.expr_metrics import ExpressionError, node_count, parse

    out: dict[str, float] = {}
    for task, (truth, feats) in truths.items():
        try:
            p = parse(truth, feats, "python")
            out[task] = float(node_count(p.expr)) if not p.too_large else np.nan
        except ExpressionError:
            out[task] = np.nan
    return out
