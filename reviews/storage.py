"""Review sessions in the workspace database (tables of schema migration v3).

Every write is one short ``Store.transaction()`` (``BEGIN IMMEDIATE`` with a busy timeout), so
several experts rating at once queue instead of failing, and a rating is committed before the
next item is shown. The database itself enforces what must hold whatever the caller does:
ratings 1..5, an append-only audit log and event log, frozen items, no rating of a closed session.

Two kinds of errors: :class:`ReviewError` for the organiser (may name anything), and
:class:`ExpertError` for the expert's screen, whose messages are generic and never name a
method, a job or a model's provenance.
"""

from __future__ import annotations

import json
import random
import secrets
import sqlite3
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from srtui.engine import names
from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import safe_value
from srtui.results.store.store import Store
from srtui.results.store.typed import stored_json

LIKERT = {1: "strongly distrust", 2: "distrust", 3: "neutral", 4: "trust", 5: "strongly trust"}


class ReviewError(SrtuiError, ValueError):
    """A review operation that cannot be done; one line for the organiser's CLI."""


class ExpertError(ReviewError):
    """What the expert is told: generic, never naming a method, job or model provenance."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def short_time(iso: str | None, year: bool = True) -> str:
    """A stored timestamp as a reader wants it on an 80-column line: to the minute, in UTC
    (``2026-11-25 13:46``; ``11-25 13:46`` without the year); "-" when there is none (or it is
    not text: a crafted workspace)."""
    if not iso or not isinstance(iso, str):
        return "-"
    text = iso[:16].replace("T", " ")
    return text if year else text[5:]


def check_name(value: str, what: str) -> str:
    """Session and expert names go into a forced SSH command: a strict alphabet, no quoting games."""
    return names.check_name(value, what, ReviewError)


@dataclass(frozen=True)
class FrozenItem:
    """One (task, method) model as the experts will see it; ``content`` holds no method."""

    task: str
    method: str
    content: dict[str, Any]
    job_id: str | None = None
    seed: int | None = None


def _token(taken: set[str]) -> str:
    while True:
        t = secrets.token_hex(6)
        if t not in taken:
            taken.add(t)
            return t


def expert_order(n_items: int, repeats: int, seed: int, expert: str) -> list[tuple[int, bool]]:
    """The expert's own seeded order: a shuffle of item numbers, then ``repeats`` of them again,
    each placed at least two positions after its first showing. Returns (item number, is_repeat)."""
    rng = random.Random(f"{seed}/{expert}")  # str seeds are hashed with sha512: stable across runs
    order: list[tuple[int, bool]] = [(i, False) for i in range(n_items)]
    rng.shuffle(order)
    for i in rng.sample(range(n_items), repeats):
        first = order.index((i, False))
        lo = min(first + 2, len(order))
        order.insert(rng.randint(lo, len(order)), (i, True))
    return order


def _assign(
    c: sqlite3.Connection, name: str, expert: str, item_ids: list[str], repeats: int, seed: int, taken: set[str]
) -> int:
    """Insert ``expert``'s seeded order over the session's items (``item_ids`` in item-number
    order: sorted by task, then method); returns the number of assignments."""
    order = expert_order(len(item_ids), repeats, seed, expert)
    c.executemany(
        "INSERT INTO review_assignments (assignment_id, session, "
        "expert, position, item_id, is_repeat) VALUES (?,?,?,?,?,?)",
        [(_token(taken), name, expert, pos, item_ids[k], int(rep)) for pos, (k, rep) in enumerate(order)],
    )
    return len(order)


def create_session(
    store: Store,
    name: str,
    items: list[FrozenItem],
    experts: list[str],
    *,
    repeats: int = 0,
    seed: int | None = None,
    suite: str | None = None,
    settings: dict[str, Any] | None = None,
    actor: str | None = None,
) -> dict[str, Any]:
    """Store a new session: its frozen items (opaque ids) and each expert's seeded order."""
    check_name(name, "session name")
    experts = [check_name(e, "expert name") for e in experts]
    if not experts:
        raise ReviewError("a review needs at least one expert (--experts alice,bob)")
    if len(set(experts)) != len(experts):
        raise ReviewError("an expert is named twice in --experts")
    if not items:
        raise ReviewError("no models to review")
    if not 0 <= repeats <= len(items):
        raise ReviewError(f"--repeats must be between 0 and the number of items ({len(items)}), got {repeats}")
    seed = secrets.randbits(31) if seed is None else int(seed)
    items = sorted(items, key=lambda it: (it.task, it.method))  # the order depends on the seed only
    settings = {**(settings or {}), "repeats": repeats, "seed": seed, "experts": experts}
    taken: set[str] = set()
    ids = [_token(taken) for _ in items]
    at = now_iso()
    try:
        with store.transaction() as c:
            if c.execute("SELECT 1 FROM review_sessions WHERE name = ?", (name,)).fetchone():
                raise ReviewError(f"a review session named {name!r} already exists")
            c.execute(
                "INSERT INTO review_sessions (name, suite, created_at, status, settings) VALUES (?,?,?,?,?)",
                (name, suite, at, "open", json.dumps(settings, sort_keys=True)),
            )
            c.executemany(
                "INSERT INTO review_items (item_id, session, task, "
                "method, job_id, seed, content) VALUES (?,?,?,?,?,?,?)",
                [
                    (i, name, it.task, it.method, it.job_id, it.seed, json.dumps(it.content, sort_keys=True))
                    for i, it in zip(ids, items)
                ],
            )
            for expert in experts:
                _assign(c, name, expert, ids, repeats, seed, taken)
            c.execute(
                "INSERT INTO review_events (session, event, actor, at, detail) VALUES (?,?,?,?,?)",
                (name, "create", actor, at, json.dumps({"items": len(items), "experts": experts, "repeats": repeats})),
            )
    except sqlite3.IntegrityError as exc:
        raise ReviewError(f"cannot create review {name!r}: {exc}") from None
    return {"name": name, "items": len(items), "experts": experts, "repeats": repeats, "seed": seed}


def add_expert(store: Store, name: str, expert: str, actor: str | None = None) -> dict[str, Any]:
    """An expert joins an open session with an own seeded order over the same frozen items."""
    expert = check_name(expert, "expert name")
    with store.transaction() as c:
        row = session_row(store, name)
        if row["status"] != "open":
            raise ReviewError(f"review {name!r} is closed: experts can only join an open session")
        settings = row["settings"]
        if c.execute("SELECT 1 FROM review_assignments WHERE session = ? AND expert = ?", (name, expert)).fetchone():
            raise ReviewError(f"{expert!r} is already an expert of review {name!r}")
        # the items in the order create_session numbered them (by task, then method)
        ids = [
            r[0] for r in c.execute("SELECT item_id FROM review_items WHERE session = ? ORDER BY task, method", (name,))
        ]
        taken = {r[0] for r in c.execute("SELECT assignment_id FROM review_assignments")}
        assigned = _assign(c, name, expert, ids, int(settings["repeats"]), int(settings["seed"]), taken)
        settings["experts"] = [*settings.get("experts", []), expert]
        c.execute(
            "UPDATE review_sessions SET settings = ? WHERE name = ?", (json.dumps(settings, sort_keys=True), name)
        )
        _event(c, name, "add_expert", actor, {"expert": expert})
    return {"name": name, "expert": expert, "assigned": assigned}


# --- organiser -------------------------------------------------------------------------------


def session_row(store: Store, name: str) -> dict[str, Any]:
    cur = store.conn.execute("SELECT * FROM review_sessions WHERE name = ?", (name,))
    row = cur.fetchone()
    if row is None:
        raise ReviewError(f"no review session named {name!r} in this workspace (see `srtui review list`)")
    out = dict(zip([d[0] for d in cur.description], row))
    out["settings"] = stored_json(out["settings"], "review_sessions", name, "settings", {}, dict)
    return out


def sessions(store: Store) -> list[dict[str, Any]]:
    cur = store.conn.execute(
        "SELECT s.name, s.suite, s.status, s.created_at, s.unblinded_at, "
        "(SELECT count(*) FROM review_items i WHERE i.session = s.name) AS items, "
        "(SELECT count(DISTINCT expert) FROM review_assignments a WHERE a.session = s.name) AS experts, "
        "(SELECT count(*) FROM review_assignments a WHERE a.session = s.name) AS assigned, "
        "(SELECT count(*) FROM review_ratings r WHERE r.session = s.name) AS rated "
        "FROM review_sessions s ORDER BY s.created_at"
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur]


def status(store: Store, name: str) -> list[dict[str, Any]]:
    """Progress per expert: assigned, rated, skipped (not yet rated), remaining, time per item."""
    session_row(store, name)
    out = []
    from srtui.results.store.typed import warn

    experts = []
    for (expert,) in store.conn.execute(
        "SELECT DISTINCT expert FROM review_assignments WHERE session = ? ORDER BY expert", (name,)
    ):
        if isinstance(expert, str):
            experts.append(expert)
        else:  # a crafted workspace
            warn("review_assignments", name, "expert", f"not a name ({type(expert).__name__})")
    for expert in experts:
        assigned = store.conn.execute(
            "SELECT count(*) FROM review_assignments WHERE session = ? AND expert = ?", (name, expert)
        ).fetchone()[0]
        times = [
            r[0]
            for r in store.conn.execute(
                "SELECT elapsed_s FROM review_ratings WHERE session = ? AND expert = ? AND elapsed_s IS NOT NULL",
                (name, expert),
            )
        ]
        rated, last = store.conn.execute(
            "SELECT count(*), max(submitted_at) FROM review_ratings WHERE session = ? AND expert = ?", (name, expert)
        ).fetchone()
        skipped = store.conn.execute(
            "SELECT count(DISTINCT a.assignment_id) FROM review_audit a WHERE a.session = ? AND a.expert = ? "
            "AND a.action = 'skip' AND NOT EXISTS (SELECT 1 FROM "
            "review_ratings r WHERE r.assignment_id = a.assignment_id)",
            (name, expert),
        ).fetchone()[0]
        median = statistics.median(times) if times else None
        out.append(
            {
                "expert": expert,
                "assigned": assigned,
                "rated": rated,
                "skipped": skipped,
                "remaining": assigned - rated,
                "median_s_per_item": median,
                "last_rating": last,
            }
        )
    return out


def _event(
    c: sqlite3.Connection, name: str, event: str, actor: str | None, detail: dict[str, Any] | None = None
) -> str:
    at = now_iso()
    c.execute(
        "INSERT INTO review_events (session, event, actor, at, detail) VALUES (?,?,?,?,?)",
        (name, event, actor, at, json.dumps(detail or {})),
    )
    return at


def close(store: Store, name: str, actor: str | None = None) -> None:
    with store.transaction() as c:
        row = session_row(store, name)
        if row["status"] == "closed":
            raise ReviewError(f"review {name!r} is already closed")
        at = _event(c, name, "close", actor)
        c.execute("UPDATE review_sessions SET status = 'closed', closed_at = ? WHERE name = ?", (at, name))


def unblind(store: Store, name: str, actor: str | None = None) -> None:
    """Reveal which method made which item: only after close, once, and logged."""
    with store.transaction() as c:
        row = session_row(store, name)
        if row["status"] != "closed":
            raise ReviewError(f"review {name!r} is still open: close it first (`srtui review close {name}`)")
        if row["unblinded_at"]:
            raise ReviewError(f"review {name!r} was already unblinded at {row['unblinded_at']}")
        at = _event(c, name, "unblind", actor)
        c.execute("UPDATE review_sessions SET unblinded_at = ? WHERE name = ?", (at, name))


def events(store: Store, name: str) -> list[dict[str, Any]]:
    cur = store.conn.execute(
        "SELECT seq, event, actor, at, detail FROM review_events WHERE session = ? ORDER BY seq", (name,)
    )
    return [dict(zip([d[0] for d in cur.description], r)) for r in cur]


def audit(store: Store, name: str) -> list[dict[str, Any]]:
    cur = store.conn.execute("SELECT * FROM review_audit WHERE session = ? ORDER BY seq", (name,))
    return [dict(zip([d[0] for d in cur.description], r)) for r in cur]


# --- expert ----------------------------------------------------------------------------------


@dataclass
class Shown:
    at: str
    mono: float


@dataclass
class ExpertSession:
    """One expert's view of a session: their own assignments only, in their own order.

    Holds no method names: item content is the frozen JSON, and the assignment ids it exposes
    are opaque (a repeat has its own id, so it cannot be told from a first showing)."""

    store: Store
    session: str
    expert: str
    order: list[str] = field(default_factory=list)  # assignment ids by position
    _items: dict[str, str] = field(default_factory=dict)  # assignment -> item id
    _ratings: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    _content: dict[str, dict[str, Any]] = field(default_factory=dict)
    _shown: dict[str, Shown] = field(default_factory=dict)

    @classmethod
    def open(cls, store: Store, session: str, expert: str) -> ExpertSession:
        if not names.is_name(session) or not names.is_name(expert):
            raise ExpertError("this review cannot be opened: check the session and expert names with the organiser")
        row = store.conn.execute("SELECT status FROM review_sessions WHERE name = ?", (session,)).fetchone()
        rows = store.conn.execute(
            "SELECT assignment_id, item_id FROM review_assignments WHERE session = ? AND expert = ? ORDER BY position",
            (session, expert),
        ).fetchall()
        if row is None or not rows:
            raise ExpertError("this review cannot be opened: check the session and expert names with the organiser")
        if row[0] != "open":
            raise ExpertError("this review is closed; thank you")
        self = cls(store, session, expert, [a for a, _ in rows], dict(rows))
        for a, r, comment in store.conn.execute(
            "SELECT assignment_id, rating, comment FROM review_ratings WHERE session = ? AND expert = ?",
            (session, expert),
        ):
            self._ratings[a] = (r, comment)
        return self

    def __len__(self) -> int:
        return len(self.order)

    @property
    def rated(self) -> int:
        return len(self._ratings)

    def rating(self, index: int) -> tuple[int, str | None] | None:
        return self._ratings.get(self.order[index])

    def first_unrated(self) -> int | None:
        return self.next_unrated(-1)

    def next_unrated(self, after: int) -> int | None:
        """The first unrated position after ``after``, wrapping round; None when all are rated."""
        n = len(self.order)
        for k in range(1, n + 1):
            i = (after + k) % n
            if self.order[i] not in self._ratings:
                return i
        return None

    def content(self, index: int) -> dict[str, Any]:
        item = self._items[self.order[index]]
        if item not in self._content:
            row = self.store.conn.execute("SELECT content FROM review_items WHERE item_id = ?", (item,)).fetchone()
            self._content[item] = safe_value(json.loads(row[0]))  # shown on a terminal
        return self._content[item]

    def show(self, index: int) -> dict[str, Any]:
        """The item's frozen content; starts its clock (timing is kept with the rating)."""
        content = self.content(index)
        self._shown[self.order[index]] = Shown(now_iso(), time.monotonic())
        return content

    def _write(self, index: int, action: str, rating: int | None, comment: str | None) -> None:
        a = self.order[index]
        shown = self._shown.get(a) or Shown(now_iso(), time.monotonic())
        at, elapsed = now_iso(), round(time.monotonic() - shown.mono, 3)
        try:
            with self.store.transaction() as c:
                if action != "skip":
                    cur = c.execute(
                        "UPDATE review_ratings SET rating = ?, comment = ?, shown_at = ?, submitted_at = ?, "
                        "elapsed_s = ?, revisions = revisions + 1 WHERE assignment_id = ?",
                        (rating, comment, shown.at, at, elapsed, a),
                    )
                    action = "revise" if cur.rowcount else "rate"
                    if action == "rate":
                        c.execute(
                            "INSERT INTO review_ratings (assignment_id, session, expert, item_id, rating, comment, "
                            "shown_at, submitted_at, elapsed_s) VALUES (?,?,?,?,?,?,?,?,?)",
                            (a, self.session, self.expert, self._items[a], rating, comment, shown.at, at, elapsed),
                        )
                c.execute(
                    "INSERT INTO review_audit (session, expert, assignment_id, action, rating, comment, shown_at, at, "
                    "elapsed_s) VALUES (?,?,?,?,?,?,?,?,?)",
                    (self.session, self.expert, a, action, rating, comment, shown.at, at, elapsed),
                )
        except sqlite3.IntegrityError as exc:
            if "not open" in str(exc):
                raise ExpertError("this review has been closed; your earlier ratings are saved") from None
            raise ExpertError("a rating must be a whole number from 1 to 5") from None
        except sqlite3.OperationalError:
            raise ExpertError("the rating could not be saved just now; please try again") from None
        if action != "skip" and rating is not None:
            self._ratings[a] = (rating, comment)

    def rate(self, index: int, rating: int, comment: str | None = None) -> None:
        """Commit a rating (or a revision) of the item at ``index`` before anything else is shown."""
        if isinstance(rating, bool) or not isinstance(rating, int) or rating not in LIKERT:
            raise ExpertError("a rating must be a whole number from 1 to 5")  # 10**20 included
        self._write(index, "rate", rating, (comment or "").strip() or None)

    def skip(self, index: int) -> None:
        self._write(index, "skip", None, None)
