"""Metrics of one expression (and of one expression against a ground truth).

Cheap metrics of srtui's exact tree (``srtui.engine.expression.parse_expression``) live here; the
per-release SRBench metrics (sizes after each release's reading, rounding and simplify,
simplicity, symbolic solution, feature absence) and SRSD's edit distance are defined in
:mod:`srtui.results.metrics.releases`. The expensive ones run in :class:`srtui.engine.pool.TimedPool` workers under a
deadline; :func:`run_op` is the worker entry point.

- diversity: Shannon entropy (natural log) of the node labels of the parsed tree, numbers all
  labelled ``const``.
- feature absence: share of the unwanted (irrelevant or shortcut) features a model leaves out.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import sympy as sp

from srtui.engine.expression import ExpressionError, ParsedExpression, parse_expression
from srtui.results.metrics.releases import feature_absence, simplicity


def expr_hash(text: str, features: Sequence[str], dialect: str = "python") -> str:
    """Identity of a model string as the parser sees it (names and dialect change its meaning)."""
    h = hashlib.sha256("\x1f".join([dialect, ",".join(features), text]).encode())
    return h.hexdigest()[:24]


def parse(text: str, features: Sequence[str], dialect: str = "python") -> ParsedExpression:
    return parse_expression(text, list(features), dialect or "python")


def node_count(expr: sp.Basic) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def _label(node: sp.Basic) -> str:
    if node.is_Symbol:
        return str(node)
    if node.is_Number or isinstance(node, sp.NumberSymbol):
        return "const"
    return type(node).__name__


def diversity(expr: sp.Basic) -> float:
    counts = Counter(_label(n) for n in sp.preorder_traversal(expr))
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values()) + 0.0


def used_features(expr: sp.Basic) -> set[str]:
    return {str(s) for s in expr.free_symbols}


# --- the operations run in pool workers (definitions: results/metrics/releases.py, results/metrics/solutions.py) ---


def run_op(payload: dict[str, Any]) -> dict[str, Any]:
    """Worker entry: ``{"op": "model"|"solution"|"srsd", "release": ..., ...arguments}``."""
    from srtui.results.metrics import release_values, releases, solutions

    op = payload["op"]
    if op == "bundle":  # one model's operations in one task: one deadline, shared simplify results
        return {"results": [_guarded(p) for p in payload["ops"]]}
    args = (payload["text"], payload["features"], payload["dialect"])
    simplified = payload.get("simplified", True)
    if op == "model":
        return release_values.model_op(*args, payload["release"], payload.get("unwanted", ()), simplified)
    if op == "solution":
        return solutions.solution_op(
            payload["text"],
            payload["truth"],
            payload["features"],
            payload["dialect"],
            payload["release"],
            payload.get("model"),
            r2_test=1.0,
            screen=payload.get("screen", True),
            simplified=simplified,
        )
    if op == "srsd":
        return releases.srsd_op(payload["text"], payload["truth"], payload["features"], payload["dialect"])
    raise ValueError(f"unknown operation {op!r}")


def _guarded(payload: dict[str, Any]) -> tuple[str, Any, float]:
    """(status, value, seconds) of one operation of a bundle, failures reported as the pool does."""
    t0 = time.perf_counter()
    try:
        out: tuple[str, Any] = ("ok", run_op(payload))
    except MemoryError:
        out = ("error", "out of memory")
    except RecursionError:
        out = ("error", "recursion too deep")
    except Exception as exc:  # noqa: BLE001 - a failing metric must not lose the bundle's other results
        out = ("error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    return (*out, time.perf_counter() - t0)


__all__ = [
    "ExpressionError",
    "diversity",
    "expr_hash",
    "feature_absence",
    "node_count",
    "parse",
    "run_op",
    "simplicity",
    "used_features",
]
