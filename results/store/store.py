"""The one store: the workspace's SQLite database (WAL mode), its schema and migrations.

The driver is the only writer of job records; readers (`srtui status`, the TUI, another shell)
can read at any time thanks to WAL. Every write is a short ``BEGIN IMMEDIATE`` transaction with
a busy timeout, so concurrent writers (several expert sessions, a run and a rescore) queue
instead of failing.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import RETRY_AUTOMATIC, TERMINAL, JobSpec
from srtui.engine.workspace import Workspace, WorkspaceError
from srtui.results.store import guard, schema
from srtui.results.store.columns import RESULT_COLUMNS
from srtui.results.store.tuning import JobScore

if TYPE_CHECKING:  # sqlite-utils pulls in pandas: imported when first used
    import numpy as np
    from sqlite_utils import Database


class StoreError(SrtuiError):
    """The store cannot be opened or used; one line for the CLI."""


#: how long ``Store.close`` waits for another thread's write to end
CLOSE_WAIT_S = 5.0

#: what a finished attempt writes (the job record: srtui.results.store.columns)
JOB_RESULT_COLUMNS = RESULT_COLUMNS


class Store:
    """A handle on ``<workspace>/srtui.db``. Thread-safe: one connection, writes under a lock."""

    def __init__(self, workspace: Workspace, *, create: bool = False, readonly: bool = False) -> None:
        self.workspace = workspace
        path = workspace.db_path
        if not path.exists() and not create:
            raise StoreError(f"no srtui workspace at {workspace.root} (run `srtui run SUITE` to create one)")
        if not readonly:
            try:  # WAL needs every reader and writer on one host, with working locks
                workspace.refuse_network_filesystem()
            except WorkspaceError as exc:
                raise StoreError(str(exc)) from None
        _refuse_links(path)
        if path.exists() and not _initialised(path):
            # SQLite makes a new database from an empty file: a run would silently start over
            raise StoreError(
                f"{path} is not a usable srtui database: it is empty (0 bytes); "
                "move it away to start a new workspace there"
            )
        try:
            if readonly:
                conn = _connect_readonly(path)
            else:
                conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise StoreError(db_error(path, exc)) from None
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            guard.protect(conn, path)  # before anything of the file's could run (results/store/guard.py)
            guard.check_objects(conn, path)
        except (sqlite3.Error, guard.ForeignObjectError) as exc:
            conn.close()
            one = str(exc) if isinstance(exc, guard.ForeignObjectError) else db_error(path, exc)
            raise StoreError(one) from None
        self.conn = conn
        self._db: Database | None = None
        self.lock = threading.RLock()
        self._batch_depth = 0  # > 0 while the thread holding the lock writes a batch (``batch``)
        try:
            if readonly:
                version = _ready_version(conn)
                deadline = time.monotonic() + 3.0
                while version == 0 and time.monotonic() < deadline:  # a run is creating it
                    time.sleep(0.1)
                    version = _ready_version(conn)
                if version == 0:
                    raise sqlite3.DatabaseError("it holds no srtui tables")
                schema.check_version(version, path)
            else:
                self._prepare()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(db_error(path, exc)) from None
        except schema.SchemaError as exc:
            conn.close()
            raise StoreError(str(exc)) from None

    # --- setup -----------------------------------------------------------------------------

    @property
    def db(self) -> Database:
        """A sqlite-utils view of the same connection (imported lazily: it pulls in pandas,
        which read-only commands like `srtui status` must not pay for)."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def _prepare(self) -> None:
        mode = self.conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode.lower() != "wal":  # autocommit connection: no transaction is open here
            self.conn.execute("PRAGMA journal_mode = wal")  # not sqlite-utils': it imports pandas (issue 56)
        self.conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL; durable at checkpoints
        self.conn.execute("PRAGMA foreign_keys = ON")
        with self.transaction():
            schema.migrate(self.conn, self.workspace.db_path)

    def close(self) -> None:
        """Close the connection once no other thread writes (a recorder's commit: closing under
        it would crash the process); one stuck past ``CLOSE_WAIT_S`` (a hung disk, the process
        ending after Ctrl-C) keeps it, and the process's end releases it."""
        if self.lock.acquire(timeout=CLOSE_WAIT_S):
            try:
                self.conn.close()
            finally:
                self.lock.release()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``: takes the write lock up front, never deadlocks.
        Inside a ``batch`` of this thread's (the lock is held by it): a savepoint of the batch,
        undone alone if it fails."""
        with self.lock:
            if self._batch_depth:
                with self._savepoint():
                    yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: the ``transaction``s of this block are one transaction, committed at
        its end (one commit for a batch of finished jobs instead of one each). Nothing of it is
        durable before the block ends, so nothing of it may be reported before then."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            self._batch_depth += 1
            try:
                yield
                if not self.conn.in_transaction:  # SQLite rolled it back itself (a full disk)
                    raise sqlite3.OperationalError("the batch's transaction was rolled back")
                self.conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):  # not there if SQLite rolled it back already
                    self.conn.execute("ROLLBACK")
                raise
            finally:
                self._batch_depth -= 1

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        if not self.conn.in_transaction:  # the batch was rolled back under it: write nothing outside it
            raise sqlite3.OperationalError("the batch's transaction was rolled back")
        self.conn.execute("SAVEPOINT one_write")
        try:
            yield
        except BaseException:
            with suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK TO one_write")
                self.conn.execute("RELEASE one_write")
            raise
        self.conn.execute("RELEASE one_write")

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        with self.transaction() as c:
            if value is None:
                c.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def workspace_id(self) -> str:
        value = self.meta("workspace_id")
        assert value, "migration 1 sets workspace_id"
        return value

    # --- runs --------------------------------------------------------------------------------

    def begin_run(
        self, suite: str, driver: str, host: str, argv: list[str], started_at: str, queued: int | None = None
    ) -> str:
        """A run that sets out to run ``queued`` jobs (the monitor's ETA is over them; None: unknown)."""
        run_id = uuid.uuid4().hex[:12]
        with self.transaction() as c:
            c.execute(
                "INSERT INTO runs (run_id, suite, driver, host, argv, started_at, status, queued) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (run_id, suite, driver, host, json.dumps(argv), started_at, "running", queued),
            )
        return run_id

    def add_queued(self, run_id: str, jobs: int) -> None:
        """More jobs for a run going on (the final fits after a tuning search)."""
        with self.transaction() as c:
            c.execute("UPDATE runs SET queued = coalesce(queued, 0) + ? WHERE run_id = ?", (jobs, run_id))

    def end_run(self, run_id: str, status: str, ended_at: str) -> None:
        with self.transaction() as c:
            c.execute("UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?", (status, ended_at, run_id))

    def end_dead_runs(self, driver_alive: Callable[[str], bool], ended_at: str) -> int:
        """Runs still marked running whose driver is gone (it was killed): marked lost."""
        rows = self.conn.execute("SELECT run_id, driver FROM runs WHERE status = 'running'").fetchall()
        dead = [run_id for run_id, driver in rows if not driver_alive(driver or "")]
        if dead:
            with self.transaction() as c:
                c.executemany(
                    "UPDATE runs SET status = 'lost', ended_at = ? WHERE run_id = ? AND status = 'running'",
                    [(ended_at, run_id) for run_id in dead],
                )
        return len(dead)

    # --- jobs --------------------------------------------------------------------------------

    def plan(self, specs: Iterable[JobSpec]) -> dict[str, tuple[str, int]]:
        """Insert new jobs as pending; return {job_id: (status, attempt)} for every given spec."""
        rows = []
        for spec in specs:
            d = spec.to_dict()
            rows.append(
                (
                    spec.job_id,
                    spec.suite,
                    spec.task,
                    spec.method,
                    json.dumps(d["params"], sort_keys=True),
                    spec.seed,
                    json.dumps(d["limits"], sort_keys=True),
                    spec.data_fingerprint,
                    spec.method_version,
                    json.dumps(d, sort_keys=True),
                    json.dumps(spec.protocol, sort_keys=True) if spec.protocol else None,
                )
            )
        with self.transaction() as c:
            c.executemany(
                "INSERT OR IGNORE INTO jobs (job_id, suite, task, method, params, seed, limits, "
                "data_fingerprint, method_version, spec, protocol, status, attempt) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,'pending',0)",
                rows,
            )
        return self.states([r[0] for r in rows])

    def states(self, job_ids: list[str]) -> dict[str, tuple[str, int]]:
        """{job_id: (status, attempt)} of the given jobs that are in the store."""
        states: dict[str, tuple[str, int]] = {}
        for i in range(0, len(job_ids), 500):  # SQLite caps the number of bound parameters
            chunk = job_ids[i : i + 500]
            q = f"SELECT job_id, status, attempt FROM jobs WHERE job_id IN ({','.join('?' * len(chunk))})"
            for job_id, status, attempt in self.conn.execute(q, chunk):
                states[job_id] = (status, attempt)
        return states

    def scores(self, job_ids: list[str]) -> dict[str, JobScore]:
        """{job_id: (status, r2_test, attempt, error)} of the given jobs that are in the store
        (tuning choices)."""
        out: dict[str, JobScore] = {}
        for i in range(0, len(job_ids), 500):
            chunk = job_ids[i : i + 500]
            q = (
                "SELECT job_id, status, r2_test, attempt, error FROM jobs "
                f"WHERE job_id IN ({','.join('?' * len(chunk))})"
            )
            for job_id, status, r2_test, attempt, error in self.conn.execute(q, chunk):
                out[job_id] = JobScore(status, r2_test, int(attempt or 0), error)
        return out

    def running_jobs(self) -> list[dict[str, Any]]:
        cur = self.conn.execute(
            "SELECT j.job_id, j.suite, j.task, j.method, j.seed, j.attempt, j.started_at, j.limits, "
            "j.worker_pid, j.run_id, r.driver FROM jobs j LEFT JOIN "
            "runs r ON r.run_id = j.run_id WHERE j.status = 'running'"
        )
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur]

    def mark_lost(self, job_id: str, attempt: int, ended_at: str, why: str) -> bool:
        """A running job whose driver is gone: record the attempt as lost (it will be retried)."""
        return self._end_running(job_id, attempt, ended_at, why, "lost")

    def mark_interrupted(self, job_id: str, attempt: int, ended_at: str, why: str) -> bool:
        """A running job whose outcome could not be recorded (disk full): retried by the next run."""
        return self._end_running(job_id, attempt, ended_at, why, "interrupted")

    def _end_running(self, job_id: str, attempt: int, ended_at: str, why: str, status: str) -> bool:
        with self.transaction() as c:
            cur = c.execute(
                "UPDATE jobs SET status = ?, ended_at = ?, error = ?, worker_pid = NULL "
                "WHERE job_id = ? AND status = 'running' AND attempt = ?",
                (status, ended_at, why, job_id, attempt),
            )
            if cur.rowcount:
                # the claim wrote the attempt's run, host and start: keep them, add how it ended
                kept = c.execute(
                    "UPDATE attempts SET status = ?, ended_at = ?, error = ? WHERE job_id = ? AND attempt = ?",
                    (status, ended_at, why, job_id, attempt),
                )
                if not kept.rowcount:  # no attempt row (claimed by an older srtui): the job row has them
                    c.execute(
                        "INSERT INTO attempts (job_id, attempt, status, run_id, started_at, host, ended_at, error) "
                        "SELECT job_id, attempt, ?, run_id, started_at, host, ?, ? FROM jobs WHERE job_id = ?",
                        (status, ended_at, why, job_id),
                    )
            return bool(cur.rowcount)

    def claim(self, job_id: str, attempt: int, run_id: str, started_at: str, host: str) -> bool:
        """Atomically mark a job running for this run as ``attempt``; False if another driver has
        it, or has run it since this driver planned it (the stored attempt is no longer the one
        before ``attempt``): two drivers on one workspace never run a job twice."""
        with self.transaction() as c:
            cur = c.execute(
                "UPDATE jobs SET status = 'running', attempt = ?, run_id = ?, started_at = ?, host = ?, "
                "ended_at = NULL, worker_pid = NULL WHERE job_id = ? AND status != 'running' AND attempt = ?",
                (attempt, run_id, started_at, host, job_id, attempt - 1),
            )
            if cur.rowcount:
                c.execute(
                    "INSERT OR REPLACE INTO attempts (job_id, attempt, "
                    "status, run_id, started_at, host) VALUES (?,?,?,?,?,?)",
                    (job_id, attempt, "running", run_id, started_at, host),
                )
            return bool(cur.rowcount)

    def set_worker_pid(self, job_id: str, pid: int) -> None:
        with self.transaction() as c:
            c.execute("UPDATE jobs SET worker_pid = ? WHERE job_id = ?", (pid, job_id))

    def record(self, job_id: str, fields: dict[str, Any], predictions: bytes | None) -> None:
        """Write a finished attempt: the job row, its attempt row and its predictions, at once."""
        values = {k: fields.get(k) for k in JOB_RESULT_COLUMNS}
        values["worker_pid"] = None
        for key in ("pareto", "method_notes"):
            if isinstance(values[key], (list, dict)):
                values[key] = json.dumps(values[key], default=str)
        assignments = ", ".join(f"{k} = ?" for k in values)
        with self.transaction() as c:
            c.execute(f"UPDATE jobs SET {assignments} WHERE job_id = ?", (*values.values(), job_id))
            c.execute(
                "INSERT OR REPLACE INTO attempts (job_id, attempt, status, run_id, started_at, ended_at, "
                "returncode, signal, wall_s, cpu_s, peak_rss_mb, host, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    job_id,
                    values["attempt"],
                    values["status"],
                    values["run_id"],
                    values["started_at"],
                    values["ended_at"],
                    values["returncode"],
                    values["signal"],
                    values["wall_s"],
                    values["cpu_s"],
                    values["peak_rss_mb"],
                    values["host"],
                    values["error"],
                ),
            )
            if predictions is not None:
                c.execute(
                    "INSERT OR REPLACE INTO predictions (job_id, attempt, data) VALUES (?,?,?)",
                    (job_id, values["attempt"], predictions),
                )

    # --- reading -----------------------------------------------------------------------------

    def status_counts(self, suite: str | None = None) -> dict[str, int]:
        """Jobs per status: from ``job_counts`` (schema v8, kept by triggers), else counted."""
        table = "job_counts" if self.has_table("job_counts") else "jobs"
        q = f"SELECT status, {'sum(n)' if table == 'job_counts' else 'count(*)'} FROM {table}"
        args: tuple[str, ...] = ()
        if suite:
            q, args = q + " WHERE suite = ?", (suite,)
        from srtui.results.store.typed import warn

        out: dict[str, int] = {}
        for k, v in self.conn.execute(q + " GROUP BY status", args).fetchall():
            if not isinstance(k, str) or not isinstance(v, int):  # a crafted workspace
                warn(
                    table,
                    k if isinstance(k, str) else "?",
                    "status" if not isinstance(k, str) else "n",
                    "not a count of a status",
                )
                continue
            out[k] = out.get(k, 0) + v
        return out

    def has_table(self, name: str) -> bool:
        """A table of a newer schema may be missing from a workspace opened read-only."""
        q = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self.conn.execute(q, (name,)).fetchone() is not None

    def jobs(self, suite: str | None = None, columns: str = "*") -> list[dict[str, Any]]:
        return list(self.iter_jobs(suite, columns))

    def iter_jobs(self, suite: str | None = None, columns: str = "*") -> Iterator[dict[str, Any]]:
        """The jobs one at a time (constant memory however many), in the order of ``jobs``."""
        q = f"SELECT {columns} FROM jobs"
        args: tuple[str, ...] = ()
        if suite:
            q, args = q + " WHERE suite = ?", (suite,)
        cur = self.conn.execute(q + " ORDER BY suite, task, method, seed, job_id", args)
        cols = [d[0] for d in cur.description]
        for row in cur:
            yield dict(zip(cols, row))

    def attempts(self, job_id: str) -> list[dict[str, Any]]:
        cur = self.conn.execute("SELECT * FROM attempts WHERE job_id = ? ORDER BY attempt", (job_id,))
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur]

    def predictions(self, job_id: str) -> dict[str, Any] | None:
        """{train_index, train_pred, test_index, test_pred} as numpy arrays, or None."""
        import numpy as np

        row = self.conn.execute("SELECT data FROM predictions WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        with np.load(io.BytesIO(row[0]), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def _ready_version(conn: sqlite3.Connection) -> int:
    """The schema version a reader can use, 0 while the tables are not all there to read (a run
    creating the workspace, or a database stamped with a version but without its tables)."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return version if {"meta", "runs", "jobs", "attempts"} <= tables else 0


def db_error(path: Path, exc: BaseException, otherwise: str = "{path} is not a usable srtui database") -> str:
    """One line on a database error; a full disk says so, and what to free (never suggesting
    the database itself is broken: SQLite leaves it intact)."""
    text = str(exc)
    if "disk is full" in text or getattr(exc, "errno", None) == 28:
        return (
            f"disk full: cannot write {path.parent} ({text}); free space on its file system "
            f"(logs/ and cache/ in {path.parent} can go) and run again: the database is intact"
        )
    return f"{otherwise.format(path=path)}: {text}"


def _refuse_links(path: Path) -> None:
    """The database and SQLite's files beside it are never opened through a symbolic link (a
    job runs next to the workspace and could plant one)."""
    for p in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        if p.is_symlink():
            raise StoreError(f"{p} is a symbolic link: srtui does not open its database through one")


def _initialised(path: Path, wait_s: float = 3.0) -> bool:
    """Has the file any bytes? A run creating the workspace right now writes them within
    moments, so an empty file is given ``wait_s`` before it counts as empty."""
    deadline = time.monotonic() + wait_s
    while path.stat().st_size == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection. A WAL database needs its -shm file, which a read-only workspace
    (file system mounted read-only, a copy on a CD) cannot create: there nobody can write
    either, so the file is opened as immutable."""
    uri = Path(path).absolute().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, isolation_level=None, timeout=30)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        if os.access(Path(path).parent, os.W_OK):
            raise
        conn.close()
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False, isolation_level=None, timeout=30)


def pack_predictions(
    train_index: np.ndarray, train_pred: np.ndarray, test_index: np.ndarray, test_pred: np.ndarray
) -> bytes:
    """Predictions with their row numbers, compressed (float64 kept exact for re-scoring)."""
    import numpy as np

    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        train_index=np.asarray(train_index, dtype=np.int64),
        train_pred=np.asarray(train_pred, dtype=np.float64),
        test_index=np.asarray(test_index, dtype=np.int64),
        test_pred=np.asarray(test_pred, dtype=np.float64),
    )
    return buf.getvalue()


def needs_run(status: str, attempt: int, retry_failed: bool) -> bool:
    """Resume rule: skip terminal jobs (unless retrying failures); retry lost/interrupted up to 3."""
    from srtui.engine.spec import MAX_AUTO_ATTEMPTS, RETRY_ON_REQUEST

    if status in ("pending",):
        return True
    if status in RETRY_AUTOMATIC:
        return attempt < MAX_AUTO_ATTEMPTS
    if status in TERMINAL:
        return retry_failed and status in RETRY_ON_REQUEST
    return False  # running under a live driver


def open_store(workspace: Workspace, *, create: bool = False) -> Store:
    if create:
        workspace.ensure()
    return Store(workspace, create=create)


__all__ = ["Path", "Store", "StoreError", "needs_run", "open_store", "pack_predictions"]
