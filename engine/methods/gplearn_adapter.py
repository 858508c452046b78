"""gplearn (Stephens): classic tree GP in Python, no constant optimisation.

gplearn has no time limit of its own, so the adapter grows the run one generation at a time with
``warm_start`` (which reproduces a single fit exactly: gplearn replays the seeds of the earlier
generations) and stops before the next generation would overrun the budget or at the
generation cap. The program is translated from ``_program.program`` (prefix list of
``_Function`` objects, ints = features, floats = constants) so constants keep full precision;
the protected operators keep gplearn's names (dialect ``gplearn``) for the safe parser.

By default (``generations=None``) the cap is one generation per second of budget, at least
``MIN_GENERATIONS``: a generation of 1000 programs on 150 rows takes about 0.4 s here, so small
tasks end by the cap (reproducible) and the budget check is the safety net.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from engine.methods.base import FittedModel, Method, ParetoPoint

#: operators the safe parser knows in dialect "gplearn" (the protected ones keep their meaning)
GPLEARN_OPS = {
    "add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "log": 1, "abs": 1, "neg": 1, "inv": 1,
    "max": 2, "min": 2, "sin": 1, "cos": 1, "tan": 1, "sig": 1,
}  # fmt: skip


MIN_GENERATIONS = 10


def generation_cap(time_budget: float | None) -> int:
    return max(MIN_GENERATIONS, int(time_budget)) if time_budget else 500


class GplearnError(ValueError):
    """A program the translator cannot express (a custom ``make_function`` operator)."""


def program_to_expression(program: Sequence[Any], feature_names: Sequence[str]) -> str:
    """Exact prefix-call string of a gplearn program, features by name, constants by repr."""
    out: list[str] = []
    # stack of [op name, arity, collected args]; the prefix list closes calls as args arrive
    stack: list[list[Any]] = []
    for node in program:
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            text = feature_names[node] if isinstance(node, int) else repr(float(node))
            # close every call that this argument completes
            while stack:
                stack[-1][2].append(text)
                name, arity, args = stack[-1]
                if len(args) < arity:
                    break
                stack.pop()
                text = f"{name}({', '.join(args)})"
            else:
                out.append(text)
            continue
        name = getattr(node, "name", None)
        if name not in GPLEARN_OPS or GPLEARN_OPS[name] != node.arity:
            raise GplearnError(f"gplearn operator {name!r} has no exact translation")
        stack.append([name, node.arity, []])
    if stack or len(out) != 1:
        raise GplearnError("malformed gplearn program (unbalanced prefix list)")
    return out[0]


def population_front(programs: Sequence[Any], feature_names: Sequence[str]) -> list[ParetoPoint]:
    """Non-dominated (length, raw fitness) programs of the last generation, simplest first."""
    seen: dict[int, Any] = {}
    for prog in programs:
        if prog is None:
            continue
        best = seen.get(prog.length_)
        if best is None or prog.raw_fitness_ < best.raw_fitness_:
            seen[prog.length_] = prog
    front, best_loss = [], float("inf")
    for length in sorted(seen):
        prog = seen[length]
        if prog.raw_fitness_ < best_loss:
            best_loss = prog.raw_fitness_
            try:
                expr = program_to_expression(prog.program, feature_names)
            except GplearnError:
                continue
            front.append(ParetoPoint(expr, float(length), float(prog.raw_fitness_)))
    return front


class Gplearn(Method):
    name = "gplearn"
    family = "sr"
    licence = "BSD-3-Clause (gplearn)"
    honours_time_limit = True  # by growing generations under the budget
    requires = ("gplearn",)
    default_params: dict[str, Any] = {
        "population_size": 1000,
        "generations": None,  # None: generation_cap(time_budget)
        "function_set": ("add", "sub", "mul", "div", "log", "sqrt", "sin", "cos"),
        "parsimony_coefficient": 0.001,
    }
    hyper_params = [
        {"population_size": 500},
        {"parsimony_coefficient": 0.01},
        {"function_set": ("add", "sub", "mul", "div")},
        {"metric": "mse"},
    ]

    def fit(self, X, y, feature_names, seed, time_budget, params) -> FittedModel:
        start = time.monotonic()  # the budget includes importing gplearn (scikit-learn, joblib)
        from gplearn.genetic import SymbolicRegressor

        p = {**self.default_params, **(params or {})}
        gens_param = p.pop("generations")
        max_gens = generation_cap(time_budget) if gens_param is None else int(gens_param)
        p["function_set"] = tuple(p["function_set"])
        est = SymbolicRegressor(
            generations=1, warm_start=True, n_jobs=1, random_state=int(seed) % 2**32, low_memory=True, **p
        )
        slowest = 0.0
        gens = 0
        while gens < max_gens:
            t0 = time.monotonic()
            est.set_params(generations=gens + 1)
            est.fit(X, y)
            gens += 1
            slowest = max(slowest, time.monotonic() - t0)
            # stop if one more generation (allowing for a slower one) would overrun the budget
            if time_budget and time.monotonic() - start + 1.5 * slowest > 0.95 * time_budget:
                break
        names = list(feature_names)
        return FittedModel(
            predict=est.predict,
            expression=program_to_expression(est._program.program, names),
            dialect="gplearn",
            pareto=population_front(est._programs[-1], names),
            notes={"generations": gens, "generation_cap": max_gens},
        )
