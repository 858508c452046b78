"""The job record: every column of the ``jobs`` table once, and the one mapping from a job's
outcome to the row the store writes.

The store (which columns a finished attempt writes), `srtui results` (which columns it prints,
in which order), the runs tables the scoring rules read and the app's explorer (which columns
it filters, sorts and groups on) all take their column lists from :data:`COLUMNS`.

Each accuracy metric is stored once: R², MSE and MAE of train and test in the job's row (schema
v7 moved them out of the ``metrics`` table; :data:`ACCURACY`), every other declared one in the
``metrics`` table. The driver writes the row's when the job ends (srtui.runs.sink, through the
declarations), and `srtui rescore` rewrites them from the stored predictions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # `srtui status` and `srtui results` read the registry without numpy
    from srtui.engine.process.job_io import JobOutcome

Kind = Literal["text", "int", "real", "json"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    #: written by the record of a finished attempt (else by planning, or by the store itself)
    result: bool = False
    #: printed by `srtui results`
    export: bool = True
    #: in the runs table the scoring rules read (srtui.results.scoring.tables)
    runs: bool = False
    #: the explorer may filter and sort on it (names are whitelisted, values bound)
    explore: bool = False
    #: the explorer may group on it
    group: bool = False
    #: a declared accuracy metric's value (srtui.results.metrics.accuracy) whose home is the job's row
    accuracy: bool = False


def _c(name: str, kind: Kind, flags: str = "") -> Column:
    """A column with flags: r result, x not exported, t runs table, e explorer, g grouping, a accuracy."""
    return Column(name, kind, "r" in flags, "x" not in flags, "t" in flags, "e" in flags, "g" in flags, "a" in flags)


#: in the order `srtui results` prints them
COLUMNS: tuple[Column, ...] = (
    _c("job_id", "text", "te"),
    _c("suite", "text", "teg"),
    _c("task", "text", "teg"),
    _c("method", "text", "teg"),
    _c("params", "json"),
    _c("seed", "int", "te"),
    _c("protocol", "json", "t"),  # what the run's protocol applied (srtui.engine.protocols.applied)
    _c("status", "text", "rteg"),
    _c("attempt", "int", "re"),
    _c("returncode", "int", "r"),
    _c("signal", "int", "r"),
    _c("wall_s", "real", "rte"),
    _c("fit_s", "real", "rte"),
    _c("cpu_s", "real", "re"),
    _c("peak_rss_mb", "real", "re"),
    _c("energy_j", "real", "rte"),
    _c("energy_method", "text", "rt"),
    _c("host", "text", "re"),
    _c("started_at", "text", "r"),
    _c("ended_at", "text", "r"),
    _c("model", "text", "rte"),
    _c("r2_train", "real", "rtea"),
    _c("r2_test", "real", "rtea"),
    _c("mse_train", "real", "rta"),
    _c("mse_test", "real", "rtea"),
    _c("mae_train", "real", "rta"),
    _c("mae_test", "real", "rtea"),
    _c("r2_test_expr", "real", "re"),
    _c("fidelity_r2", "real", "rte"),
    _c("max_abs_diff", "real", "rt"),
    _c("expression_mismatch", "int", "rt"),
    _c("model_error", "text", "r"),
    _c("error", "text", "rt"),
    _c("limit_detail", "text", "r"),
    _c("stderr_tail", "text", "r"),
    _c("data_fingerprint", "text"),
    _c("method_version", "text"),
    _c("method_notes", "json", "r"),
    # kept in the store, not printed
    _c("limits", "json", "x"),
    _c("spec", "json", "x"),
    _c("run_id", "text", "rx"),
    _c("worker_pid", "int", "rx"),
    _c("dialect", "text", "rxte"),
    _c("model_too_large", "int", "rxt"),
    _c("pareto", "json", "rx"),
)
BY_NAME = {c.name: c for c in COLUMNS}
JOB_COLUMNS = tuple(BY_NAME)

#: what a finished attempt writes into its job's row (srtui.results.store.store.Store.record)
RESULT_COLUMNS = tuple(c.name for c in COLUMNS if c.result)
#: what `srtui results` prints, in order
EXPORT_COLUMNS = tuple(c.name for c in COLUMNS if c.export)
#: the job columns of the runs table the scoring rules read
RUNS_COLUMNS = tuple(c.name for c in COLUMNS if c.runs)
#: the explorer's columns: text ones match as text, the others as numbers
TEXT_COLUMNS = tuple(c.name for c in COLUMNS if c.explore and c.kind == "text")
NUMBER_COLUMNS = tuple(c.name for c in COLUMNS if c.explore and c.kind in ("int", "real"))
GROUP_COLUMNS = tuple(c.name for c in COLUMNS if c.group)

#: the declared accuracy metrics whose home is the job's row (schema v7; written when the job
#: ends, read live by the monitor and by tuning); every other one lives in the ``metrics`` table,
#: and the consumers read both through srtui.results.metrics.pivot
ACCURACY = tuple(c.name for c in COLUMNS if c.accuracy)


def outcome_row(outcome: JobOutcome, attempt: int, run_id: str, scores: dict[str, Any]) -> dict[str, Any]:
    """The row of a finished attempt: what the worker reported, and ``scores``, what the driver
    computed from it (srtui.engine.outcome_check: accuracy, the model's parse and fidelity)."""
    row: dict[str, Any] = {
        "status": outcome.status,
        "attempt": attempt,
        "run_id": run_id,
        "returncode": outcome.returncode,
        "signal": outcome.signal,
        "wall_s": outcome.wall_s,
        "cpu_s": outcome.cpu_s,
        "peak_rss_mb": outcome.peak_rss_mb,
        "host": outcome.host,
        "started_at": outcome.started_at,
        "ended_at": outcome.ended_at,
        "stderr_tail": outcome.stderr_tail or None,
        "error": outcome.error,
        "limit_detail": outcome.limit_detail,
        "model": outcome.model,
        "dialect": outcome.dialect,
        "pareto": outcome.pareto or None,
        "method_notes": outcome.notes or None,
        "fit_s": outcome.fit_s,
        "energy_j": outcome.energy_j,
        "energy_method": outcome.energy_method,
    }
    unknown = set(scores) - set(RESULT_COLUMNS)
    if unknown:
        raise ValueError(f"not job record columns: {', '.join(sorted(unknown))}")
    return row | scores
