"""Benchmark: srtui's safe parser vs sympy.parse_expr, parse + lambdify on the same strings.

Run: ``python tests/bench/bench_parser.py [--n 10000] [--seed 0]``. Prints models/s for each and
the ratio (target: srtui no slower, ratio >= 1).
``parse_expr`` is allowed here only as the reference (it evaluates its input).
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr
from targets import finish, target

from srtui.engine.expression import ExpressionError, compile_expression, parse_expression

FEATURES = [f"x{i}" for i in range(5)]
UNARY = ["sin", "cos", "exp", "log", "sqrt", "abs", "tanh"]
BINARY = ["+", "-", "*", "/"]


def random_model(rng: random.Random, n_nodes: int) -> str:
    """A random expression string with exactly ``n_nodes`` nodes (operators, calls, leaves)."""
    if n_nodes <= 1:
        if rng.random() < 0.6:
            return rng.choice(FEATURES)
        return repr(round(rng.uniform(-10, 10), rng.randint(1, 8)))
    if n_nodes == 2 or rng.random() < 0.2:
        return f"{rng.choice(UNARY)}({random_model(rng, n_nodes - 1)})"
    if rng.random() < 0.05:
        return f"({random_model(rng, n_nodes - 2)})**{rng.randint(2, 3)}"
    left = rng.randint(1, n_nodes - 2)
    return f"({random_model(rng, left)} {rng.choice(BINARY)} {random_model(rng, n_nodes - 1 - left)})"


def make_models(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [random_model(rng, rng.randint(10, 200)) for _ in range(n)]


def run_srtui(models: list[str]) -> tuple[float, int]:
    compile_expression.cache_clear()
    failed = 0
    t = time.perf_counter()
    for text in models:
        try:
            p = parse_expression(text, FEATURES)
            compile_expression(p.expr, p.features)
        except ExpressionError:
            failed += 1
    return time.perf_counter() - t, failed


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_sympy(models: list[str], limit: float) -> tuple[float, int, int]:
    """Seconds, failures and timeouts; a string over ``limit`` seconds is cut off there, so the
    sympy time is a lower bound (its automatic evaluation takes up to minutes on some strings)."""
    local = {f: sp.Symbol(f, real=True) for f in FEATURES}
    args = list(local.values())
    failed = timeouts = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    t = time.perf_counter()
    try:
        for text in models:
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                expr = parse_expr(text, local_dict=local)
                sp.lambdify(args, expr, modules="numpy")
            except _Timeout:
                timeouts += 1
            except Exception:  # noqa: BLE001 - e.g. constant folding to zoo, which numpy's printer cannot print
                failed += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return time.perf_counter() - t, failed, timeouts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=2.0, help="seconds per string for the sympy reference")
    a = ap.parse_args()
    models = make_models(a.n, a.seed)
    chars = np.mean([len(m) for m in models])
    print(f"{a.n} random models, 10-200 nodes, mean {chars:.0f} characters (seed {a.seed})", flush=True)
    run_srtui(models[:20])  # warm imports and caches of both sides first
    run_sympy(models[:20], a.limit)
    t_srtui, srtui_failed = run_srtui(models)
    t_sympy, failed, timeouts = run_sympy(models, a.limit)
    r_srtui, r_sympy = a.n / t_srtui, a.n / t_sympy
    print(f"srtui parse_expression + lambdify: {r_srtui:8.1f} models/s ({t_srtui:.1f} s)")
    print(f"sympy parse_expr       + lambdify: {r_sympy:8.1f} models/s ({t_sympy:.1f} s)")
    print(f"  srtui: {srtui_failed} strings refused")
    if failed or timeouts:
        print(f"  sympy: {failed} strings failed, {timeouts} cut off at {a.limit:g} s (time is a lower bound)")
    print(f"ratio srtui/sympy: {r_srtui / r_sympy:.2f}x ({target('srtui / sympy', r_srtui / r_sympy, '>=', 1, 'x')})")
    finish()


if __name__ == "__main__":
    main()
