"""The SRBench 2022 competition's synthetic track, regenerated offline and deterministic by seed.

One task per (generator, setting, seed): ``srbench2022-exact-easier-s2082``,
``srbench2022-featsel-r0.05-s3946``, ``srbench2022-localopt-n4-s5847``,
``srbench2022-extrap-r0.1-s6087``, ``srbench2022-noise-r0.15-s6589``. The competition's files add
the noise to every row; the ``-cleantest`` variants keep the test targets noiseless (the paper).
Layout as the competition's: features ``x1..xn``, target ``y``.

Randomness: ``default_rng(seed)`` draws the inputs and ``default_rng([seed, 1])`` the noise, so the
settings of one seed share their inputs (the noise track compares against its r = 0 twin).
"""

from __future__ import annotations

import numpy as np

from tasks import cache
from tasks.build import make_task
from tasks.catalogue import TaskEntry, register
from tasks.model import Task
from tasks.noise import add_srbench2022_noise, srbench2022_sigma
from tasks.suites import COMPETITION_SEEDS

VERSION = "1"
TRACK = "srbench2022-synthetic"
F1 = "0.4*x1*x2 - 1.5*x1 + 2.5*x2 + 1"

#: difficulty -> (formula, number of features)
EXACT = {
    "easier": (F1, 10),
    "easy": (f"{F1} + log(30*x3**2)", 10),
    "medium": (f"({F1}) / (1 + 0.2*(x1**2 + x2**2))", 5),
    "hard": (f"(({F1}) + 5.5*sin(x1 + x2)) / (1 + 0.2*(x1**2 + x2**2))", 2),
}
FEATSEL = "0.11*x1**3 + 0.91*x3*x5 + 0.68*x7*x9 + 0.26*x11**2*x13 + 0.16*x15*x17*x19"
FEATSEL_R = (0.025, 0.05, 0.1)
LOCALOPT_TERMS = ("0.77*x1*x2", "1.52*x2*x3", "1.2*x4**2", "0.31*x1*x4*x5", "0.23*x3*x4*x5")
LOCALOPT_N = (3, 4, 5)
EXTRAP = "erf(0.22*x1) + 0.17*sin(5.5*x1)"
EXTRAP_R = (0.025, 0.05, 0.1)
NOISE = "(0.11*x1**4 - 1.4*x1**3) / (0.68*x1**2 + 1)"
NOISE_R = (0.0, 0.05, 0.1, 0.15)


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(1, n + 1)]


def _exact_target(difficulty: str, X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    f1 = 0.4 * x1 * x2 - 1.5 * x1 + 2.5 * x2 + 1
    if difficulty == "easier":
        return f1
    if difficulty == "easy":
        return f1 + np.log(30 * X[:, 2] ** 2)
    denom = 1 + 0.2 * (x1**2 + x2**2)
    if difficulty == "medium":
        return f1 / denom
    return (f1 + 5.5 * np.sin(x1 + x2)) / denom


def _provenance(kind: str, seed: int, **extra: object) -> dict:
    return {
        "source": "generated",
        "generator": f"tasks.generators.srbench2022.{kind}",
        "version": VERSION,
        "seed": seed,
        "reference": "SRBench 2022 competition (cavalab/srbench, branch srcomp), synthetic track",
        **extra,
    }


def exact(difficulty: str, seed: int) -> Task:
    formula, n_feat = EXACT[difficulty]
    rng = np.random.default_rng(seed)
    X = rng.uniform(-5, 5, size=(2000, n_feat))
    y = _exact_target(difficulty, X)
    used = {"easier": 2, "easy": 3, "medium": 2, "hard": 2}[difficulty]
    idx = np.arange(2000)
    return make_task(
        f"srbench2022-exact-{difficulty}-s{seed}", TRACK, _names(n_feat), "y", X, y, idx[:1000], idx[1000:],
        difficulty=difficulty, ground_truth=formula,
        irrelevant_features=frozenset(_names(n_feat)[used:]),
        split="first 1000 rows train, last 1000 test", noise=0.0, property="exact_rediscovery",
        provenance=_provenance("exact", seed, sampling="uniform [-5, 5]", rows=2000),
        description=f"Exact rediscovery ({difficulty}): {formula}; {n_feat} features uniform on [-5, 5].",
    )


def _noisy(y: np.ndarray, r: float, seed: int, clean_test: bool, test_index: np.ndarray):
    noisy = add_srbench2022_noise(y, r, np.random.default_rng([seed, 1]))
    return noisy, (y[test_index] if clean_test else None)


def _noise_note(r: float, clean_test: bool) -> str:
    if r == 0:
        return "no noise"
    where = "training rows only (test targets noiseless)" if clean_test else "every row"
    return f"N(0, std(y)*sqrt(r/(1-r))) with r = {r} on {where}"


def featsel(r: float, seed: int, clean_test: bool = False) -> Task:
    X = np.random.default_rng(seed).uniform(-10, 10, size=(1000, 20))
    c = X.T
    y = 0.11 * c[0] ** 3 + 0.91 * c[2] * c[4] + 0.68 * c[6] * c[8] + 0.26 * c[10] ** 2 * c[12] + 0.16 * c[14] * c[16] * c[18]
    idx = np.arange(1000)
    y_noisy, y_test = _noisy(y, r, seed, clean_test, idx[500:])
    names = _names(20)
    return make_task(
        f"srbench2022-featsel-r{r}-s{seed}" + ("-cleantest" if clean_test else ""), TRACK, names, "y",
        X, y_noisy, idx[:500], idx[500:], y_test_override=y_test,
        difficulty="feature-selection", ground_truth=FEATSEL,
        irrelevant_features=frozenset(names[1::2]),
        split="first 500 rows train, last 500 test", noise=r, property="feature_absence",
        provenance=_provenance("featsel", seed, sampling="uniform [-10, 10]", rows=1000,
                               noise=_noise_note(r, clean_test), sigma=srbench2022_sigma(y, r)),
        description=f"Feature selection: 20 features, the even-indexed ones irrelevant; {FEATSEL}.",
    )


def localopt(n_terms: int, seed: int) -> Task:
    X5 = np.random.default_rng(seed).uniform(-5, 5, size=(1000, 5))
    x1, x2, x3, x4, x5 = X5.T
    g = [0.77 * x1 * x2, 1.52 * x2 * x3, 1.2 * x4**2, 0.31 * x1 * x4 * x5, 0.23 * x3 * x4 * x5][:n_terms]
    y = np.sum(g, axis=0)
    noise_rng = np.random.default_rng([seed, 1])
    # the shortcut features: each term with its own r = 0.1 noise (s from that term's std)
    shortcuts = np.column_stack([add_srbench2022_noise(gi, 0.1, noise_rng) for gi in g])
    X = np.hstack([X5, shortcuts])
    names = _names(5 + n_terms)
    idx = np.arange(1000)
    formula = " + ".join(LOCALOPT_TERMS[:n_terms])
    return make_task(
        f"srbench2022-localopt-n{n_terms}-s{seed}", TRACK, names, "y", X, y, idx[:100], idx[100:],
        difficulty=f"localopt-{n_terms}", ground_truth=formula,
        shortcut_features=frozenset(names[5:]),
        split="first 100 rows train, last 900 test", noise=0.0, property="feature_absence",
        provenance=_provenance("localopt", seed, sampling="uniform [-5, 5]", rows=1000,
                               shortcuts="x6.. = the target's terms g1..gn, each with r = 0.1 noise"),
        description=f"Deceptive shortcuts: y = {formula}; x6..x{5 + n_terms} are its noisy terms.",
    )


def extrap(r: float, seed: int, clean_test: bool = False) -> Task:
    from scipy.special import (
        erf,  # lazy: keeps `tasks list` and `srtui run` start-up light
    )
    x = np.round(np.arange(-150, 401) * 0.1, 10)  # -15..40 step 0.1, exact grid
    y = erf(0.22 * x) + 0.17 * np.sin(5.5 * x)
    idx = np.arange(len(x))
    train, test = idx[x <= 15], idx[x > 15]
    y_noisy, y_test = _noisy(y, r, seed, clean_test, test)
    return make_task(
        f"srbench2022-extrap-r{r}-s{seed}" + ("-cleantest" if clean_test else ""), TRACK, ["x1"], "y",
        x[:, None], y_noisy, train, test, y_test_override=y_test,
        difficulty="extrapolation", ground_truth=EXTRAP,
        split="train x <= 15, test x > 15", noise=r, property="extrapolation",
        provenance=_provenance("extrap", seed, sampling="grid -15..40 step 0.1", rows=len(x),
                               noise=_noise_note(r, clean_test)),
        description=f"Extrapolation: {EXTRAP} on x = -15..40; train x <= 15, test beyond.",
    )


def noise(r: float, seed: int, clean_test: bool = False) -> Task:
    x_train = np.round(np.arange(-25, 26) * 0.4, 10)  # -10..10 step 0.4
    x_test = np.random.default_rng(seed).uniform(-10, 10, size=949)
    x = np.concatenate([x_train, x_test])
    y = (0.11 * x**4 - 1.4 * x**3) / (0.68 * x**2 + 1)
    idx = np.arange(len(x))
    train, test = idx[: len(x_train)], idx[len(x_train):]
    y_noisy, y_test = _noisy(y, r, seed, clean_test, test)
    name = f"srbench2022-noise-r{r}-s{seed}" + ("-cleantest" if clean_test else "")
    return make_task(
        name, TRACK, ["x1"], "y", x[:, None], y_noisy, train, test, y_test_override=y_test,
        difficulty="noise", ground_truth=NOISE,
        split="train x = -10..10 step 0.4 (51 rows), test 949 rows uniform [-10, 10]", noise=r,
        property="noise_robustness",
        provenance=_provenance("noise", seed, noise=_noise_note(r, clean_test),
                               noiseless_task=f"srbench2022-noise-r0.0-s{seed}"),
        description=f"Noise robustness: {NOISE} with r = {r}; scored against the r = 0 twin.",
    )


def _register(name: str, build, description: str) -> None:
    register(TaskEntry(name, TRACK, lambda ctx, b=build, n=name: cache.cached(ctx, n, VERSION, b), description=description))


def _register_all() -> None:
    for seed in COMPETITION_SEEDS:
        for diff in EXACT:
            _register(f"srbench2022-exact-{diff}-s{seed}", lambda d=diff, s=seed: exact(d, s), f"exact rediscovery, {diff}")
        for n in LOCALOPT_N:
            _register(f"srbench2022-localopt-n{n}-s{seed}", lambda n=n, s=seed: localopt(n, s), f"deceptive shortcuts, {n} terms")
        for kind, fn, levels in (("featsel", featsel, FEATSEL_R), ("extrap", extrap, EXTRAP_R), ("noise", noise, NOISE_R)):
            for r in levels:
                _register(f"srbench2022-{kind}-r{r}-s{seed}", lambda f=fn, r=r, s=seed: f(r, s), f"{kind}, r = {r}")
                if r > 0:
                    _register(f"srbench2022-{kind}-r{r}-s{seed}-cleantest", lambda f=fn, r=r, s=seed: f(r, s, True),
                              f"{kind}, r = {r}, noiseless test targets")


_register_all()

