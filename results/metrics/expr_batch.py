"""Expression metrics of many models at once: cached by (expression hash, truth hash, operation),
the misses computed by a :class:`srtui.engine.pool.TimedPool`, one task (and one deadline) per model and
release (FFX's 1,500-node models take 6-7 s of CPU per release: one deadline for all three ended
every one of them).

A timeout is a result too: it is cached with the deadline (of CPU time, srtui.engine.pool) it had, so a
rescore with a longer deadline tries again and one with the same deadline does not; one ended by
the pool's wall-clock backstop (a starved worker) is cached with deadline 0, so every pass tries again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from srtui.engine.pool import WALL_LIMIT, TimedPool
from srtui.results.metrics import expr_metrics as em
from srtui.results.metrics.declare import by_name, defaults, version_offset
from srtui.results.metrics.release_values import DEFINITION_VERSION, assemble_release
from srtui.results.metrics.releases import RELEASES, SPECS
from srtui.results.metrics.solutions import CHECK_NAMES, CHECKS, PUBLISHED, VARIANTS


@dataclass(frozen=True)
class ModelItem:
    text: str
    features: tuple[str, ...]
    dialect: str = "python"
    truth: str | None = None
    unwanted: tuple[str, ...] = ()  # irrelevant or shortcut features (feature absence)
    r2_test: float | None = None  # SRBench 2021 checks a solution only when test R2 > 0.5
    gate_r2: bool = True  # False: the 2021 gate is not applied (``srtui expr`` without --r2-test)

    @property
    def key(self) -> str:
        return em.expr_hash(self.text, self.features, self.dialect)

    @property
    def truth_key(self) -> str | None:
        return em.expr_hash(self.truth, self.features, "python") if self.truth else None


#: (status, value) of one operation: "ok" and its result, or "timeout"/"error"/... and why
OpResult = tuple[str, Any]
#: cache key -> its operation's result
OpResults = dict[str, OpResult]


def _cache_key(op: str, a: str, b: str | None = None) -> str:
    # the definition version is part of the key: a cached value of an older definition is never reused
    version = DEFINITION_VERSION + version_offset()
    return hashlib.sha256(f"{version}\x1f{op}\x1f{a}\x1f{b or ''}".encode()).hexdigest()[:32]


class ExprCache:
    """The ``expr_cache`` table of a workspace database, or an in-memory dict without one."""

    def __init__(self, conn: sqlite3.Connection | None = None, lock: threading.RLock | None = None) -> None:
        self.conn, self.lock = conn, lock or threading.RLock()
        self.mem: dict[str, tuple[str, Any, float | None]] = {}
        #: rows put into an in-memory cache: what a metrics task computed, for the driver to store
        self.added: list[tuple[str, str, str, Any, float | None, float]] = []

    def rows(self, keys: Sequence[str]) -> dict[str, tuple[str, Any, float | None]]:
        """The stored rows of ``keys`` as they are (timeouts included), to preload an in-memory
        cache elsewhere (a metrics task on a slot or a Dask worker)."""
        if self.conn is None:
            return {k: self.mem[k] for k in keys if k in self.mem}
        out: dict[str, tuple[str, Any, float | None]] = {}
        with self.lock:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                q = f"SELECT key, status, result, timeout FROM expr_cache WHERE key IN ({','.join('?' * len(chunk))})"
                for k, status, result, t in self.conn.execute(q, chunk):
                    out[k] = (status, json.loads(result) if result else None, t)
        return out

    def get_many(self, keys: Sequence[str], timeout: float) -> OpResults:
        found: OpResults = {}
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
            self.added += [(k, op, st, json.loads(json.dumps(res)), to, sec) for k, op, st, res, to, sec in rows]
            return
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO expr_cache (key, op, status, "
                    "result, timeout, seconds) VALUES (?,?,?,?,?,?)",
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
    return {"size": em.node_count(p.expr), "diversity": em.diversity(p.expr), "used": sorted(em.used_features(p.expr))}


#: operations of a batch: {cache_key: (operation name, payload, group)}; a group (one model, or one
#: model and truth) runs as one pool task under one deadline
Ops = dict[str, tuple[str, dict[str, Any], str]]


#: what the pool's server imports once (a pool in a process with threads forks from it)
PRELOAD = ("srtui.results.metrics.expr_metrics",)


def metrics_pool(workers: int | None, timeout: float, core: int | None = None) -> TimedPool:
    """The pool that computes expression metrics (each task under ``timeout``)."""
    return TimedPool(em.run_op, workers, timeout, preload=PRELOAD, core=core)


class PoolArgs(TypedDict):
    """The ``TimedPool`` options of a batch."""

    workers: int | None
    timeout: float
    core: int | None


def _run(
    ops: Ops,
    cache: ExprCache,
    pool_args: PoolArgs,
    stats: BatchStats,
    exprs: dict[str, Any] | None = None,
    kept: TimedPool | None = None,
) -> OpResults:
    """Resolve ``ops`` through the cache, then the pool: the missing operations of one group are
    one task, so a pathological model costs one deadline per group (its clean-up under a release,
    its solution checks), not one per operation, and its operations share simplify results
    (srtui.results.metrics.releases.shared_simplify) in the worker.

    Sympy trees a fresh result carries under ``"_expr"`` go to ``exprs`` (for the next phase),
    never into the cache or the returned values.
    """
    keys = list(ops)
    done = cache.get_many(keys, pool_args["timeout"])
    stats.cached += len(done)
    groups: dict[str, list[str]] = {}
    for k in keys:
        if k not in done:
            groups.setdefault(ops[k][2], []).append(k)
    if not groups:
        return done
    tasks: list[tuple[str, dict[str, Any]]] = [
        (g, {"op": "bundle", "ops": [ops[k][1] for k in ks]}) for g, ks in groups.items()
    ]
    # longest model strings first: the workers then finish together rather than one of them
    # idling while the other works through a late pathological model
    tasks.sort(key=lambda t: -max(len(p["text"]) for p in t[1]["ops"]))
    new: list[tuple[str, str, str, Any, float | None, float]] = []
    pool = kept or metrics_pool(**pool_args)
    try:
        for r in pool.run(tasks):
            ks = groups[str(r.key)]
            # a task the wall-clock backstop ended (a starved worker) is cached as due again
            deadline = 0.0 if r.limit == WALL_LIMIT else pool_args["timeout"]
            if r.status == "ok":
                results = r.value["results"]
            else:  # the whole task timed out or crashed: so did each of its operations
                results = [(r.status, r.value, r.seconds / len(ks))] * len(ks)
            for k, (status, value, seconds) in zip(ks, results):
                if isinstance(value, dict) and "_expr" in value:
                    expr = value.pop("_expr")
                    if exprs is not None:
                        exprs[k] = expr
                done[k] = (status, value)
                stats.computed += 1
                stats.timeouts += status == "timeout"
                stats.errors += status in ("error", "crashed")
                new.append((k, ops[k][0], status, value, deadline, seconds))
            if len(new) >= 200:
                cache.put_many(new)
                new = []
    finally:
        if kept is None:
            pool.close()
    cache.put_many(new)
    return done


def expression_metrics(
    items: Sequence[ModelItem],
    cache: ExprCache | None = None,
    workers: int | None = None,
    timeout: float = 10.0,
    screen: bool = True,
    core: int | None = None,
    pool: TimedPool | None = None,
) -> tuple[list[dict[str, Any]], BatchStats]:
    """One dict of expression metrics per item (names: :func:`srtui.results.metrics.release_values.assemble_release`).

    Two phases of pool tasks, each under one deadline (``timeout``): the model under each release
    (a task per model and release) and SRSD's distance to each truth (one per model), then the
    solution checks of every release (one per model, from the cleaned models of phase one; not run
    for a release whose model timed out).
    ``screen=False`` skips the numeric screen (same verdicts, slower; the benchmark compares).
    ``pool``: a pool the caller keeps between batches (its processes then stay warm), else one
    made from ``workers``, ``timeout`` and ``core`` for each phase.
    """
    cache = cache or ExprCache()
    stats = BatchStats()
    pool_args: PoolArgs = {"workers": workers, "timeout": timeout, "core": core}
    uniq = {(it.key, it.unwanted): it for it in items}

    basic_ops = {_cache_key("basic", it.key): ("basic", it) for it in uniq.values()}
    basic = cache.get_many(list(basic_ops), timeout)
    stats.cached += len(basic)
    fresh = [(k, "basic", "ok", _basic(it), None, 0.0) for k, (_, it) in basic_ops.items() if k not in basic]
    cache.put_many(fresh)
    basic.update({k: ("ok", json.loads(json.dumps(v))) for k, _, _, v, _, _ in fresh})
    stats.computed += len(fresh)
    readable = [it for it in items if "size" in basic[_cache_key("basic", it.key)][1]]

    cleaned: dict[str, Any] = {}  # model key -> the cleaned sympy model, for results computed in this pass
    first = _run(_model_ops(readable), cache, pool_args, stats, cleaned, pool)
    # phase two: the solution checks, and for a model whose simplify ran out of time the model a
    # release with a simplify limit of its own keeps (unsimplified; cheap, no simplify)
    second = _fallback_ops(readable, first) | _solution_ops(readable, first, cleaned, screen)
    pairs = _run(second, cache, pool_args, stats, kept=pool)
    pairs.update(first)

    out = [_assemble(it, basic[_cache_key("basic", it.key)][1], first, pairs) for it in items]
    return out, stats


def cache_keys(it: ModelItem) -> list[str]:
    """Every cache key computing ``it``'s metrics may read: a metrics task elsewhere gets their
    stored rows with it, so it computes exactly what the workspace's cache does not hold."""
    keys = [_cache_key("basic", it.key)]
    for rel in RELEASES:
        keys += [_model_key(it, rel), _model_key(it, rel, False)]
    if it.truth:
        keys.append(_cache_key("srsd", it.key, it.truth_key))
        keys += [_solution_key(it, check, simplified) for check in CHECK_NAMES for simplified in (True, False)]
    return keys


def _model_ops(readable: Sequence[ModelItem]) -> Ops:
    ops: Ops = {}
    for it in {(it.key, it.unwanted): it for it in readable}.values():
        for rel in RELEASES:
            ops[_model_key(it, rel)] = (f"model:{rel}", _model_op_payload(it, rel), f"{it.key}|{rel}")
    for it in readable:
        if it.truth:
            ops[_cache_key("srsd", it.key, it.truth_key)] = (
                "srsd",
                {
                    "op": "srsd",
                    "text": it.text,
                    "truth": it.truth,
                    "features": list(it.features),
                    "dialect": it.dialect,
                },
                it.key,
            )
    return ops


def _timed_out(models: OpResults, it: ModelItem, rel: str) -> bool:
    return models.get(_model_key(it, rel), ("",))[0] == "timeout"


def _keeps_unsimplified(models: OpResults, it: ModelItem, rel: str) -> bool:
    """The model's clean-up timed out and the release's code then keeps it unsimplified."""
    return SPECS[rel].simplify_limit is not None and _timed_out(models, it, rel)


def _op_name(kind: str, rel: str, simplified: bool = True) -> str:
    """``model:<rel>`` / ``solution:<check>``; ``:unsimplified`` for those of a kept model."""
    return f"{kind}:{rel}" if simplified else f"{kind}:{rel}:unsimplified"


def _solution_key(it: ModelItem, check: str, simplified: bool = True) -> str:
    return _cache_key(_op_name("solution", check, simplified), it.key, it.truth_key)


def _fallback_ops(readable: Sequence[ModelItem], models: OpResults) -> Ops:
    """The unsimplified model of each release that keeps one when its simplify runs out of time
    (2022, 2.0: ``Release.simplify_limit``), for the models whose clean-up timed out."""
    ops: Ops = {}
    for it in {(it.key, it.unwanted): it for it in readable}.values():
        for rel in RELEASES:
            if _keeps_unsimplified(models, it, rel):
                op = _model_op_payload(it, rel) | {"simplified": False}
                ops[_model_key(it, rel, False)] = (_op_name("model", rel, False), op, f"{it.key}|unsimplified")
    return ops


def _model_op_payload(it: ModelItem, rel: str) -> dict[str, Any]:
    return {
        "op": "model",
        "release": rel,
        "text": it.text,
        "features": list(it.features),
        "dialect": it.dialect,
        "unwanted": list(it.unwanted),
    }


def _solution_ops(readable: Sequence[ModelItem], models: OpResults, cleaned: dict[str, Any], screen: bool) -> Ops:
    ops: Ops = {}
    for it in readable:
        if not it.truth:
            continue
        for check in CHECK_NAMES:
            rel = CHECKS[check].release  # whose cleaned model the check tests
            # after a timeout, a release with a simplify limit checks the model it kept (unsimplified)
            simplified = not _keeps_unsimplified(models, it, rel)
            if simplified and _timed_out(models, it, rel):
                continue  # the check starts from the cleaned model: it would only time out again
            ops[_solution_key(it, check, simplified)] = (
                _op_name("solution", check, simplified),
                {
                    "op": "solution",
                    "release": check,
                    "text": it.text,
                    "truth": it.truth,
                    "features": list(it.features),
                    "dialect": it.dialect,
                    "screen": screen,
                    "simplified": simplified,
                    "model": cleaned.get(_model_key(it, rel)) if simplified else None,
                },
                f"{it.key}|{it.truth_key}",
            )
    return ops


def _check_result(it: ModelItem, check: str, models: OpResults, pairs: OpResults) -> OpResult:
    """(status, value) of one check of a model: "timeout" when its model's clean-up timed out
    and the release keeps no unsimplified model (the check was not run)."""
    rel = CHECKS[check].release
    simplified = not _keeps_unsimplified(models, it, rel)
    if simplified and _timed_out(models, it, rel):
        return "timeout", "not run: the model's simplify timed out"
    return pairs.get(_solution_key(it, check, simplified), ("missing", None))


def _model_key(it: ModelItem, release: str, simplified: bool = True) -> str:
    return _cache_key(_op_name("model", release, simplified), it.key, ",".join(it.unwanted))


def _assemble(it: ModelItem, b: dict[str, Any], models: OpResults, pairs: OpResults) -> dict[str, Any]:
    if "parse_error" in b:
        return {"parse_error": 1, "_notes": [f"parse error: {b['parse_error']}"]}
    if b.get("too_large"):
        return {"too_large": 1, "symbolic_solution": 0 if it.truth else None, "_notes": ["expression too large"]}
    m: dict[str, Any] = {"diversity": b["diversity"], "_notes": []}
    gate = None if not it.gate_r2 else it.r2_test
    for rel in RELEASES:
        model = models.get(_model_key(it, rel), ("missing", None))
        kept = pairs.get(_model_key(it, rel, False)) if _keeps_unsimplified(models, it, rel) else None
        sol, variants = None, {}
        if it.truth:  # the release's published check and its named variants
            sol = _check_result(it, PUBLISHED[rel], models, pairs)
            variants = {v: _check_result(it, c, models, pairs) for v, c in VARIANTS.get(rel, {}).items()}
        m.update(
            assemble_release(
                rel,
                model,
                sol,
                gate_applies=it.gate_r2 and CHECKS[PUBLISHED[rel]].assess,  # assess's R2 > 0.5
                r2_test=gate,
                notes=m["_notes"],
                kept=kept,
                variants=variants,
            )
        )
    if it.truth:
        status, val = pairs.get(_cache_key("srsd", it.key, it.truth_key), ("missing", None))
        m["srsd.ted"] = val["ted"] if status == "ok" else None
        m["srsd.ted_norm"] = val["ted_norm"] if status == "ok" else None
        m["ted_timeout"] = int(status == "timeout")
        if status != "ok":
            m["_notes"].append(f"SRSD edit distance {status}: {val}")
    _defaults(m, b, bool(it.truth))
    return m


def _defaults(m: dict[str, Any], b: dict[str, Any], with_truth: bool) -> None:
    declared = by_name()
    for name, source in defaults().items():  # srtui's unprefixed names: aliases of one release's values
        if declared[name].needs_truth and not with_truth:
            continue
        m[name] = m.get(source)
    if m["size"] is None:
        m["size"] = b["size"]
    m["simplify_timeout"] = int(any(m.get(f"{r}._timeout") for r in RELEASES))
    if m["size_simplified"] is None:  # simplify failed: the unsimplified size stands in
        m["size_simplified"] = m["size"]
        m["simplicity"] = em.simplicity(m["size"])
    if with_truth:
        m["solution_timeout"] = int(any(m.get(f"{r}._solution_timeout") for r in RELEASES))
    for r in RELEASES:
        m.pop(f"{r}._timeout", None)
        m.pop(f"{r}._solution_timeout", None)
