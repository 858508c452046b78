"""The one pivot of the accuracy metrics: every declared stored name of some jobs as a column,
wherever its value lives.

Each accuracy metric (srtui.results.metrics.accuracy) is stored once: the job's row holds those of
``srtui.results.store.columns.ACCURACY`` (R², MSE and MAE per split, schema v7), the ``metrics`` table
every other. `srtui results` (:func:`select_items`), `srtui export` and every scoring rule
(``srtui.results.scoring.tables.runs_frame``: :func:`with_every_column`) and the app's expression
screen (``srtui.views.expression``: :func:`job_values`, :func:`labelled`) read them here, so a
new declaration reaches each of them with no list to edit (tests/e2e/test_accuracy_consumers.py).
Numpy is not imported: `srtui results` reads the store only.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from srtui.results.metrics import accuracy
from srtui.results.store.columns import ACCURACY

if TYPE_CHECKING:
    import pandas as pd

    from srtui.results.store.store import Store


def stored_names() -> tuple[str, ...]:
    """Every declared accuracy metric's stored names, in the order they are declared."""
    return tuple(accuracy.by_stored_name())


def in_metrics_table() -> tuple[str, ...]:
    """The declared names whose home is the ``metrics`` table (every one the job's row has not)."""
    return tuple(n for n in stored_names() if n not in ACCURACY)


def select_items(table: str = "jobs") -> list[str]:
    """SQL select items giving each metrics-table name as a column of a query over ``table``
    (the jobs): a lookup on the table's primary key (job_id, name). The names are declared
    (lower-case words, srtui.results.metrics.accuracy.declare), never input."""
    return [
        f"(SELECT m.value FROM metrics m WHERE m.job_id = {table}.job_id AND m.name = '{name}') AS {name}"
        for name in in_metrics_table()
    ]


def has_metrics_table(store: Store) -> bool:
    return store.has_table("metrics")


def job_values(store: Store, job: dict[str, Any]) -> dict[str, Any]:
    """Every declared stored name of one job (its row as read, ``job``) with its value, None
    where there is none yet (not scored, or a task-scoped metric of another task)."""
    values = {name: job.get(name) for name in stored_names()}
    wanted = in_metrics_table()
    if wanted and has_metrics_table(store):
        q = f"SELECT name, value FROM metrics WHERE job_id = ? AND name IN ({','.join('?' * len(wanted))})"
        try:
            values.update(store.conn.execute(q, (job.get("job_id"), *wanted)).fetchall())
        except sqlite3.OperationalError:  # an unreadable older table: the row's values only
            pass
    return values


def labelled(values: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(label, value)`` of each declared stored name, in declared order, with the declaration's
    words; a task-scoped metric only where it has a value (another task's property is not this one's)."""
    labels, declared = accuracy.labels(), accuracy.by_stored_name()
    return [
        (labels[name], values.get(name))
        for name in stored_names()
        if declared[name].scope != "task" or values.get(name) is not None
    ]


def with_every_column(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs table with a column for each declared stored name (empty where none is stored
    yet), so a rule reads a declared metric before the first job stores it."""
    missing = [n for n in stored_names() if n not in runs.columns]
    return runs.reindex(columns=[*runs.columns, *missing]) if missing else runs
