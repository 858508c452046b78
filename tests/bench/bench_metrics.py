"""Benchmark: simplified size + symbolic solution (+ edit distance) for many models of mixed size.

    python tests/bench/bench_metrics.py [--n 2000] [--timeout 10] [--workers N]

Prints models/s of a first pass (process pool, every sympy operation under the deadline), the
longest single operation (must not exceed the deadline by more than the kill latency), the CPU
use of the workers relative to the cores, and the speed-up of a second pass served from the
cache in a real workspace database (target >= 20x).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.workspace import Workspace
from results.expr_batch import ExprCache, ModelItem, expression_metrics
from results.pool import default_workers
from results.store import Store

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    items = models(args.n)
    workers = args.workers or default_workers()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Workspace(Path(tmp)), create=True)
        cache = ExprCache(store.conn, store.lock)
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        first, s1 = expression_metrics(items, cache, workers=workers, timeout=args.timeout)
        t1 = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child_cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
        longest = store.conn.execute("SELECT max(seconds) FROM expr_cache WHERE op != 'basic'").fetchone()[0] or 0.0
        t0 = time.perf_counter()
        second, s2 = expression_metrics(items, cache, workers=workers, timeout=args.timeout)
        t2 = time.perf_counter() - t0
        store.close()
    assert second == first, "the cached pass must give the same metrics"
    solved = sum(1 for m in first if m.get("symbolic_solution"))
    fallbacks = sum(1 for m in first if m.get("simplify_timeout"))
    print(f"models: {args.n} ({len({i.key for i in items})} distinct), workers: {workers}, timeout: {args.timeout:g} s")
    print(f"first pass: {t1:.1f} s = {args.n / t1:.1f} models/s; operations computed {s1.computed}, "
          f"timeouts {s1.timeouts}, errors {s1.errors}; symbolic solutions {solved}; simplify fallbacks {fallbacks}")
    print(f"longest operation: {longest:.2f} s (deadline {args.timeout:g} s); worker CPU {child_cpu:.1f} s "
          f"= {child_cpu / t1 / workers:.0%} of {workers} core(s) over the pass")
    print(f"second pass (cache): {t2:.2f} s = {args.n / t2:.0f} models/s; speed-up {t1 / t2:.0f}x (target >= 20x)")


if __name__ == "__main__":
    main()
