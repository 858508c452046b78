"""Expression metrics of many models at once: cached by (expression hash, truth hash, operation),
the misses computed by a :class:`results.pool.TimedPool` under a per-operation deadline.

A timeout is a result too: it is cached with the deadline it had, so a rescore with a longer
deadline tries again and one with the same deadline does not.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from results import expr_metrics as em
from results.pool import TimedPool


@dataclass(frozen=True)
class ModelItem:
    text: str
    features: tuple[str, ...]
    dialect: str = "python"
    truth: str | None = None
    unwanted: tuple[str, ...] = ()  # irrelevant or shortcut features (feature absence)

    @property
    def key(self) -> str:
        return em.expr_hash(self.text, self.features, self.dialect)

    @property
    def truth_key(self) -> str | None:
        return em.expr_hash(self.truth, self.features, "python") if self.truth else None


def _cache_key(op: str, a: str, b: str | None = None) -> str:
    return hashlib.sha256(f"{op}\x1f{a}\x1f{b or ''}".encode()).hexdigest()[:32]


class ExprCache:
    """The ``expr_cache`` table of a workspace database, or an in-memory dict without one."""

    def __init__(self, conn: sqlite3.Connection | None = None, lock: threading.RLock | None = None) -> None:
        self.conn, self.lock = conn, lock or threading.RLock()
        self.mem: dict[str, tuple[str, Any, float | None]] = {}

    def get_many(self, keys: Sequence[str], timeout: float) -> dict[str, tuple[str, Any]]:
        found: dict[str, tuple[str, Any]] = {}
        if self.conn is None:
            rows = [(k, *self.mem[k]) for k in keys if k in self.mem]
        else:
            rows = []
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                q = f"SELECT key, status, result, timeout FROM expr_cache WHERE key IN ({','.join('?' * len(chunk))})"
                rows += [(k, s, json.loads(r) if r else None, t) for k, s, r, t in self.conn.execute(q, chunk)]
        for key, status, result, t in rows:
            if status == "timeout" and (t or 0) < timeout:
                continue  # a longer deadline deserves another try
            found[key] = (status, result)
        return found

    def put_many(self, rows: Iterable[tuple[str, str, str, Any, float | None, float]]) -> None:
        rows = list(rows)
        if self.conn is None:
            for key, _op, status, result, timeout, _s in rows:
                self.mem[key] = (status, json.loads(json.dumps(result)), timeout)
            return
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO expr_cache (key, op, status, result, timeout, seconds) VALUES (?,?,?,?,?,?)",
                    [(k, op, st, json.dumps(res), to, s) for k, op, st, res, to, s in rows],
                )
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")


@dataclass
class BatchStats:
    computed: int = 0
    cached: int = 0
    timeouts: int = 0
    errors: int = 0
    ops: dict[str, int] = field(default_factory=dict)


def _basic(item: ModelItem) -> dict[str, Any]:
    """Cheap metrics of the parsed tree (no simplify); parse errors reported, not raised."""
    try:
        p = em.parse(item.text, item.features, item.dialect)
    except em.ExpressionError as exc:
        return {"parse_error": str(exc)}
    if p.too_large:
        return {"too_large": True}
    return {"size": em.node_count(p.expr), "diversity": em.diversity(p.expr),
            "used": sorted(em.used_features(p.expr))}


def _run(ops: dict[str, tuple[str, dict]], cache: ExprCache, pool_args: dict, stats: BatchStats,
         exprs: dict[str, Any] | None = None) -> dict[str, tuple[str, Any]]:
    """Resolve {cache_key: (op, payload)} through the cache, then the pool.

    Sympy trees a fresh result carries under ``"_expr"`` go to ``exprs`` (for the next phase),
    never into the cache or the returned values.
    """
    keys = list(ops)
    done = cache.get_many(keys, pool_args["timeout"])
    stats.cached += len(done)
    todo = [(k, ops[k][1]) for k in keys if k not in done]
    if todo:
        new = []
        with TimedPool(em.run_op, preload=("results.expr_metrics",), **pool_args) as pool:
            for r in pool.run(todo):
                if isinstance(r.value, dict) and "_expr" in r.value:
                    expr = r.value.pop("_expr")
                    if exprs is not None:
                        exprs[r.key] = expr
                done[r.key] = (r.status, r.value)
                stats.computed += 1
                stats.timeouts += r.status == "timeout"
                stats.errors += r.status in ("error", "crashed")
                new.append((r.key, ops[r.key][0], r.status, r.value, pool_args["timeout"], r.seconds))
                if len(new) >= 200:
                    cache.put_many(new)
                    new = []
        cache.put_many(new)
    return done


def expression_metrics(items: Sequence[ModelItem], cache: ExprCache | None = None, workers: int | None = None,
                       timeout: float = 10.0) -> tuple[list[dict[str, Any]], BatchStats]:
    """One dict of expression metrics per item (see :func:`_assemble` for the names)."""
    cache = cache or ExprCache()
    stats = BatchStats()
    pool_args = {"workers": workers, "timeout": timeout}
    uniq = {it.key: it for it in items}
    truths = {it.truth_key: it for it in items if it.truth}

    basic_ops = {_cache_key("basic", k): ("basic", it) for k, it in uniq.items()}
    basic = cache.get_many(list(basic_ops), timeout)
    stats.cached += len(basic)
    fresh = [(k, "basic", "ok", _basic(it), None, 0.0) for k, (_, it) in basic_ops.items() if k not in basic]
    cache.put_many(fresh)
    basic.update({k: ("ok", json.loads(json.dumps(v))) for k, _, _, v, _, _ in fresh})
    stats.computed += len(fresh)

    simp_ops: dict[str, tuple[str, dict]] = {}
    for k, it in uniq.items():
        b = basic[_cache_key("basic", k)][1]
        if "size" in b:
            simp_ops[_cache_key("simplify", k)] = ("simplify", {"op": "simplify", "text": it.text, "features": list(it.features), "dialect": it.dialect})
    for k, it in truths.items():
        simp_ops[_cache_key("simplify", k)] = ("simplify", {"op": "simplify", "text": it.truth, "features": list(it.features), "dialect": "python"})
    simplified: dict[str, Any] = {}  # simplify key -> sympy tree, for results computed in this pass
    simp = _run(simp_ops, cache, pool_args, stats, simplified)

    pair_ops: dict[str, tuple[str, dict]] = {}
    skipped: dict[str, tuple[str, Any]] = {}
    for it in items:
        if not it.truth or "size" not in basic[_cache_key("basic", it.key)][1]:
            continue
        model_key, solution_key = _cache_key("simplify", it.key), _cache_key("solution", it.key, it.truth_key)
        ms, ts = simp.get(model_key), simp.get(_cache_key("simplify", it.truth_key))
        if ms and ms[0] == "timeout":
            # the check starts by simplifying the model: it would only time out again
            skipped[solution_key] = ("timeout", "not run: simplifying the model timed out")
        else:
            pair_ops[solution_key] = ("solution", {
                "op": "solution", "text": it.text, "truth": it.truth, "features": list(it.features),
                "dialect": it.dialect, "simplified": simplified.get(model_key)})
        if ms and ts and ms[0] == "ok" and ts[0] == "ok" and "tree" in ms[1] and "tree" in ts[1]:
            pair_ops[_cache_key("ted", it.key, it.truth_key)] = ("ted", {"op": "ted", "model_tree": ms[1]["tree"], "truth_tree": ts[1]["tree"]})
    pairs = _run(pair_ops, cache, pool_args, stats)
    pairs.update(skipped)

    out = [_assemble(it, basic[_cache_key("basic", it.key)][1], simp, pairs) for it in items]
    return out, stats


def _assemble(it: ModelItem, b: dict, simp: dict, pairs: dict) -> dict[str, Any]:
    m: dict[str, Any] = {}
    notes = []
    if "parse_error" in b:
        return {"parse_error": 1, "_notes": [f"parse error: {b['parse_error']}"]}
    if b.get("too_large"):
        return {"too_large": 1, "symbolic_solution": 0 if it.truth else None, "_notes": ["expression too large"]}
    m["size"], m["diversity"] = b["size"], b["diversity"]
    m["feature_absence"] = em.feature_absence(set(b["used"]), it.unwanted)
    status, val = simp.get(_cache_key("simplify", it.key), ("missing", None))
    if status == "ok":
        m["size_simplified"], m["simplify_timeout"], m["constant_model"] = val["size_simplified"], 0, int(val["constant"])
        m["_simplified"] = val.get("simplified")
    else:
        m["size_simplified"], m["simplify_timeout"] = b["size"], int(status == "timeout")
        notes.append(f"simplify {status}: {val}; size_simplified falls back to the unsimplified size")
    m["simplicity"] = em.simplicity(m["size_simplified"])
    m["simplicity_unsimplified"] = em.simplicity(m["size"])
    if it.truth:
        status, val = pairs.get(_cache_key("solution", it.key, it.truth_key), ("missing", None))
        m["symbolic_solution"] = int(bool(status == "ok" and val["symbolic_solution"]))
        m["solution_timeout"] = int(status == "timeout")
        notes.append(f"solution: {val['why']}" if status == "ok" else f"symbolic-solution check {status}: {val}")
        status, val = pairs.get(_cache_key("ted", it.key, it.truth_key), ("missing", None))
        m["ted_norm"] = val["ted_norm"] if status == "ok" else None
        m["ted_timeout"] = int(status == "timeout")
        t_status, t_val = simp.get(_cache_key("simplify", it.truth_key), ("missing", None))
        m["_truth_simplified"] = t_val.get("simplified") if t_status == "ok" else None
        if status != "ok":
            notes.append(f"tree edit distance {status}")
    m["_notes"] = notes
    return m
