"""NSR equations: Nguyen-1..8 and the complexity-spanning set C.S.-1..8 (one feature ``x1``).

Nguyen: the usual sampling (20 training points uniform on the stated interval), plus 200 test points
from the same interval. C.S.: 100 training and 200 test points, each equation on an interval of
positive x that avoids its poles and the domain of its logs and roots (stated per equation).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from srtui.tasks import cache
from srtui.tasks.build import make_task, stable_seed
from srtui.tasks.model import Task

VERSION = "1"
TRACK = "nsr"

#: name -> (formula over x1, numpy twin, (low, high), n_train)
EQUATIONS: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray], tuple[float, float], int]] = {
    "nguyen-1": ("x1**3 + x1**2 + x1", lambda x: x**3 + x**2 + x, (-1, 1), 20),
    "nguyen-2": ("x1**4 + x1**3 + x1**2 + x1", lambda x: x**4 + x**3 + x**2 + x, (-1, 1), 20),
    "nguyen-3": ("x1**5 + x1**4 + x1**3 + x1**2 + x1", lambda x: x**5 + x**4 + x**3 + x**2 + x, (-1, 1), 20),
    "nguyen-4": (
        "x1**6 + x1**5 + x1**4 + x1**3 + x1**2 + x1",
        lambda x: x**6 + x**5 + x**4 + x**3 + x**2 + x,
        (-1, 1),
        20,
    ),
    "nguyen-5": ("sin(x1**2)*cos(x1) - 1", lambda x: np.sin(x**2) * np.cos(x) - 1, (-1, 1), 20),
    "nguyen-6": ("sin(x1) + sin(x1 + x1**2)", lambda x: np.sin(x) + np.sin(x + x**2), (-1, 1), 20),
    "nguyen-7": ("log(x1 + 1) + log(x1**2 + 1)", lambda x: np.log(x + 1) + np.log(x**2 + 1), (0, 2), 20),
    "nguyen-8": ("sqrt(x1)", np.sqrt, (0, 4), 20),
    "cs-1": ("sin(x1*exp(x1))", lambda x: np.sin(x * np.exp(x)), (0.1, 2), 100),
    "cs-2": ("x1 + log(x1**4)", lambda x: x + np.log(x**4), (0.1, 2), 100),
    "cs-3": ("1 + x1*sin(1/x1)", lambda x: 1 + x * np.sin(1 / x), (0.1, 2), 100),
    "cs-4": ("sqrt(x1**3)*log(x1**2)", lambda x: np.sqrt(x**3) * np.log(x**2), (0.1, 2), 100),
    "cs-5": ("x1/sqrt(x1**2 + sin(x1))", lambda x: x / np.sqrt(x**2 + np.sin(x)), (0.1, 2), 100),
    # 1 + x*cos(x**2) changes sign just above x = 1.25: stay below it
    "cs-6": ("(x1 + x1**3)/(1 + x1*cos(x1**2))", lambda x: (x + x**3) / (1 + x * np.cos(x**2)), (0.1, 1.2), 100),
    "cs-7": (
        "exp(x1)*(1 + sqrt(1 + x1) + cos(x1**2))/x1**2",
        lambda x: np.exp(x) * (1 + np.sqrt(1 + x) + np.cos(x**2)) / x**2,
        (0.1, 2),
        100,
    ),
    # x**3 + x*log(x**2) vanishes near x = 0.75: sample x >= 1
    "cs-8": (
        "cos((x1 + sin(x1))/(x1**3 + x1*log(x1**2)))",
        lambda x: np.cos((x + np.sin(x)) / (x**3 + x * np.log(x**2))),
        (1, 3),
        100,
    ),
}
N_TEST = 200


def build(key: str) -> Task:
    formula, fn, (low, high), n_train = EQUATIONS[key]
    x = np.random.default_rng(stable_seed("nsr", key)).uniform(low, high, size=n_train + N_TEST)
    idx = np.arange(len(x))
    label = key.replace("nguyen", "Nguyen").replace("cs", "C.S.")
    return make_task(
        f"nsr-{key}",
        TRACK,
        ["x1"],
        "y",
        x[:, None],
        fn(x),
        idx[:n_train],
        idx[n_train:],
        difficulty=key.split("-")[0],
        ground_truth=formula,
        split=f"first {n_train} rows train, {N_TEST} test, same interval",
        noise=0.0,
        property="exact_rediscovery",
        provenance={
            "source": "generated",
            "generator": "srtui.tasks.generators.nsr",
            "version": VERSION,
            "sampling": f"uniform [{low}, {high}]",
            "seed": stable_seed("nsr", key),
        },
        description=f"{label}: y = {formula}",
    )


for _key in EQUATIONS:
    cache.register_generated(f"nsr-{_key}", TRACK, VERSION, partial(build, _key), EQUATIONS[_key][0])
