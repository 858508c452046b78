"""gplearn (Stephens): classic tree GP in Python, no constant optimisation.

gplearn has no time limit of its own, so the adapter grows the run one generation at a time with
``warm_start`` (which reproduces a single fit exactly: gplearn replays the seeds of the earlier
generations) and stops at the generation cap, or before the next generation would overrun the
budget. The program is translated from ``_program.program`` (prefix list of ``_Function``
objects, ints = features, floats = constants) so constants keep full precision; the protected
operators keep gplearn's names (dialect ``gplearn``) for the safe parser.

Defaults (measured on the issue task y = 0.4*x0*x1 - 1.5*x0 + 2.5*x2 + 1 over 32 seeds; see
``tests/bench/bench_gplearn.py``):

* **linear scaling** (Keijzer 2003) through gplearn's public ``make_fitness``: a program is
  scored by the MSE of its best affine fit ``a + b*program``, and the model is that affine
  map of the best program. Without it, gplearn must also evolve the target's offset and scale
  from constants in [-1, 1]; with it, it only has to find the shape.
* gplearn's own arithmetic function set, populations of 400, tournaments of 5 and more
  mutation than gplearn's defaults (p_crossover 0.6, subtree 0.2, hoist 0.05, point 0.1), and
  a small parsimony coefficient: together they keep enough diversity to leave the linear
  local optimum this task has (R2 0.94).
* The generation cap (``generations=None``) is sized from the *nominal* budget at
  ``PROGRAMS_PER_SECOND`` evaluated programs per second, so a job does the same work (and
  gives the same model) however long its start-up took; the budget check is the safety net
  and says so in the notes (``stopped_by``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from srtui.engine.errors import SrtuiError
from srtui.engine.methods.base import FittedModel, Method, ParetoPoint, builtin
from srtui.engine.spec import FitBudget

#: operators the safe parser knows in dialect "gplearn" (the protected ones keep their meaning)
GPLEARN_OPS = {
    "add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "log": 1, "abs": 1, "neg": 1, "inv": 1,
    "max": 2, "min": 2, "sin": 1, "cos": 1, "tan": 1, "sig": 1,
}  # fmt: skip


MIN_GENERATIONS = 10
#: programs gplearn evaluates per second of nominal budget on ~150 rows, with room for start-up
#: and imports: about 2,000/s are measured on this 2-core machine with both cores busy, so a 10 s
#: job (8 s nominal budget) reaches its cap of 25 generations of 400 with a second to spare
PROGRAMS_PER_SECOND = 1250


def generation_cap(fit_budget: FitBudget | None, population_size: int) -> int:
    """Generations from the nominal budget: the same job does the same work however long start-up took."""
    if not fit_budget:
        return 500
    return max(MIN_GENERATIONS, int(fit_budget.nominal * PROGRAMS_PER_SECOND / population_size))


def linear_scaling_mse(y: np.ndarray, y_pred: np.ndarray, w: np.ndarray) -> float:
    """Weighted MSE of the best affine map ``a + b*y_pred`` of a program's output to y."""
    a, b = affine_fit(y, y_pred, w)
    r = y - a - b * y_pred
    return float((w * r) @ r / w.sum())


def affine_fit(y: np.ndarray, f: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    """Least-squares (a, b) of y ~ a + b*f; (mean y, 0) when f is constant or not finite.

    Dot products, not ``np.average``/``np.errstate``: this runs once per evaluated program.
    """
    w = np.ones_like(y) if w is None else w
    sw = float(w.sum())
    my, mf = float(w @ y) / sw, float(w @ f) / sw
    if not np.isfinite(mf):
        return my, 0.0
    df = f - mf
    wdf = w * df
    var = float(wdf @ df) / sw
    if not np.isfinite(var) or var <= 1e-12 * max(1.0, mf * mf):
        return my, 0.0
    b = float(wdf @ (y - my)) / sw / var
    return my - b * mf, b


def scaled_expression(a: float, b: float, program_text: str) -> str:
    if b == 0.0:
        return repr(a)
    return f"{a!r} + {b!r}*{program_text}"


class GplearnError(SrtuiError, ValueError):
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


def population_front(
    programs: Sequence[Any], feature_names: Sequence[str], X: np.ndarray | None = None, y: np.ndarray | None = None
) -> list[ParetoPoint]:
    """Non-dominated (length, raw fitness) programs of the last generation, simplest first.

    With ``X, y`` (linear scaling) each program is printed as its affine fit to y, the model
    its raw fitness scored.
    """
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
            if X is not None and y is not None:
                expr = scaled_expression(*affine_fit(y, prog.execute(X)), expr)
            front.append(ParetoPoint(expr, float(length), float(prog.raw_fitness_)))
    return front


@builtin(default_sr=True)
class Gplearn(Method):
    name = "gplearn"
    family = "sr"
    fork_safe = True  # pure Python over scikit-learn and joblib; no thread at import
    licence = "BSD-3-Clause (gplearn)"
    honours_time_limit = True  # by growing generations under the budget
    requires = ("gplearn",)
    preload_modules = ("gplearn.fitness", "gplearn.genetic")
    params_of = "gplearn.genetic:SymbolicRegressor"  # and linear_scaling, a default_params key
    default_params: ClassVar[dict[str, Any]] = {
        "population_size": 400,
        "generations": None,  # None: generation_cap(fit_budget, population_size)
        "function_set": ("add", "sub", "mul", "div"),
        "tournament_size": 5,
        "p_crossover": 0.6,
        "p_subtree_mutation": 0.2,
        "p_hoist_mutation": 0.05,
        "p_point_mutation": 0.1,
        "parsimony_coefficient": 0.0002,
        "linear_scaling": True,
    }
    hyper_params = [
        {"population_size": 1000},
        {"function_set": ("add", "sub", "mul", "div", "log", "sqrt", "sin", "cos")},  # SRBench's set
        {"parsimony_coefficient": 0.001},
        {"linear_scaling": False},  # plain gplearn: MSE of the program itself
    ]

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        start = time.monotonic()  # the budget includes importing gplearn (scikit-learn, joblib)
        from gplearn.fitness import make_fitness
        from gplearn.genetic import SymbolicRegressor

        p = {**self.default_params, **(params or {})}
        gens_param = p.pop("generations")
        scaled = bool(p.pop("linear_scaling"))
        max_gens = generation_cap(fit_budget, int(p["population_size"])) if gens_param is None else int(gens_param)
        p["function_set"] = tuple(p["function_set"])
        if scaled:
            # wrap=False: gplearn would otherwise cloudpickle the function for joblib (n_jobs=1 here)
            p["metric"] = make_fitness(function=linear_scaling_mse, greater_is_better=False, wrap=False)
        est = SymbolicRegressor(
            generations=1, warm_start=True, n_jobs=1, random_state=int(seed) % 2**32, low_memory=True, **p
        )
        recent: list[float] = []  # durations of the last generations
        gens, stopped_by = 0, "cap"
        while gens < max_gens:
            t0 = time.monotonic()
            est.set_params(generations=gens + 1)
            est.fit(X, y)
            gens += 1
            recent = [*recent, time.monotonic() - t0][-3:]
            # stop if one more generation (a little slower than the recent ones) would overrun the
            # budget; the budget itself leaves the job room to predict and write before its limit
            if gens < max_gens and fit_budget and time.monotonic() - start + 1.25 * max(recent) > fit_budget:
                stopped_by = "budget"
                break
        names = list(feature_names)
        program_text = program_to_expression(est._program.program, names)
        notes = {"generations": gens, "generation_cap": max_gens, "stopped_by": stopped_by}
        if not scaled:
            return FittedModel(
                predict=est.predict,
                expression=program_text,
                dialect="gplearn",
                pareto=population_front(est._programs[-1], names),
                notes=notes,
            )
        X_fit, y_fit = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        a, b = affine_fit(y_fit, est.predict(X_fit))

        def predict(X_new: np.ndarray) -> np.ndarray:
            return a + b * est.predict(X_new) if b else np.full(len(X_new), a)

        return FittedModel(
            predict=predict,
            expression=scaled_expression(a, b, program_text),
            dialect="gplearn",
            pareto=population_front(est._programs[-1], names, X_fit, y_fit),
            notes={**notes, "scale": b, "offset": a},
        )
