"""The explorer's fast paths (the column store, job_counts, estimated counts) never change an
answer: every filter, sort and grouping equals a plain SQL query over the same small store,
before and after the store changes under the reader."""

from __future__ import annotations

import math
import random
import sqlite3
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srtui.engine.spec import JobSpec, Limits
from srtui.engine.workspace import Workspace
from srtui.results.store import colstore
from srtui.results.store.explore import ResultsQuery, count_jobs, results_page, where_clause
from srtui.results.store.explore_sql import Cancelled, watch
from srtui.results.store.filters import parse_filter
from srtui.results.store.queries import Reader
from srtui.results.store.store import Store

SUITES = ("alpha", "Beta_1", "g%mma")
TASKS = ("feynman-I", "FEYNMAN-ii", "task_1", "task%2", "strogatz é", "ode")
METHODS = ("linear", "ffx", "pysr", "gp_lus", "Operon")
STATUSES = ("ok", "ok", "ok", "error", "timeout", "pending", "running", "invalid_model")
GROUPINGS = ((), ("method",), ("suite", "method"), ("task",), ("task", "method"), ("status",), ("method", "status"))
SORTS = ("task", "method", "seed", "status", "r2_test", "wall_s", "suite", "job_id", "model")
TIES = ("task", "method", "seed", "job_id")
PAGE = ("task", "method", "seed", "status", "r2_test", "wall_s", "model", "suite", "job_id")


def _fill(store: Store, n: int, rng: random.Random, first_seed: int = 0) -> None:
    limits = Limits(time_s=60)
    specs = [
        JobSpec(rng.choice(SUITES), rng.choice(TASKS), rng.choice(METHODS), first_seed + i, limits, "f" * 8, "v1")
        for i in range(n)
    ]
    store.plan(specs)
    with store.transaction() as c:
        for s in specs:
            status = rng.choice(STATUSES)
            r2 = rng.choice([None, 1.0, 0.5, -math.inf, round(rng.uniform(-1, 1), 2), rng.random()])
            wall = rng.choice([None, 3.0, rng.uniform(0, 100)])
            model = rng.choice([None, "x0 + 1", f"sin(x{rng.randrange(3)})"])
            c.execute(
                "UPDATE jobs SET status = ?, r2_test = ?, wall_s = ?, model = ? WHERE job_id = ?",
                (status, r2, wall, model, s.job_id),
            )


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("scale") / "ws").ensure()
    store = Store(ws, create=True)
    _fill(store, 400, random.Random(3))
    fast = Reader(ws)
    assert fast.load_columns()
    plain = sqlite3.connect(ws.db_path)
    slow = Reader(ws)  # no column store: job_counts, the indexes, estimated counts
    yield store, fast, plain, slow
    plain.close()
    slow.close()
    fast.close()
    store.close()


def _reference_page(conn: sqlite3.Connection, q: ResultsQuery):
    where, args = where_clause(q.filter_text)
    total = conn.execute(f"SELECT count(*) FROM jobs{where}", args).fetchone()[0]
    if not q.group_by:
        d = "DESC" if q.descending else "ASC"  # ties: task, method, seed, job_id, the same way
        order = ", ".join([f"{q.sort} {d} NULLS LAST", *(f"{c} {d}" for c in TIES if c != q.sort)])
        rows = conn.execute(
            f"SELECT {', '.join(PAGE)} FROM jobs{where} ORDER BY {order} LIMIT ? OFFSET ?", [*args, q.limit, q.offset]
        ).fetchall()
        return total, [tuple(r) for r in rows]
    keys = ", ".join(q.group_by)
    found = conn.execute(
        f"SELECT {keys}, count(*), sum(status = 'ok'), sum(status NOT IN ('ok', 'pending', 'running')), "
        f"avg(r2_test), max(r2_test), avg(wall_s) FROM jobs{where} GROUP BY {keys}",
        args,
    ).fetchall()
    k = len(q.group_by)
    r2s: dict[tuple, list[float]] = {}
    for row in conn.execute(f"SELECT {keys}, r2_test FROM jobs{where}", args):
        if row[k] is not None:
            r2s.setdefault(tuple(row[:k]), []).append(row[k])
    groups = []
    for row in found:
        values = r2s.get(tuple(row[:k]), [])
        median = statistics.median(values) if values else None
        groups.append((*row[:k], row[k], row[k + 1], row[k + 2], median, row[k + 3], row[k + 4], row[k + 5]))
    cols = (*q.group_by, "jobs", "ok", "failed", "median_r2_test", "mean_r2_test", "best_r2_test", "mean_wall_s")
    at = cols.index(q.sort) if q.sort in cols else 0
    k = len(q.group_by)
    present = sorted((g for g in groups if g[at] is not None), key=lambda g: g[:k])
    present.sort(key=lambda g: g[at], reverse=q.descending)  # stable: ties stay by group keys
    groups = present + sorted((g for g in groups if g[at] is None), key=lambda g: g[:k])
    return len(groups), groups[q.offset : q.offset + q.limit]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isinf(a) and a == b)
    return a == b


def _check(reader: Reader, conn: sqlite3.Connection, q: ResultsQuery) -> None:
    page = results_page(reader, q)
    if reader.columns is not None and reader.columns.answers(parse_filter(q.filter_text), q.sort or None):
        assert page.exact  # from memory: counted, never estimated
    total, rows = _reference_page(conn, q)
    if not page.exact:
        page_total = count_jobs(reader, q)
    else:
        page_total = page.total
    assert page_total == total, q
    assert len(page.rows) == len(rows), q
    for got, want in zip(page.rows, rows):
        assert all(_same(a, b) for a, b in zip(got, want)), (q, got, want)


_WORDS = st.sampled_from(
    [*SUITES, *TASKS, *METHODS, "ok", "error", "feyn", "FEYN", "task_", "%", "_", "é", "", "x", "mm"]
)
_NUMBERS = st.sampled_from(["0.5", "1", "-inf", "inf", "0", "3", "nan", "0.25", "-1"])


@st.composite
def _token(draw) -> str:
    kind = draw(st.sampled_from(["text", "number", "word", "empty", "like_number", "other"]))
    if kind == "text":
        col = draw(st.sampled_from(["suite", "task", "method", "status"]))
        op = draw(st.sampled_from(["=", "!=", "~"]))
        values = draw(st.lists(_WORDS, min_size=1, max_size=2))
        if op == "~" or any(" " in v or "," in v or not v for v in values):
            return f'{col}{op}"{values[0]}"' if op != "~" else f"{col}~{values[0] or 'a'}"
        return f"{col}{op}{','.join(values)}"
    if kind == "number":
        col = draw(st.sampled_from(["seed", "r2_test", "wall_s"]))
        op = draw(st.sampled_from(["=", "!=", ">", "<", ">=", "<="]))
        return f"{col}{op}{draw(_NUMBERS)}"
    if kind == "empty":
        return f'{draw(st.sampled_from(["r2_test", "wall_s", "task"]))}{draw(st.sampled_from(["=", "!="]))}""'
    if kind == "like_number":
        return f"r2_test~{draw(st.sampled_from(['5', '0.', '1']))}"
    if kind == "other":
        return draw(st.sampled_from(["model~sin", 'model=""', "attempt=0", "host~x"]))
    return draw(_WORDS) or "a"


_QUERIES = st.builds(
    lambda tokens, sort, desc, group, offset: ResultsQuery(
        " ".join(tokens),
        sort=sort if not group else st_sort_for_group(group, sort),
        descending=desc,
        group_by=group,
        offset=offset,
        limit=7,
    ),
    st.lists(_token(), max_size=3),
    st.sampled_from(SORTS),
    st.booleans(),
    st.sampled_from(GROUPINGS),
    st.sampled_from([0, 3, 50]),
)


def st_sort_for_group(group: tuple[str, ...], sort: str) -> str:
    summary = ("jobs", "ok", "failed", "median_r2_test", "mean_r2_test", "best_r2_test", "mean_wall_s")
    return (*group, *summary)[hash(sort) % (len(group) + len(summary))]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=_QUERIES)
def test_every_filter_sort_and_group_equals_plain_sql(world, q):
    _store, fast, plain, slow = world
    _check(fast, plain, q)
    _check(slow, plain, q)
    block, colstore.BLOCK = colstore.BLOCK, 5  # pages that walk several blocks of the order
    try:
        _check(fast, plain, q)
    finally:
        colstore.BLOCK = block


def test_a_sort_lists_ties_by_task_method_and_seed_both_ways(tmp_path):
    """Sorted by task, each task's methods and seeds come in order (they came in job-id order,
    which looks random), from memory and from SQL alike; descending reverses the whole list."""
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    specs = [
        JobSpec("s", task, method, seed, Limits(time_s=60), "f" * 8, "v1")
        for task in ("b", "a")
        for method in ("ffx", "linear", "Operon")
        for seed in (9023, 2082, 15795)
    ]
    random.Random(1).shuffle(specs)
    store.plan(specs)
    fast, slow = Reader(ws), Reader(ws)
    assert fast.load_columns()
    want = sorted((s.task, s.method, s.seed) for s in specs)
    for reader in (fast, slow):
        for descending in (False, True):
            for sort in ("task", "status"):
                page = results_page(reader, ResultsQuery("", sort=sort, descending=descending, limit=100))
                got = [tuple(r[:3]) for r in page.rows]  # task, method, seed: the page's first columns
                assert got == (want[::-1] if descending else want), (sort, descending, reader is fast)
    fast.close()
    slow.close()
    store.close()


def test_answers_follow_writes_inserts_and_deletes(tmp_path):
    """The column store applies the change log: after updates, new jobs and a deleted job the
    answers are still those of plain SQL; a log that no longer reaches back reloads."""
    ws = Workspace(tmp_path / "ws").ensure()
    store = Store(ws, create=True)
    rng = random.Random(5)
    _fill(store, 150, rng)
    fast = Reader(ws)
    assert fast.load_columns()
    plain = sqlite3.connect(ws.db_path)
    queries = [
        ResultsQuery("", sort="r2_test", descending=True, limit=20),
        ResultsQuery("status=ok r2_test>0.3", sort="task", limit=50),
        ResultsQuery("feyn", group_by=("method",), sort="median_r2_test", descending=True),
        ResultsQuery("", group_by=("suite", "method"), sort="jobs", descending=True),
    ]
    for q in queries:
        _check(fast, plain, q)
    with store.transaction() as c:
        c.execute("UPDATE jobs SET status = 'ok', r2_test = 0.99 WHERE rowid % 7 = 0")
        c.execute("DELETE FROM jobs WHERE rowid = 3")
    _fill(store, 40, rng, first_seed=1000)
    for q in queries:
        _check(fast, plain, q)
    assert fast.columns is not None and fast.columns.seq > 0  # kept current, not reloaded
    plain.close()
    fast.close()
    store.close()


def test_counts_stay_exact_through_every_kind_of_write(tmp_path):
    """job_counts and run_counts (kept by triggers) equal a GROUP BY after plans, claims,
    records, lost jobs, a re-plan, a deletion and a renamed task."""
    store = Store(Workspace(tmp_path / "ws").ensure(), create=True)
    _fill(store, 60, random.Random(9))
    run = store.begin_run("alpha", "driver", "host", [], "2025-01-01T00:00:00")
    ids = [r["job_id"] for r in store.jobs(columns="job_id")]
    for i, job_id in enumerate(ids[:30]):
        attempt = store.states([job_id])[job_id][1] + 1
        if not store.claim(job_id, attempt, run, "2025-01-01T00:00:01", "host"):
            continue
        if i % 3 == 0:
            store.mark_lost(job_id, attempt, "2025-01-01T00:00:02", "gone")
        elif i % 3 == 1:
            store.record(job_id, {"status": "ok", "attempt": attempt, "run_id": run, "r2_test": 0.5}, None)
    store.plan([JobSpec("alpha", "ode", "ffx", 99, Limits(time_s=60), "f" * 8, "v1")] * 2)
    with store.transaction() as c:
        c.execute("DELETE FROM jobs WHERE job_id = ?", (ids[40],))
        c.execute("UPDATE jobs SET task = 'renamed' WHERE job_id = ?", (ids[41],))
    conn = store.conn
    for table, keys, where in (
        ("job_counts", "suite, task, method, status", ""),
        ("run_counts", "run_id, status", " WHERE run_id IS NOT NULL"),
    ):
        kept = sorted(conn.execute(f"SELECT {keys}, n FROM {table}").fetchall())
        truth = sorted(conn.execute(f"SELECT {keys}, count(*) FROM jobs{where} GROUP BY {keys}").fetchall())
        assert kept == truth and kept, table
    store.close()


def test_a_superseded_query_stops(world):
    """The progress handler stops a query as soon as the screen's worker is cancelled."""
    _store, fast, _plain, _slow = world
    store = fast.store()
    assert store is not None
    with pytest.raises(Cancelled), watch(store.conn, lambda: True):
        store.conn.execute(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100000000) SELECT count(*) FROM s"
        ).fetchone()
    assert store.conn.execute("SELECT count(*) FROM jobs").fetchone()[0] > 0  # the handler is gone


def test_an_interrupted_rescore_resumes_where_it_stopped(tmp_path, monkeypatch):
    """Metrics are written a batch at a time: Ctrl-C after the first batch keeps it, and the
    next rescore computes only the jobs still missing."""
    from srtui.results.metrics import compute as metrics

    store = Store(Workspace(tmp_path / "ws").ensure(), create=True)
    _fill(store, 7, random.Random(1))
    with store.transaction() as c:
        c.execute("UPDATE jobs SET status = 'ok', model = NULL")
    monkeypatch.setattr(metrics, "BATCH", 3)

    def interrupt(message: str) -> None:
        if message.startswith("jobs 4-6"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        metrics.compute_for_store(store, workers=1, progress=interrupt)
    done = "SELECT count(*) FROM metrics WHERE name = '_version'"
    assert store.conn.execute(done).fetchone()[0] == 3
    assert metrics.compute_for_store(store, workers=1)["jobs"] == 4
    assert store.conn.execute(done).fetchone()[0] == 7
    store.close()
