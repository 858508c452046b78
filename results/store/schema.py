"""Schema of the workspace database, as numbered migrations (``PRAGMA user_version``).

To change the schema, append a migration; never edit a released one. A database written by a
newer srtui (a higher version than we know) is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from srtui.engine.errors import SrtuiError


class SchemaError(SrtuiError):
    pass


def _script(c: sqlite3.Connection, sql: str) -> None:
    # not executescript(): it COMMITs first, and migrations must stay inside our transaction
    for statement in sql.split(";"):
        if statement.strip():
            c.execute(statement)


def _v1(c: sqlite3.Connection) -> None:
    _script(
        c,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, suite TEXT, driver TEXT, host TEXT, argv TEXT,
            started_at TEXT, ended_at TEXT, status TEXT
        );
        CREATE TABLE jobs (
            job_id TEXT PRIMARY KEY,
            suite TEXT NOT NULL, task TEXT NOT NULL, method TEXT NOT NULL, params TEXT NOT NULL,
            seed INTEGER NOT NULL, limits TEXT NOT NULL, data_fingerprint TEXT NOT NULL,
            method_version TEXT NOT NULL, spec TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending','running','ok','error','timeout',
                'cpu_timeout','oom','crashed','interrupted','lost','invalid_model')),
            attempt INTEGER NOT NULL DEFAULT 0,
            run_id TEXT, returncode INTEGER, signal INTEGER, wall_s REAL, cpu_s REAL,
            peak_rss_mb REAL, host TEXT, started_at TEXT, ended_at TEXT, stderr_tail TEXT,
            error TEXT, limit_detail TEXT, worker_pid INTEGER,
            model TEXT, dialect TEXT, model_error TEXT, model_too_large INTEGER, pareto TEXT,
            fit_s REAL, r2_train REAL, r2_test REAL, mse_train REAL, mse_test REAL,
            mae_train REAL, mae_test REAL, r2_test_expr REAL, fidelity_r2 REAL,
            max_abs_diff REAL, expression_mismatch INTEGER
        );
        CREATE INDEX jobs_status ON jobs (status);
        CREATE INDEX jobs_suite ON jobs (suite, task, method);
        CREATE TABLE attempts (
            job_id TEXT NOT NULL REFERENCES jobs (job_id), attempt INTEGER NOT NULL,
            status TEXT NOT NULL, run_id TEXT, started_at TEXT, ended_at TEXT, returncode INTEGER,
            signal INTEGER, wall_s REAL, cpu_s REAL, peak_rss_mb REAL, host TEXT, error TEXT,
            PRIMARY KEY (job_id, attempt)
        );
        CREATE TABLE predictions (
            job_id TEXT PRIMARY KEY REFERENCES jobs (job_id), attempt INTEGER, data BLOB NOT NULL
        );
        """,
    )
    c.execute("INSERT INTO meta (key, value) VALUES ('workspace_id', ?)", (uuid.uuid4().hex[:12],))


def _v2_metrics(c: sqlite3.Connection) -> None:
    """Metrics per job (srtui.results.metrics.compute), the expression-operation cache, task descriptions."""
    _script(
        c,
        """
        CREATE TABLE metrics (
            job_id TEXT NOT NULL REFERENCES jobs (job_id), name TEXT NOT NULL, value REAL,
            detail TEXT, PRIMARY KEY (job_id, name)
        );
        CREATE TABLE expr_cache (
            key TEXT PRIMARY KEY, op TEXT NOT NULL, status TEXT NOT NULL, result TEXT,
            timeout REAL, seconds REAL
        );
        CREATE TABLE task_info (task TEXT PRIMARY KEY, info TEXT NOT NULL)
        """,
    )


def _v3_reviews(c: sqlite3.Connection) -> None:
    """Blinded expert review sessions (reviews/): frozen items, per-expert orders, ratings with
    timing, an append-only audit log and session events. Triggers enforce what must never
    change: audit and events are append-only, items are frozen, ratings are never deleted and
    only written while their session is open."""
    statements = [
        """CREATE TABLE review_sessions (
            name TEXT PRIMARY KEY, suite TEXT, created_at TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
            closed_at TEXT, unblinded_at TEXT, settings TEXT NOT NULL
        )""",
        """CREATE TABLE review_items (
            item_id TEXT PRIMARY KEY, session TEXT NOT NULL REFERENCES review_sessions (name),
            task TEXT NOT NULL, method TEXT NOT NULL, job_id TEXT, seed INTEGER,
            content TEXT NOT NULL, UNIQUE (session, task, method)
        )""",
        """CREATE TABLE review_assignments (
            assignment_id TEXT PRIMARY KEY, session TEXT NOT NULL REFERENCES review_sessions (name),
            expert TEXT NOT NULL, position INTEGER NOT NULL,
            item_id TEXT NOT NULL REFERENCES review_items (item_id),
            is_repeat INTEGER NOT NULL DEFAULT 0 CHECK (is_repeat IN (0, 1)),
            UNIQUE (session, expert, position)
        )""",
        """CREATE TABLE review_ratings (
            assignment_id TEXT PRIMARY KEY REFERENCES review_assignments (assignment_id),
            session TEXT NOT NULL, expert TEXT NOT NULL, item_id TEXT NOT NULL,
            rating INTEGER NOT NULL CHECK (typeof(rating) = 'integer' AND rating BETWEEN 1 AND 5),
            comment TEXT, shown_at TEXT NOT NULL, submitted_at TEXT NOT NULL, elapsed_s REAL,
            revisions INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX review_ratings_expert ON review_ratings (session, expert)",
        """CREATE TABLE review_audit (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, expert TEXT NOT NULL,
            assignment_id TEXT NOT NULL, action TEXT NOT NULL CHECK (action IN ('rate', 'revise', 'skip')),
            rating INTEGER CHECK (rating IS NULL OR (typeof(rating) = 'integer' AND rating BETWEEN 1 AND 5)),
            comment TEXT, shown_at TEXT, at TEXT NOT NULL, elapsed_s REAL,
            CHECK ((action = 'skip') = (rating IS NULL))
        )""",
        """CREATE TABLE review_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('create', 'close', 'unblind')),
            actor TEXT, at TEXT NOT NULL, detail TEXT
        )""",
    ]
    for table, what in (
        ("review_audit", "UPDATE"),
        ("review_audit", "DELETE"),
        ("review_events", "UPDATE"),
        ("review_events", "DELETE"),
        ("review_items", "UPDATE"),
        ("review_ratings", "DELETE"),
    ):
        statements.append(_append_only_trigger(table, what))
    for what in ("INSERT", "UPDATE"):
        statements.append(
            f"CREATE TRIGGER review_ratings_open_{what.lower()} BEFORE {what} ON review_ratings "
            "WHEN (SELECT status FROM review_sessions WHERE name = NEW.session) IS NOT 'open' "
            "BEGIN SELECT RAISE(ABORT, 'the review session is not open'); END"
        )
    for statement in statements:  # one by one: trigger bodies hold ';', which _script splits on
        c.execute(statement)


def _append_only_trigger(table: str, what: str) -> str:
    return (
        f"CREATE TRIGGER {table}_no_{what.lower()} BEFORE {what} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} rows cannot be {'updated' if what == 'UPDATE' else 'deleted'}'); END"
    )


def _v4_method_notes(c: sqlite3.Connection) -> None:
    """What the method said about its own fit (JSON), e.g. gplearn's generations and why it stopped."""
    c.execute("ALTER TABLE jobs ADD COLUMN method_notes TEXT")


def _v5_add_expert_event(c: sqlite3.Connection) -> None:
    """Session events may be 'add_expert' (an expert joins an open session). SQLite cannot
    change a CHECK in place: the append-only table is copied into a new one, row for row (a
    DROP TABLE fires no trigger), and its triggers are made again."""
    c.execute(
        """CREATE TABLE review_events_v5 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ('create', 'close', 'unblind', 'add_expert')),
            actor TEXT, at TEXT NOT NULL, detail TEXT
        )"""
    )
    c.execute(
        "INSERT INTO review_events_v5 (seq, session, event, actor, at, detail) "
        "SELECT seq, session, event, actor, at, detail FROM review_events"
    )
    c.execute("DROP TABLE review_events")
    c.execute("ALTER TABLE review_events_v5 RENAME TO review_events")
    for what in ("UPDATE", "DELETE"):
        c.execute(_append_only_trigger("review_events", what))


def _v6_energy(c: sqlite3.Connection) -> None:
    """Energy per job in joules and how it was obtained ('rapl' or 'estimate'; srtui.engine.process.energy)."""
    c.execute("ALTER TABLE jobs ADD COLUMN energy_j REAL")
    c.execute("ALTER TABLE jobs ADD COLUMN energy_method TEXT")


_ACCURACY = ("r2_train", "r2_test", "mse_train", "mse_test", "mae_train", "mae_test")


def _v7_accuracy_once(c: sqlite3.Connection) -> None:
    """Accuracy (R², MSE, MAE) is stored once, in the job's row: the copies in ``metrics`` (the
    recomputed ones, which the boards read) move into it. Runs record how many jobs they set out
    to run (the monitor's ETA)."""
    for name in _ACCURACY:  # the names are this module's own, never input
        c.execute(
            f"UPDATE jobs SET {name} = (SELECT m.value FROM metrics m WHERE m.job_id = jobs.job_id AND m.name = ?) "
            "WHERE EXISTS (SELECT 1 FROM metrics m WHERE m.job_id = jobs.job_id AND m.name = ? AND "
            "m.value IS NOT NULL)",
            (name, name),
        )
    c.execute(f"DELETE FROM metrics WHERE name IN ({','.join('?' * len(_ACCURACY))})", _ACCURACY)
    c.execute("ALTER TABLE runs ADD COLUMN queued INTEGER")


#: the explorer's first sort (before its column store is loaded): its first page is an index walk
SORT_INDEXES = ("task",)
#: the explorer's tie-break after its sort column (in the sort's direction, then job_id): a sort by
#: task lists each task's methods and seeds in order; the index of the first page (v9) holds them
TIEBREAK = ("task", "method", "seed")
#: the columns of ``job_counts``: the few distinct values a million jobs share
COUNT_KEYS = ("suite", "task", "method", "status")
#: the columns the app keeps in memory (srtui.results.store.colstore); a change to one is logged
CHANGE_COLUMNS = ("job_id", *COUNT_KEYS, "seed", "r2_test", "wall_s")
#: changes kept in the log: a reader further behind reads every row again
CHANGES_KEPT = 100_000


def _v8_scale(c: sqlite3.Connection) -> None:
    """A million jobs: ``job_counts`` (jobs per suite, task, method and status, kept exact by
    triggers on every write) answers counts and substring matches without reading the jobs; an
    index on (task, job_id) makes the first page an index walk; runs' jobs
    and the newest failures per status are indexed for the monitor; a change log lets a reader
    keep columns in memory (srtui.results.store.colstore). Few indexes: each costs a pass over a million
    rows here and a write on every record. One transaction: a killed migration leaves version 7
    and reruns whole."""
    _counts(c, "job_counts", COUNT_KEYS)
    _counts(c, "run_counts", ("run_id", "status"))  # a run's progress: the monitor's ETA
    # the rows whose explorer columns changed, for readers that keep those columns in memory
    # (srtui.results.store.colstore): they apply the changes instead of reading a million rows again
    c.execute("CREATE TABLE job_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_rowid INTEGER NOT NULL)")
    log = "INSERT INTO job_changes (job_rowid) VALUES ({}.rowid); " + (
        f"DELETE FROM job_changes WHERE seq <= (SELECT max(seq) FROM job_changes) - {CHANGES_KEPT};"
    )
    watched = ", ".join(CHANGE_COLUMNS)
    for statement in (
        f"CREATE TRIGGER job_changes_insert AFTER INSERT ON jobs BEGIN {log.format('NEW')} END",
        f"CREATE TRIGGER job_changes_delete AFTER DELETE ON jobs BEGIN {log.format('OLD')} END",
        f"CREATE TRIGGER job_changes_update AFTER UPDATE OF {watched} ON jobs BEGIN {log.format('NEW')} END",
    ):
        c.execute(statement)
    c.execute("DROP INDEX IF EXISTS jobs_status")  # (status, ended_at) below serves its queries
    for col in SORT_INDEXES:
        c.execute(f"CREATE INDEX jobs_by_{col} ON jobs ({col}, job_id)")
    c.execute("CREATE INDEX jobs_by_ended ON jobs (status, ended_at)")


def _counts(c: sqlite3.Connection, table: str, keys: tuple[str, ...]) -> None:
    """``table``: jobs per distinct ``keys`` (rows with a NULL key are not counted), filled now
    and kept exact by triggers on every insert, delete and change of a key."""
    cols = ", ".join(keys)
    c.execute(
        f"CREATE TABLE {table} ({', '.join(f'{k} TEXT NOT NULL' for k in keys)}, n INTEGER NOT NULL, "
        f"PRIMARY KEY ({cols})) WITHOUT ROWID"
    )
    present = " AND ".join(f"{k} IS NOT NULL" for k in keys)
    c.execute(f"INSERT INTO {table} ({cols}, n) SELECT {cols}, count(*) FROM jobs WHERE {present} GROUP BY {cols}")
    new = ", ".join(f"NEW.{k}" for k in keys)
    old_match = " AND ".join(f"{k} = OLD.{k}" for k in keys)
    new_present = " AND ".join(f"NEW.{k} IS NOT NULL" for k in keys)
    add = (
        f"INSERT INTO {table} ({cols}, n) SELECT {new}, 1 WHERE {new_present} "
        f"ON CONFLICT ({cols}) DO UPDATE SET n = n + 1;"
    )
    remove = f"UPDATE {table} SET n = n - 1 WHERE {old_match}; DELETE FROM {table} WHERE {old_match} AND n <= 0;"
    changed = " OR ".join(f"OLD.{k} IS NOT NEW.{k}" for k in keys)
    for statement in (
        f"CREATE TRIGGER {table}_insert AFTER INSERT ON jobs BEGIN {add} END",
        f"CREATE TRIGGER {table}_delete AFTER DELETE ON jobs BEGIN {remove} END",
        f"CREATE TRIGGER {table}_update AFTER UPDATE OF {cols} ON jobs WHEN {changed} BEGIN {remove} {add} END",
    ):
        c.execute(statement)


def _v9_sort_tiebreak(c: sqlite3.Connection) -> None:
    """The first page's index holds the tie-break (TIEBREAK): a sort by task stays an index walk
    in both directions (about 5 s for 1,000,000 jobs)."""
    c.execute("DROP INDEX IF EXISTS jobs_by_task")
    c.execute(f"CREATE INDEX jobs_by_task ON jobs (task, {', '.join(TIEBREAK[1:])}, job_id)")


def _v10_protocol(c: sqlite3.Connection) -> None:
    """What the run's protocol applied to each job (srtui.engine.protocols.applied, as JSON: protocol,
    scaling, split, cap, tuning, seed); NULL for a job planned before srtui recorded it."""
    c.execute("ALTER TABLE jobs ADD COLUMN protocol TEXT")


def _v11_disk_status(c: sqlite3.Connection) -> None:
    """A job whose folder grew past its disk limit is recorded 'disk'. SQLite cannot change a
    CHECK in place, and a copy of ``jobs`` would have to make again the triggers and indexes of
    four migrations: the CHECK's text is widened in the schema instead, SQLite's documented way
    for a constraint every existing row still meets (sqlite.org/lang_altertable.html#otheralter)."""
    (sql,) = c.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").fetchone()
    old = "'lost','invalid_model')"
    if "'invalid_model','disk')" in sql:
        return  # widened already (a workspace whose version was set back)
    if old not in sql:
        raise SchemaError("the jobs table's status check is not the one this migration widens")
    version = c.execute("PRAGMA schema_version").fetchone()[0]
    c.execute("PRAGMA writable_schema = ON")
    try:
        c.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'jobs'",
            (sql.replace(old, "'lost','invalid_model','disk')"),),
        )
        c.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        c.execute("PRAGMA writable_schema = OFF")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _v1,
    _v2_metrics,
    _v3_reviews,
    _v4_method_notes,
    _v5_add_expert_event,
    _v6_energy,
    _v7_accuracy_once,
    _v8_scale,
    _v9_sort_tiebreak,
    _v10_protocol,
    _v11_disk_status,
]
VERSION = len(MIGRATIONS)


def check_version(version: int, path: Path) -> None:
    if version > VERSION:
        raise SchemaError(
            f"{path} has schema version {version}, newer than this srtui understands ({VERSION}); "
            "upgrade srtui to open it"
        )


def migrate(c: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to VERSION inside the caller's transaction."""
    version = c.execute("PRAGMA user_version").fetchone()[0]
    check_version(version, path)
    for step in range(version, VERSION):
        MIGRATIONS[step](c)
        c.execute(f"PRAGMA user_version = {step + 1}")
