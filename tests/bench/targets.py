"""The targets of a benchmark script: each measured figure is recorded with its goal, printed in
the script's own line as ``target < 10 s: met`` (or ``MISSED``), and ``finish()`` at the end of
``main`` exits 1 when any target was missed, so a script run by hand or by CI fails visibly.

Not part of the default test run (pytest ignores tests/bench); README "Benchmarks".
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Target:
    name: str
    value: float
    op: str
    goal: float
    unit: str

    @property
    def met(self) -> bool:
        return _OPS[self.op](self.value, self.goal)

    def text(self) -> str:
        return f"target {self.op} {self.goal:g}{self.unit}: {'met' if self.met else 'MISSED'}"


_recorded: list[Target] = []


def target(name: str, value: float, op: str, goal: float, unit: str = "") -> str:
    """Record ``value op goal`` (e.g. ``target("export csv", 4.2, "<", 10, " s")``); returns the
    text to print in the script's line: ``target < 10 s: met``."""
    if op not in _OPS:
        raise ValueError(f"target {name!r}: operator {op!r} is not one of {', '.join(_OPS)}")
    recorded = Target(name, float(value), op, float(goal), unit)
    _recorded.append(recorded)
    return recorded.text()


def finish() -> None:
    """One summary line; exit status 1 when a recorded target was missed (0 when none was)."""
    missed = [t for t in _recorded if not t.met]
    if not _recorded:
        return
    print(f"targets: {len(_recorded) - len(missed)} of {len(_recorded)} met", end="")
    if missed:
        print("; MISSED: " + "; ".join(f"{t.name} {t.value:g}{t.unit} ({t.op} {t.goal:g}{t.unit})" for t in missed))
        sys.exit(1)
    print()
