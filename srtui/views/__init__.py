"""The app's facade: the one door of the Textual app (``srtui.app``) into the core. Harlequin's
adapter idea: the screens call these typed functions and get plain data back (the frozen
dataclasses below, tuples, dicts of plain values); they never reach the store's SQL, the scoring
rules, the tasks, the engine, ``runs`` or ``reviews`` themselves (the import-linter contract "The
app enters the core through its facade" in pyproject.toml).

No Textual here. Screens call these functions from thread workers on a :class:`Reader` (one
read-only connection per screen, guarded by its lock, so a screen's workers never share a cursor
across threads; WAL lets them read while a run in another process writes) and post the results as
messages.

``runs`` and ``reviews`` sit above ``results`` in the layers; this package alone reaches up to
them (the layers contract's one declared exception), for the app's start-a-run form and its review
screens. Every implementation is imported on first call: the expert's review app imports this
module for the text sanitiser and starts without pandas.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import time as _now
from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import safe_row, visible
from srtui.engine.workspace import Workspace
from srtui.results.metrics.profiles import Profile
from srtui.results.outputs.figures.plotdata import Plot, Trace
from srtui.results.store.columns import NUMBER_COLUMNS, TEXT_COLUMNS
from srtui.results.store.filters import QueryError
from srtui.results.store.queries import Reader
from srtui.results.store.store import Store, StoreError
from srtui.reviews import LIKERT, ExpertError, ExpertSession, ReviewError
from srtui.views.board import PUBLISHED_MARK, Board, BoardError
from srtui.views.choices import FormInput
from srtui.views.expression import ExpressionDetail, Rendered
from srtui.views.jobs import DetailError
from srtui.views.longtext import PAGE_BYTES, StoredText
from srtui.views.monitor import MonitorSnapshot
from srtui.views.plots import PlotKind, PredictionSeries, SuiteAggregate

if TYPE_CHECKING:
    # imported on first use (``__getattr__``): their modules load pandas or sympy
    from srtui.results.store.explore import ResultsPage, ResultsQuery
    from srtui.results.store.explore_sql import Cancelled
    from srtui.runs.options import RunRequest

#: the types above whose modules are heavy: name -> module, imported on first use
_HEAVY_TYPES = {
    "ResultsPage": "srtui.results.store.explore",
    "ResultsQuery": "srtui.results.store.explore",
    "Cancelled": "srtui.results.store.explore_sql",
    "RunRequest": "srtui.runs.options",
}

__all__ = [  # the facade's types and constants (its functions are defined below)
    "LIKERT",
    "NUMBER_COLUMNS",
    "PAGE_BYTES",
    "PUBLISHED_MARK",
    "TEXT_COLUMNS",
    "Board",
    "BoardError",
    "Cancelled",
    "DetailError",
    "ExpertError",
    "ExpertSession",
    "ExpressionDetail",
    "FormInput",
    "MonitorSnapshot",
    "Plot",
    "PlotKind",
    "PredictionSeries",
    "Profile",
    "QueryError",
    "Reader",
    "Rendered",
    "ResultsPage",
    "ResultsQuery",
    "ReviewError",
    "RunRequest",
    "SrtuiError",
    "Store",
    "StoreError",
    "StoredText",
    "SuiteAggregate",
    "Trace",
    "Workspace",
    "visible",
]

if not TYPE_CHECKING:  # hidden from mypy, so a misspelt name stays an error there

    def __getattr__(name: str) -> Any:
        if name not in _HEAVY_TYPES:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(_HEAVY_TYPES[name]), name)
        globals()[name] = value  # the next lookup is a plain one
        return value


def _never() -> bool:
    return False


# --- the workspace and the start-a-run form ----------------------------------------------------


def resolve_workspace(path: str | os.PathLike[str] | None) -> Workspace:
    """``--workspace``, else ``$SRTUI_WORKSPACE``, else ``./srtui-workspace``."""
    from srtui.engine.workspace import resolve

    return resolve(path)


def warm_up() -> None:
    """Import the expression stack (sympy) ahead of the first model shown."""
    from srtui.views.expression import warm_up as warm

    warm()


def run_form() -> list[FormInput]:
    """The start-a-run form's fields: the run options declared with one (srtui.runs.options)."""
    from srtui.views.choices import form_inputs

    return form_inputs()


def run_request(values: Mapping[str, str | Sequence[str]]) -> RunRequest:
    """The request the form's values mean (ValueError: a number field holding no number;
    SrtuiError: a list of names holding none)."""
    from srtui.views.choices import form_request

    return form_request(values)


@dataclass(frozen=True)
class RunOutcome:
    """How a run started from the app ended."""

    run_id: str
    counts: dict[str, int]  # status -> jobs
    skipped: int  # jobs already done before
    interrupted: bool


def check_run(workspace: Workspace, request: RunRequest) -> str | None:
    """Plan ``request`` without writing anything: None if it selects jobs, else the one line
    `srtui run` would print."""
    from srtui.runs.planning import plan_run

    try:
        plan = plan_run(workspace, request, write_data=False)
    except SrtuiError as exc:
        return str(exc)
    return None if plan.n_jobs else "nothing to run: these choices select no jobs"


def run_suite(workspace: Workspace, request: RunRequest, cancel: threading.Event, force: threading.Event) -> RunOutcome:
    """Plan and execute ``request`` in the calling thread (a worker living for the whole run);
    ``cancel`` stops it, ``force`` stops its jobs at once. Raises SrtuiError."""
    from srtui.runs.execution import execute
    from srtui.runs.planning import plan_run

    workspace.ensure()
    result = execute(plan_run(workspace, request), request, cancel=cancel, force=force)
    counts = {str(k): int(v) for k, v in result.state.counts.items()}
    return RunOutcome(result.run_id, counts, result.skipped, result.interrupted)


# --- the monitor and the results explorer ------------------------------------------------------


def monitor_snapshot(
    reader: Reader, previous: MonitorSnapshot | None = None, now: Callable[[], float] = _now
) -> MonitorSnapshot:
    """Counts, running jobs, throughput/ETA and recent failures; cheap when nothing changed."""
    from srtui.views.monitor import monitor_snapshot as snapshot

    return snapshot(reader, previous, now)


def results_page(reader: Reader, query: ResultsQuery, cancelled: Callable[[], bool] = _never) -> ResultsPage:
    """One window of jobs, or one row per group when grouping (raises Cancelled)."""
    from srtui.results.store.explore import results_page as page

    return page(reader, query, cancelled)


def count_jobs(reader: Reader, query: ResultsQuery, cancelled: Callable[[], bool] = _never) -> int | None:
    """The exact count of a page whose count was estimated (None: no store)."""
    from srtui.results.store.explore import count_jobs as count

    return count(reader, query, cancelled)


def prefetch_columns(reader: Reader) -> bool:
    """Load the reader's column store (seconds for a million jobs); False where it cannot."""
    from srtui.results.store.explore import prefetch_columns as prefetch

    return prefetch(reader)


def filter_token(column: str, value: Any) -> str:
    """The explorer's filter matching exactly ``value`` in ``column``."""
    from srtui.results.store.filters import filter_token as token

    return token(column, value)


def filter_problem(text: str) -> str | None:
    """Why the explorer's filter ``text`` is not one (None: it is)."""
    from srtui.results.store.filters import where_clause

    try:
        where_clause(text)
    except QueryError as exc:
        return str(exc)
    return None


# --- one run -------------------------------------------------------------------------------


def suites(reader: Reader) -> list[str]:
    """The suites with runs in the workspace."""
    from srtui.views.jobs import suites as names

    return names(reader)


def job_row(reader: Reader, job_id: str) -> dict[str, Any] | None:
    """One job's row as plain values; a model too long to read whole is a ``StoredText``."""
    from srtui.views.jobs import job_row as row

    return row(reader, job_id)


def features_of(workspace: Workspace, job: dict[str, Any]) -> tuple[str, ...] | None:
    """The feature names of a job's task (None when its data is not in the workspace)."""
    from srtui.views.jobs import features_of as features

    return features(workspace, job)


def expression_detail(reader: Reader, job_id: str) -> ExpressionDetail:
    """One run's model, metrics and Pareto front (raises DetailError)."""
    from srtui.views.expression import expression_detail as detail

    return detail(reader, job_id)


def read_page(reader: Reader, stored: StoredText, page: int) -> tuple[str, int, int]:
    """Page ``page`` of a long stored text: (the page made visible, its first byte, its last)."""
    from srtui.views.longtext import read_page as read

    return read(reader, stored, page)


def render(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """Every printed form of a model, under a deadline."""
    from srtui.views.expression import render as forms

    return forms(text, features, dialect)


def simplified(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """The simplified model, under a deadline."""
    from srtui.views.expression import simplified as simple

    return simple(text, features, dialect)


def prediction_series(reader: Reader, job_id: str) -> PredictionSeries:
    """One run's predictions against the truth (and the dates of a time series)."""
    from srtui.views.plots import prediction_series as series

    return series(reader, job_id)


# --- leaderboards and plots of a suite ---------------------------------------------------------


def rule_names() -> list[str]:
    """The scoring rules."""
    from srtui.views.board import rule_names as names

    return names()


def suite_rule(reader: Reader, suite: str) -> str | None:
    """The rule a suite names (built in, or the file its runs were given), if any."""
    from srtui.views.board import suite_rule as rule

    return rule(reader, suite)


def has_profiles(rule: str) -> bool:
    """Whether ``rule`` takes a profile (reference or corrected)."""
    from srtui.views.board import has_profiles as profiles

    return profiles(rule)


def has_published(rule: str) -> bool:
    """Whether SRBench's published results can stand beside ``rule``'s board."""
    from srtui.views.board import has_published as published

    return published(rule)


def load_board(
    reader: Reader, suite: str, rule: str, profile: Profile = Profile.REFERENCE, published: bool = False
) -> Board:
    """The suite's leaderboard under ``rule`` (raises BoardError)."""
    from srtui.views.board import load_board as board

    return board(reader, suite, rule, profile, published)


def export_board(board: Board, folder: Path) -> list[Path]:
    """Write a leaderboard and its breakdown as CSV; the paths written."""
    from srtui.views.board import export_board as export

    return export(board, folder)


def figure_for_rule(rule: str | None) -> str:
    """The publication figure that shows ``rule``'s leaderboard."""
    from srtui.results.outputs.figures import figure_for_rule as kind

    return kind(rule)


def suite_aggregate(reader: Reader, suite: str, profile: str = "reference") -> SuiteAggregate:
    """A suite's plots: every figure kind's data (srtui.results.outputs.figures), as `srtui plot` draws
    it; a kind the terminal cannot draw or the runs cannot feed says why (raises DetailError)."""
    from srtui.views.plots import suite_aggregate as aggregate

    return aggregate(reader, suite, profile)


# --- review sessions (the organiser's screens) -------------------------------------------------


def open_review_store(workspace: Workspace) -> Store:
    """The workspace's store, writable (close and unblind write), its text shown visibly."""
    store = Store(workspace)
    store.conn.row_factory = safe_row
    return store


def review_sessions(store: Store) -> list[dict[str, Any]]:
    """Every review session's row with its progress."""
    from srtui.reviews import sessions

    return sessions(store)


def review_progress(store: Store, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One session's row and its progress per expert (raises ReviewError: no such session)."""
    from srtui.reviews import session_row, status

    return session_row(store, name), status(store, name)


def review_report(store: Store, name: str) -> str:
    """The session's report as a text table."""
    from srtui.reviews import render_report

    return render_report(store, name, "table")


def change_review(store: Store, name: str, what: str) -> None:
    """``what`` = "close" (no more ratings) or "unblind" (only once closed; logged)."""
    from srtui.reviews import close, unblind

    (close if what == "close" else unblind)(store, name, "tui")


def short_time(stamp: str | None) -> str:
    """A stored UTC time as the review screens show it."""
    from srtui.reviews import short_time as short

    return short(stamp)
