"""SRBench ground-truth problems: 119 Feynman and 14 Strogatz, regenerated offline.

The formulas are data (``tasks/data/groundtruth.json``, converted from PMLB's metadata by
``srtui.tasks.tools.pmlb_metadata``). Task names: ``feynman-i-10-7-noise0.01``,
``strogatz-bacres1-noise0`` (noise levels 0, 0.001, 0.01, 0.1 x RMS(y), training targets only,
SRBench's 75/25 split).

- Feynman: 10,000 rows sampled uniformly in the stated ranges; the target is the formula,
  evaluated by srtui.engine.expression (the only safe reader of a formula string).
- Strogatz: the 2-state system (both equations) is integrated in numpy from four documented
  initial conditions in a stable basin, t = 0..10 at 100 points each (400 rows); the target is the
  state's derivative, the right-hand side at the simulated states.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np

from srtui.tasks import cache
from srtui.tasks.build import make_task, shuffled_split, stable_seed
from srtui.tasks.model import Task
from srtui.tasks.noise import add_rms_noise

VERSION = "1"
TRACK = "srbench-groundtruth"
NOISE_LEVELS = (0.0, 0.001, 0.01, 0.1)
FEYNMAN_ROWS = 10_000
_DATA = Path(__file__).resolve().parent.parent / "data" / "groundtruth.json"


class Problem(TypedDict):
    """One problem of ``groundtruth.json`` (written by ``srtui.tasks.tools.pmlb_metadata.convert``)."""

    name: str
    family: str  # "feynman" or "strogatz"
    features: list[str]
    target: str
    formula: str
    ranges: NotRequired[dict[str, list[float]]]  # feynman: feature -> [low, high]
    state: NotRequired[str]  # strogatz: "x" or "y", the state whose derivative is the target
    system: NotRequired[str]  # strogatz: the key of STROGATZ


#: system -> (dx/dt, dy/dt, initial conditions (x0, y0)); numpy twins of the shipped formulas
STROGATZ: dict[str, tuple[Callable[..., float], Callable[..., float], Sequence[tuple[float, float]]]] = {
    "bacres": (
        lambda x, y: 20 - x - x * y / (1 + 0.5 * x**2),
        lambda x, y: 10 - x * y / (1 + 0.5 * x**2),
        [(5, 10), (1, 1), (10, 20), (2, 5)],
    ),
    "barmag": (
        lambda x, y: 0.5 * np.sin(x - y) - np.sin(x),
        lambda x, y: 0.5 * np.sin(y - x) - np.sin(y),
        [(1, 2), (-1, 1), (3, -2), (0.5, -0.5)],
    ),
    "glider": (
        lambda x, y: -0.05 * x**2 - np.sin(y),
        lambda x, y: x - np.cos(y) / x,
        [(5, 0), (3, 1), (7, -1), (4, 2)],
    ),
    "lv": (
        lambda x, y: 3 * x - 2 * x * y - x**2,
        lambda x, y: 2 * y - x * y - y**2,
        [(0.2, 0.2), (2, 0.5), (0.5, 2.5), (3, 3)],
    ),
    "predprey": (
        lambda x, y: x * (4 - x - y / (1 + x)),
        lambda x, y: y * (x / (1 + x) - 0.075 * y),
        [(1, 1), (3, 5), (5, 2), (0.5, 10)],
    ),
    "shearflow": (
        lambda x, y: np.cos(x) / np.tan(y),
        lambda x, y: (np.cos(y) ** 2 + 0.1 * np.sin(y) ** 2) * np.sin(x),
        [(0.5, 1), (1, 2), (2, 1.5), (-1, 2.5)],
    ),
    "vdp": (lambda x, y: 10 * (y - (x**3 - x) / 3), lambda x, y: -x / 10, [(1, 0), (-2, 1), (0.5, -0.5), (2, 2)]),
}
T_END, N_POINTS = 10.0, 100


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_DATA.read_text())  # a file of the package
    return data


@lru_cache(maxsize=1)
def problems() -> dict[str, Problem]:
    listed: list[Problem] = _catalogue()["problems"]
    return {p["name"]: p for p in listed}


def catalogue_source() -> str:
    return str(_catalogue()["source"])


def task_name(problem: str, level: float) -> str:
    return f"{problem.replace('_', '-').lower()}-noise{level:g}"


def simulate(system: str) -> tuple[np.ndarray, np.ndarray]:
    """States (n, 2) and their derivatives (n, 2) of one Strogatz system over all its ICs."""
    from scipy.integrate import solve_ivp

    fx, fy, ics = STROGATZ[system]
    t = np.linspace(0, T_END, N_POINTS)
    states = []
    for ic in ics:
        sol = solve_ivp(lambda _t, s: [fx(*s), fy(*s)], (0, T_END), ic, t_eval=t, method="LSODA", rtol=1e-8, atol=1e-10)
        states.append(sol.y.T)
    S = np.vstack(states)
    return S, np.column_stack([fx(S[:, 0], S[:, 1]), fy(S[:, 0], S[:, 1])])


def _feynman_data(p: Problem) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    from srtui.tasks.truth import parse_truth

    rng = np.random.default_rng(stable_seed(p["name"]))
    lows = np.array([p["ranges"][f][0] for f in p["features"]])
    highs = np.array([p["ranges"][f][1] for f in p["features"]])
    X = rng.uniform(lows, highs, size=(FEYNMAN_ROWS, len(lows)))
    y = np.asarray(parse_truth(p["formula"], p["features"]).evaluate(X), dtype=float)
    return X, y, {"sampling": "uniform", "ranges": p["ranges"], "rows": FEYNMAN_ROWS}


def build(problem: str, level: float) -> Task:
    p = problems()[problem]
    if p["family"] == "feynman":
        X, y, how = _feynman_data(p)
    else:
        S, dS = simulate(p["system"])
        X, y = S, dS[:, 0 if p["state"] == "x" else 1]
        _fx, _fy, ics = STROGATZ[p["system"]]
        how = {
            "simulation": f"LSODA, t = 0..{T_END:g} at {N_POINTS} points per initial condition",
            "initial_conditions": [list(ic) for ic in ics],
        }
    train, test = shuffled_split(len(y), 0.75, stable_seed(problem, "split"))
    y_noisy = y.copy()
    y_noisy[train] = add_rms_noise(y[train], level, np.random.default_rng(stable_seed(problem, level)))
    name = task_name(problem, level)
    return make_task(
        name,
        TRACK,
        p["features"],
        p["target"],
        X,
        y_noisy,
        train,
        test,
        difficulty=p["family"],
        ground_truth=p["formula"],
        split="random 75/25 (seeded by the problem name)",
        noise=level,
        property="exact_rediscovery",
        provenance={
            "source": "generated",
            "generator": "srtui.tasks.generators.groundtruth",
            "version": VERSION,
            "problem": problem,
            "formulas": catalogue_source(),
            **how,
            "noise": f"N(0, {level:g} x RMS(y)) on training targets only",
            "pmlb_download": f"pmlb-{problem}",
        },
        description=f"{problem}: {p['target']} = {p['formula']}",
    )


def _register_all() -> None:
    for problem in problems():
        for level in NOISE_LEVELS:
            name = task_name(problem, level)
            cache.register_generated(
                name, TRACK, VERSION, partial(build, problem, level), f"{problem}, noise {level:g}"
            )


_register_all()
