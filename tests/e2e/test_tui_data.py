"""The app's facade (srtui.views, no Textual): explorer queries, monitor snapshots, expression
rendering, leaderboards."""

from __future__ import annotations

import statistics

import pytest
from test_tui_seed import FIXED_NOW, MARKUP_MODEL, seed_demo

from srtui.results.store.filters import QueryError, where_clause
from srtui.results.store.queries import Reader
from srtui.views import (
    ResultsQuery,
    expression_detail,
    filter_problem,
    monitor_snapshot,
    render,
    results_page,
)
from srtui.views.expression import PRETTY_MAX_CHARS


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    r = Reader(seed_demo(tmp_path_factory.mktemp("data") / "ws"))
    yield r
    r.close()


def test_where_clause_binds_values_and_refuses_unknown_columns():
    sql, args = where_clause("method=linear,ffx status!=ok r2_test>0.5 task~feyn free")
    assert "method IN (?,?)" in sql and "status NOT IN (?)" in sql and "r2_test > ?" in sql
    assert args[:2] == ["linear", "ffx"] and 0.5 in args and "%feyn%" in args and "%free%" in args
    for bad in ("nosuch=1", "r2_test>abc", "task>3", "seed=1,x"):
        with pytest.raises(QueryError):
            where_clause(bad)
        assert filter_problem(bad)  # the app's check: the same one line
    # values never reach the SQL text
    sql, args = where_clause("method=x');DROP")
    assert "DROP" not in sql and args == ["x');DROP"]
    sql, args = where_clause("';DROP-TABLE-jobs;--=1")  # not a column: a bound free word
    assert "DROP" not in sql and args[0] == "%';DROP-TABLE-jobs;--=1%"


def test_results_page_filters_sorts_and_windows(reader):
    page = results_page(reader, ResultsQuery("status=ok", sort="r2_test", descending=True, limit=3))
    assert page.total == 4 and len(page.rows) == 3
    r2 = [row[page.columns.index("r2_test")] for row in page.rows]
    assert r2 == sorted(r2, reverse=True)
    second = results_page(reader, ResultsQuery("status=ok", sort="r2_test", descending=True, limit=3, offset=3))
    assert len(second.rows) == 1
    assert results_page(reader, ResultsQuery("r2_test>2")).total == 0


def test_grouped_summary_medians_match_python(reader):
    page = results_page(reader, ResultsQuery(group_by=("method",), sort="method"))
    by = {row[0]: dict(zip(page.columns, row)) for row in page.rows}
    assert set(by) == {"linear", "ridge", "probe-noop", "probe-crash", "probe-sleep"}
    assert by["probe-sleep"]["jobs"] == 2 and by["probe-sleep"]["ok"] == 0
    # accuracy is stored once: the job rows hold the R² the scoring recomputed from the predictions
    ridge = [j["r2_test"] for j in reader.store().jobs() if j["method"] == "ridge"]
    assert len(ridge) == 2 and all(0.95 < r < 1 for r in ridge)
    assert by["ridge"]["median_r2_test"] == pytest.approx(statistics.median(ridge))
    assert by["probe-crash"]["median_r2_test"] is None and by["probe-crash"]["failed"] == 2
    with pytest.raises(QueryError):
        results_page(reader, ResultsQuery(group_by=("model",)))


def test_board_shows_scoring_errors_and_keeps_the_profile(reader, monkeypatch):
    from srtui.results.metrics.profiles import Profile
    from srtui.views import BoardError, has_profiles, load_board

    assert has_profiles("srbench2025") and not has_profiles("no-such-rule")
    assert load_board(reader, "smoke", "srbench2025", Profile.CORRECTED).profile is Profile.CORRECTED
    assert load_board(reader, "smoke", "srbench2025").profile is Profile.REFERENCE
    with pytest.raises(BoardError, match="unknown scoring rule 'no-such-rule'"):  # shown, not hidden
        load_board(reader, "smoke", "no-such-rule")

    def broken(name: str) -> None:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr("srtui.results.scoring.get_rule", broken)
    with pytest.raises(RuntimeError, match="a bug in a rule"):  # a bug is not taken for "no profiles"
        has_profiles("srbench2025")


def test_monitor_snapshot_counts_and_skips_work_when_unchanged(reader):
    snap = monitor_snapshot(reader, now=lambda: FIXED_NOW)
    assert snap.counts["running"] == 1 and snap.remaining == 2 and snap.total == 10
    assert snap.active_runs == 1 and snap.throughput is not None and snap.eta_s is not None
    assert [f.status for f in snap.failures].count("crashed") == 2
    assert monitor_snapshot(reader, snap, now=lambda: FIXED_NOW) is snap  # PRAGMA data_version unchanged


def test_monitor_flags_the_running_jobs_of_a_dead_driver(tmp_path):
    """A driver killed with no write of its own: the next poll says its job is not running."""
    import sqlite3
    import subprocess
    import sys

    from srtui.engine.process.tree import driver_identity

    ws = seed_demo(tmp_path / "ws")
    driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with sqlite3.connect(ws.db_path) as conn:
            conn.execute("UPDATE runs SET driver = ?", (driver_identity(driver.pid),))
        reader = Reader(ws)
        live = monitor_snapshot(reader, now=lambda: FIXED_NOW)
        assert live.active_runs == 1 and live.gone_runs == 0 and not live.running[0].driver_gone
        assert monitor_snapshot(reader, live, now=lambda: FIXED_NOW) is live
    finally:
        driver.kill()
        driver.wait()
    gone = monitor_snapshot(reader, live, now=lambda: FIXED_NOW)  # same data version, dead driver
    assert gone is not live and gone.gone_runs == 1 and gone.active_runs == 0
    assert [job.driver_gone for job in gone.running] == [True] and gone.throughput is None
    assert monitor_snapshot(reader, gone, now=lambda: FIXED_NOW) is gone


def test_render_pretty_long_and_bad_expressions():
    r = render("x0**2 + sin(x1)/3", ("x0", "x1"))
    assert r.unicode is not None and r.ascii is not None
    assert r.pretty and "x₀" in r.unicode and "x0" in r.ascii and r.latex and r.n_nodes
    long = " + ".join(f"{i}.5*x0" for i in range(200))
    assert len(long) >= PRETTY_MAX_CHARS
    r = render(long, ("x0",))
    assert not r.pretty and r.latex is not None and r.text == long
    r = render(MARKUP_MODEL, ("x0", "x1"))
    assert not r.pretty and r.error and r.text == MARKUP_MODEL
    r = render("__import__('os').system('true')", ("x0",))
    assert r.error and not r.pretty


def test_expression_detail_has_truth_metrics_and_pareto(reader):
    store = reader.store()
    ridge = next(j["job_id"] for j in store.jobs() if j["method"] == "ridge")
    d = expression_detail(reader, ridge)
    assert d.truth is not None and d.truth.pretty
    assert len(d.pareto) == 2
    names = [label for label, _ in d.metrics]
    assert (
        "fidelity R² (expression vs method)" in names and "size (nodes)" in names
    )  # srtui.results.metrics.compute rows too, in words


def test_labels_of_the_cost_plot_never_share_a_row_where_they_overlap():
    from srtui.app.terminal_plot import place_labels

    cell = (0.1, 0.2)  # one character in data units
    # ffx and pyoperon at almost the same height: the second moves a row, a far one stays
    rows = place_labels([(1.0, 1.0, 3), (1.2, 1.05, 8), (5.0, 1.0, 5)], cell, top=10.0)
    assert rows[0] == 1.0 and rows[2] == 1.0 and rows[1] is not None and abs(rows[1] - rows[0]) >= 0.2 - 1e-9
    # at the top of the plot a label moves down instead
    rows = place_labels([(1.0, 9.9, 3), (1.1, 9.95, 3)], cell, top=10.0)
    assert all(r is not None and r <= 10.0 for r in rows) and abs(rows[1] - rows[0]) >= 0.2 - 1e-9  # type: ignore[operator]
    # many labels at one point: three find a row (the point's, one up, one down), the others are
    # left to the legend: a label is never rows (on log axes, decades) away from its point (#55)
    rows = place_labels([(0.0, 5.0, 6)] * 5, cell, top=10.0)
    written = [r for r in rows if r is not None]
    assert len({round(r, 6) for r in written}) == 3 and rows.count(None) == 2
    assert all(abs(r - 5.0) <= 0.2 + 1e-9 for r in written)


def test_methods_hidden_under_another_marker_of_the_front_plot_are_named():
    from srtui.app.terminal_plot import shared_cells

    points = {"poly2": (10.0, 1.0), "pyoperon": (10.2, 1.0), "linear": (9.5, 0.97), "ffx": (40.0, 0.998)}
    assert shared_cells(points, (60, 15)) == {"poly2": "pyoperon", "pyoperon": "poly2"}
    assert shared_cells({"a": (1.0, 1.0)}, (60, 15)) == {}


def test_the_facade_is_typed_functions_and_its_types() -> None:
    """srtui.views is an interface: typed, documented functions defined there, and the types
    and constants they take and return (``__all__``), the heavy ones imported on first use."""
    import inspect

    import srtui.views as views

    functions = {
        name: f
        for name, f in vars(views).items()
        if inspect.isfunction(f) and f.__module__ == views.__name__ and not name.startswith("_")
    }
    assert {"suite_aggregate", "load_board", "results_page", "run_suite", "review_sessions"} <= set(functions)
    for name, f in functions.items():
        signature = inspect.signature(f)
        assert signature.return_annotation is not inspect.Signature.empty, name
        assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values()), name
        assert f.__doc__, name
    assert not set(functions) & set(views.__all__)
    for name in views.__all__:
        assert getattr(views, name) is not None, name
    missing = "no_such_name"
    with pytest.raises(AttributeError):
        getattr(views, missing)


def test_the_expert_app_starts_without_the_explorer_stack() -> None:
    """The expert's review app needs only the facade's text sanitiser: pandas stays unloaded."""
    import subprocess
    import sys

    script = "import sys, srtui.app.review.expert; print('pandas' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr[-2000:]


def test_a_label_of_the_cost_plot_never_covers_another_point():
    """Seen at 80x24 on the smoke suite: gplearn's label was written over ffx's marker, and ffx
    was on no part of the plot. A label that would cover a point is moved or left to the legend."""
    from srtui.app.terminal_plot import place_labels

    cell = (0.1, 0.2)
    gplearn, ffx = (1.0, 5.0), (1.4, 5.05)  # ffx's marker lies where gplearn's label would start
    rows = place_labels([(1.2, 5.0, 7), (1.6, 5.05, 3)], cell, top=10.0, points=[gplearn, ffx])
    assert rows[0] is None or abs(rows[0] - 5.05) >= 0.1  # gplearn's label is off ffx's row
    assert rows[1] is not None  # ffx's own label is written
