"""The app's facade: everything the Textual app (``srtui.app``) shows, read from the core as plain
data. Harlequin's adapter idea: the screens talk to this one adapter, never to the store, the
scoring rules, the tasks or the engine directly.

No Textual here. Screens call these functions from thread workers on a ``results.store.queries.Reader``
(one read-only connection per screen, guarded by a lock, so a screen's workers never share a
cursor across threads; WAL lets them read while a run in another process writes) and post the
returned dataclasses as messages.

- monitor: ``monitor_snapshot`` (``MonitorSnapshot``, ``RunningJob``, ``Failure``)
- explorer: ``results_page``, ``count_jobs``, ``prefetch_columns``, ``where_clause`` and the
  column sets of ``results.store.explore`` and ``results.store.columns``; ``suites``, ``job_row``
- one run: ``expression_detail``, ``render``, ``simplified`` (``Rendered``), ``features_of``,
  ``prediction_series``; a model too long to read whole (``StoredText``) a page at a time:
  ``read_page`` (``PAGE_BYTES``); plots of a suite: ``suite_aggregate``, ``suite_method_medians``,
  ``method_looks`` (each method's colour and glyph, as its figures draw it)
- leaderboards: ``load_board``, ``export_board``, ``rule_names``, ``suite_rule``, ...
- the start-a-run form: ``suite_names``, ``installed_methods``, ``default_jobs``
- the core's names a screen needs: ``Workspace``, ``resolve_workspace``, ``Profile``,
  ``figure_for_rule``, ``Store`` (the review screens' writable store), the one text sanitiser
  (``visible``, ``safe_row``)

Each name is imported on first use (``__getattr__`` below), from where the imports under
``TYPE_CHECKING`` say it lives (mypy and import-linter read those same lines): the expert's
review app needs only the text sanitiser and starts without pandas.

The contract "The app enters the core through its doors" in pyproject.toml lets ``srtui.app``
import from the core only this package, the query API (``results.store.queries``), the error types
(``engine.errors``), and the two packages above ``results`` in the layers, which this package may
not import: ``runs.run`` (plan and execute a run) and ``reviews`` (review sessions).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.textsafe import safe_row, visible
    from engine.workspace import Workspace
    from engine.workspace import resolve as resolve_workspace
    from results.metrics.profiles import Profile
    from results.outputs.figures import figure_for_rule
    from results.scoring.resources import COLUMNS as COST_COLUMNS
    from results.scoring.resources import suite_method_medians
    from results.store.columns import NUMBER_COLUMNS, TEXT_COLUMNS
    from results.store.explore import (
        PAGE_COLUMNS,
        QueryError,
        ResultsPage,
        ResultsQuery,
        count_jobs,
        filter_token,
        prefetch_columns,
        results_page,
        where_clause,
    )
    from results.store.explore_sql import Cancelled
    from results.store.store import Store, StoreError
    from results.views.board import (
        Board,
        BoardError,
        export_board,
        has_profiles,
        has_published,
        load_board,
        rule_names,
        suite_rule,
    )
    from results.views.choices import default_jobs, installed_methods, suite_names
    from results.views.expression import (
        PRETTY_MAX_CHARS,
        ExpressionDetail,
        Rendered,
        expression_detail,
        render,
        simplified,
        warm_up,
    )
    from results.views.jobs import DetailError, features_of, job_row, suites
    from results.views.longtext import PAGE_BYTES, StoredText, read_page
    from results.views.monitor import Failure, MonitorSnapshot, RunningJob, monitor_snapshot
    from results.views.plots import (
        PredictionSeries,
        SuiteAggregate,
        method_looks,
        prediction_series,
        suite_aggregate,
    )

__all__ = [
    "COST_COLUMNS",
    "NUMBER_COLUMNS",
    "PAGE_BYTES",
    "PAGE_COLUMNS",
    "PRETTY_MAX_CHARS",
    "TEXT_COLUMNS",
    "Board",
    "BoardError",
    "Cancelled",
    "DetailError",
    "ExpressionDetail",
    "Failure",
    "MonitorSnapshot",
    "PredictionSeries",
    "Profile",
    "QueryError",
    "Rendered",
    "ResultsPage",
    "ResultsQuery",
    "RunningJob",
    "Store",
    "StoreError",
    "StoredText",
    "SuiteAggregate",
    "Workspace",
    "count_jobs",
    "default_jobs",
    "export_board",
    "expression_detail",
    "features_of",
    "figure_for_rule",
    "filter_token",
    "has_profiles",
    "has_published",
    "installed_methods",
    "job_row",
    "load_board",
    "method_looks",
    "monitor_snapshot",
    "prediction_series",
    "prefetch_columns",
    "read_page",
    "render",
    "resolve_workspace",
    "results_page",
    "rule_names",
    "safe_row",
    "simplified",
    "suite_aggregate",
    "suite_method_medians",
    "suite_names",
    "suite_rule",
    "suites",
    "visible",
    "warm_up",
    "where_clause",
]


def _where() -> dict[str, tuple[str, str]]:
    """name -> (module, attribute), read from the ``TYPE_CHECKING`` imports above (the one list of
    where each name lives; ``__all__`` repeats the names for mypy's explicit exports, and
    tests/e2e/test_tui_data.py checks the two agree)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.asname or alias.name: (node.module or "", alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


#: where each name lives: imported on first use at run time
_WHERE = _where()

if not TYPE_CHECKING:  # hidden from mypy, so a misspelt name stays an error there

    def __getattr__(name: str) -> Any:
        if name not in _WHERE:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, attribute = _WHERE[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value  # the next lookup is a plain one
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_WHERE})
