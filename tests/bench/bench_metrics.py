"""Benchmark: every release's expression metrics for many models of mixed size, before and after
the numeric screen, in one run.

    python tests/bench/bench_metrics.py [--n 2000] [--baseline-n 400] [--timeout 10] [--workers 2]
    python tests/bench/bench_metrics.py --overlap [--seeds 4] [--slots 2]   (tests/bench/bench_overlap.py)

Prints models/s of a first pass without the screen (every solution check simplifies difference
and ratio) and of a first pass with it (fresh caches both), their ratio (target >= 10x) and the
ratio to the 2.4 models/s issue 12 measured, whether every verdict is identical, the solution-
check phase alone (where the screen acts), the ceiling the deadline sets (the worker seconds of
the operations that ran out of time, as if everything else were free), and the speed-up of a
second pass served from the cache in a real workspace database (target >= 20x).

The pass with the screen runs on all ``--n`` models. The pass without it would take hours on
2,000 (most of its checks run into the deadline), so it runs on the first ``--baseline-n`` of
the same sequence: the mix is periodic (every 50th model pathological, every 10th a near-solution),
so that prefix has the same mix; verdicts are compared on those models.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from targets import finish, target

from srtui.engine.pool import default_workers
from srtui.engine.workspace import Workspace
from srtui.results.metrics.declare import stored, stored_releases
from srtui.results.metrics.expr_batch import ExprCache, ModelItem, expression_metrics
from srtui.results.store.store import Store

FEATS = ("x1", "x2", "x3")
TRUTHS = ("0.4*x1*x2 - 1.5*x1 + 2.5*x2 + 1", "x1*exp(-x2) + sin(x3)", "x1**2 + x2**2 - x3")


def _leaf(rng) -> str:
    return rng.choice(list(FEATS)) if rng.random() < 0.6 else f"{rng.normal() * 3:.4f}"


def _random_expr(rng, depth: int) -> str:
    if depth == 0:
        return _leaf(rng)
    op = rng.choice(["+", "-", "*", "/", "sin", "exp", "**2"])
    if op in ("sin", "exp"):
        return f"{op}({_random_expr(rng, depth - 1)})"
    if op == "**2":
        return f"({_random_expr(rng, depth - 1)})**2"
    return f"({_random_expr(rng, depth - 1)} {op} {_random_expr(rng, depth - 1)})"


def _pathological(rng, k: int) -> str:
    # products of sums of exponentials, and towers: expand/simplify blow-ups
    if k % 2:
        return "*".join(f"(x1 + {i}*x2 + exp(x3*{i}) + {rng.normal():.3f})" for i in range(1, 9)) + " - x1**7*x2"
    inner = "x1"
    for i in range(7):
        inner = f"exp(sin({inner}) + x{1 + i % 3}*{i + 1})"
    return f"{inner}*({' + '.join(f'x2**{j}' for j in range(1, 12))})"


def models(n: int, seed: int = 0) -> list[ModelItem]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i % 50 == 0:
            text = _pathological(rng, i // 50)
        elif i % 10 == 0:
            text = TRUTHS[i % 3].replace("1.5", "1.5000") + f" + {rng.normal():.3f}"  # some solutions
        else:
            text = _random_expr(rng, int(rng.integers(1, 6)))
        out.append(ModelItem(text, FEATS, "python", TRUTHS[i % 3]))
    return out


#: every stored verdict: each release's published one, its corrected one and its named variants
VERDICTS = tuple(f"{r}.{m}" for r in stored_releases() for m in stored(r) if m.startswith("symbolic_solution"))


def _pass(items, cache, workers, timeout, screen):
    t0 = time.perf_counter()
    out, stats = expression_metrics(items, cache, workers=workers, timeout=timeout, screen=screen)
    return out, stats, time.perf_counter() - t0


def _solution_seconds(store) -> float:
    return store.conn.execute("SELECT coalesce(sum(seconds), 0) FROM expr_cache WHERE op LIKE 'solution:%'").fetchone()[
        0
    ]


def _per_model(store, n: int) -> dict[str, float]:
    """Worker seconds per model by kind of operation (timed-out operations apart): where a pass spends."""
    kind = (
        "CASE WHEN status = 'timeout' THEN 'timed out' WHEN op LIKE 'model:%' THEN 'clean-ups' "
        "WHEN op = 'srsd' THEN 'srsd' WHEN op LIKE 'solution:%' THEN 'solution checks' ELSE 'other' END"
    )
    rows = store.conn.execute(f"SELECT {kind}, sum(seconds) FROM expr_cache GROUP BY 1 ORDER BY 1").fetchall()
    return {k: s / n for k, s in rows if k != "other"}


def _words(split: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in split.items())


ISSUE_RATE = 2.4  # models/s of the first pass when issue 12 was written (2 cores, no screen)


def main() -> None:
    if "--overlap" in sys.argv:  # metrics in the run's slots against the post-run pass
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_overlap import main as overlap

        overlap([a for a in sys.argv[1:] if a != "--overlap"])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument(
        "--baseline-n",
        type=int,
        default=400,
        help="models of the no-screen pass: the first N of the same sequence (same mix)",
    )
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    items = [ModelItem(i.text, i.features, i.dialect, i.truth, r2_test=0.9) for i in models(args.n)]
    nb = min(args.baseline_n, args.n)
    workers = args.workers or default_workers()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a").mkdir()
        (Path(tmp) / "b").mkdir()
        slow_store = Store(Workspace(Path(tmp) / "a"), create=True)
        before, s0, t0 = _pass(items[:nb], ExprCache(slow_store.conn, slow_store.lock), workers, args.timeout, False)
        store = Store(Workspace(Path(tmp) / "b"), create=True)
        cache = ExprCache(store.conn, store.lock)
        first, s1, t1 = _pass(items, cache, workers, args.timeout, True)
        sol0, sol1 = _solution_seconds(slow_store), _solution_seconds(store)
        split = (_per_model(slow_store, nb), _per_model(store, args.n))
        longest = store.conn.execute("SELECT max(seconds) FROM expr_cache WHERE op != 'basic'").fetchone()[0] or 0.0
        second, _s2, t2 = _pass(items, cache, workers, args.timeout, True)
        slow_store.close()
        store.close()
    assert second == first, "the cached pass must give the same metrics"
    _report(args, items, nb, workers, (before, s0, t0), (first, s1, t1), t2, (sol0, sol1, longest, split))
    finish()


def _report(args, items, nb, workers, slow, fast, t2, extra) -> None:
    (before, s0, t0), (first, s1, t1), (sol0, sol1, longest, split) = slow, fast, extra
    same = all(a.get(k) == b.get(k) for a, b in zip(before, first[:nb]) for k in VERDICTS)
    timed_out = sum(1 for a, b in zip(before, first) if a.get("solution_timeout") or b.get("solution_timeout"))
    solved = {k: sum(1 for m in first if m.get(k)) for k in VERDICTS}
    rate0, rate1 = nb / t0, args.n / t1
    print(
        f"models: {args.n} ({len({i.key for i in items})} distinct, {sum(1 for i in range(args.n) if i % 50 == 0)} "
        f"pathological), workers: {workers}, deadline per model: {args.timeout:g} s"
    )
    print(
        f"first pass without screen: {nb} models (the first {nb}: same mix) in {t0:.1f} s = {rate0:.2f} models/s "
        f"(timeouts {s0.timeouts})"
    )
    print(f"first pass with screen:    {args.n} models in {t1:.1f} s = {rate1:.2f} models/s (timeouts {s1.timeouts})")
    print(
        f"ratio with/without screen: {rate1 / rate0:.1f}x ({target('screen speed-up', rate1 / rate0, '>=', 10, 'x')}); "
        f"vs the issue's {ISSUE_RATE} models/s: {rate1 / ISSUE_RATE:.1f}x"
    )
    print(
        f"solution checks alone (worker seconds, first {nb}): {sol0:.1f} s without the screen; "
        f"all {args.n} with it: {sol1:.1f} s; per model {sol0 / nb:.2f} and {sol1 / args.n:.3f} = "
        f"{(sol0 / nb) / max(sol1 / args.n, 1e-9):.0f}x"
    )
    print(f"worker seconds per model without screen: {_words(split[0])}; with it: {_words(split[1])}")
    # the models that run out of time cost the deadline whatever computes them: even if every
    # other operation were free, the pass could not be faster than the workers can spend it
    dead = split[1].get("timed out", 0.0)
    if dead:
        ceiling = workers / dead
        print(
            f"ceiling set by the deadline alone (timed-out worker seconds {dead:.2f} per model, all else free): "
            f"{ceiling:.1f} models/s = {ceiling / rate0:.1f}x the pass without screen, "
            f"{ceiling / ISSUE_RATE:.1f}x the issue's {ISSUE_RATE} models/s"
        )
    print(
        f"verdicts identical on the {nb} models of both passes: {'yes' if same else 'no'} "
        f"({target('identical verdicts (1 = yes)', int(same), '>=', 1)}) "
        f"(models with a timed-out check in either pass: {timed_out}); solutions: {solved}"
    )
    print(f"longest operation: {longest:.2f} s (deadline {args.timeout:g} s)")
    print(
        f"second pass (cache): {t2:.2f} s = {args.n / t2:.0f} models/s; speed-up {t1 / t2:.0f}x "
        f"({target('cache speed-up', t1 / t2, '>=', 20, 'x')})"
    )


if __name__ == "__main__":
    main()
