"""SRBench 2.0 first-principles laws, generated members (ideal gas, Newton, Planck, Rydberg, Schechter).

PMLB's copies were made by scripts in the PySR paper's repository; srtui regenerates them with the
stated noise (10 %, 10 %, 10 %, 1 %, 20 %, multiplicative: y * (1 + level * N(0, 1))) over the
parameter ranges written below (SI units unless stated), 500 rows, random 75/25 split.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from srtui.tasks import cache
from srtui.tasks.build import make_task, shuffled_split, stable_seed
from srtui.tasks.model import Task
from srtui.tasks.noise import add_relative_noise

VERSION = "1"
TRACK = "srbench2025-firstprinciples"
ROWS = 500
R, G, H, C, K_B, RYD = 8.314462618, 6.6743e-11, 6.62607015e-34, 299792458.0, 1.380649e-23, 1.0973731568e7


def _planck(nu: np.ndarray, T: np.ndarray) -> np.ndarray:
    return 2 * H * nu**3 / C**2 / np.expm1(H * nu / (K_B * T))


#: features, target, formula, numpy twin, sampler(rng, n) -> X, noise, ranges note
Law = tuple[
    list[str],
    str,
    str,
    Callable[[np.ndarray], np.ndarray],
    Callable[["np.random.Generator", int], np.ndarray],  # a string: numpy.random loads when data is made
    float,
    str,
]
LAWS: dict[str, Law] = {
    "ideal-gas": (
        ["n", "T", "V"],
        "P",
        f"{R}*n*T/V",
        lambda X: R * X[:, 0] * X[:, 1] / X[:, 2],
        lambda rng, n: rng.uniform([0.5, 200, 0.01], [5, 400, 0.1], size=(n, 3)),
        0.10,
        "n [0.5, 5] mol, T [200, 400] K, V [0.01, 0.1] m^3",
    ),
    "newton": (
        ["r", "m1", "m2"],
        "F",
        f"{G}*m1*m2/r**2",
        lambda X: G * X[:, 1] * X[:, 2] / X[:, 0] ** 2,
        lambda rng, n: rng.uniform([0.1, 1, 1], [10, 100, 100], size=(n, 3)),
        0.10,
        "r [0.1, 10] m, m1 and m2 [1, 100] kg",
    ),
    "planck": (
        ["nu", "T"],
        "B",
        f"2*{H}*nu**3/{C}**2/(exp({H}*nu/({K_B}*T)) - 1)",
        lambda X: _planck(X[:, 0], X[:, 1]),
        lambda rng, n: rng.uniform([1e13, 1000], [1e15, 10000], size=(n, 2)),
        0.10,
        "nu [1e13, 1e15] Hz, T [1000, 10000] K",
    ),
    "rydberg": (
        ["n_1", "n_2"],
        "lambda_",
        f"1/({RYD}*(1/n_1**2 - 1/n_2**2))",
        lambda X: 1 / (RYD * (1 / X[:, 0] ** 2 - 1 / X[:, 1] ** 2)),
        lambda rng, n: (lambda n1: np.column_stack([n1, n1 + rng.integers(1, 6, size=n)]))(
            rng.integers(1, 6, size=n)
        ).astype(float),
        0.01,
        "n_1 integer 1..5, n_2 = n_1 + integer 1..5; wavelength in m",
    ),
    "schechter": (
        ["L"],
        "phi",
        "0.0093*L**(-1.25)*exp(-L)",
        lambda X: 0.0093 * X[:, 0] ** -1.25 * np.exp(-X[:, 0]),
        lambda rng, n: rng.uniform(0.01, 5, size=(n, 1)),
        0.20,
        "L [0.01, 5] in units of L* (phi* = 0.0093 Mpc^-3, alpha = -1.25)",
    ),
}


def build(key: str) -> Task:
    features, target, formula, fn, sample, level, ranges = LAWS[key]
    seed = stable_seed("firstprinciples", key)
    rng = np.random.default_rng(seed)
    X = sample(rng, ROWS)
    y = add_relative_noise(fn(X), level, rng)
    train, test = shuffled_split(ROWS, 0.75, seed)
    return make_task(
        f"fp-{key}",
        TRACK,
        features,
        target,
        X,
        y,
        train,
        test,
        difficulty="generated",
        ground_truth=formula,
        split="random 75/25",
        noise=level,
        property="exact_rediscovery",
        provenance={
            "source": "generated",
            "generator": "srtui.tasks.generators.firstprinciples",
            "version": VERSION,
            "seed": seed,
            "ranges": ranges,
            "noise": f"y * (1 + {level:g} * N(0, 1)) on every row",
            "reference": "SRBench 2.0 first-principles track (PMLB first_principles_*)",
        },
        description=f"{key.replace('-', ' ').title()} law: {target} = {formula}",
    )


for _key in LAWS:
    cache.register_generated(
        f"fp-{_key}", TRACK, VERSION, partial(build, _key), f"{_key} law, {LAWS[_key][5]:.0%} noise"
    )
