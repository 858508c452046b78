"""A simulated epidemic put through the real-world feature pipeline (offline demo of that track).

An SEIR model with waning immunity over 600 days from 2020-03-01 (population 1e6, incubation 5.2
days, infectious 7 days, immunity ~240 days). Three intervention periods scale the contact rate:
a mask mandate (x 0.6), school closures (x 0.75) and a travel restriction (x 0.85); they are the
policy flags. Reported daily cases are 30 % of new infections with a weekend reporting dip;
hospitalisations (4 %) and deaths (0.8 %) follow with gamma-shaped delays. Counts are Poisson draws,
and a few back-log dumps make outliers for the pipeline's 4-sigma rule. Deterministic by seed.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only; pandas is imported where it is used
    import pandas as pd

from srtui.tasks import cache
from srtui.tasks.model import Task
from srtui.tasks.pipeline import forecast_table

VERSION = "1"
TRACK = "demo-realworld"
SEED = 2082
DAYS = 600
START = "2020-03-01"
POP = 1e6
#: flag -> (first day, last day, contact-rate factor)
INTERVENTIONS = {
    "mask_mandate": [(40, 160, 0.6), (330, 420, 0.6)],
    "school_closed": [(30, 110, 0.75), (300, 360, 0.75)],
    "travel_restriction": [(25, 90, 0.85)],
}


def _delay_kernel(mean: float, shape: float = 3.0, length: int = 40) -> np.ndarray:
    from scipy.stats import gamma

    days = np.arange(length)
    w: np.ndarray = gamma.pdf(days + 0.5, a=shape, scale=mean / shape)
    kernel: np.ndarray = w / w.sum()
    return kernel


def simulate(seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Daily counts (cases, hosp, deaths) and policy flags, indexed by date."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    rng = np.random.default_rng(seed)
    flags = np.zeros((DAYS, len(INTERVENTIONS)))
    factor = np.ones(DAYS)
    for j, periods in enumerate(INTERVENTIONS.values()):
        for first, last, f in periods:
            flags[first : last + 1, j] = 1
            factor[first : last + 1] *= f
    beta0, sigma, gamma_, omega = 0.45, 1 / 5.2, 1 / 7, 1 / 240
    S, E, I, R = POP - 20, 10.0, 10.0, 0.0
    infections = np.zeros(DAYS)
    steps = 10  # Euler sub-steps per day
    for day in range(DAYS):
        beta = beta0 * factor[day] * (1 + 0.15 * np.cos(2 * np.pi * (day - 300) / 365))  # seasonality
        for _ in range(steps):
            new_e = beta * S * I / POP / steps
            new_i = sigma * E / steps
            new_r = gamma_ * I / steps
            wane = omega * R / steps
            S, E, I, R = S - new_e + wane, E + new_e - new_i, I + new_i - new_r, R + new_r - wane
            infections[day] += new_i
    weekday = (np.arange(DAYS) + pd.Timestamp(START).day_of_week) % 7
    reporting = np.where(weekday >= 5, 0.6, 1.08)  # fewer reports at weekends
    cases_mean = 0.3 * infections * reporting
    hosp_mean = np.convolve(0.04 * infections, _delay_kernel(7), mode="full")[:DAYS]
    deaths_mean = np.convolve(0.008 * infections, _delay_kernel(16), mode="full")[:DAYS]
    counts = np.column_stack([rng.poisson(m) for m in (cases_mean, hosp_mean, deaths_mean)]).astype(float)
    for day in rng.choice(np.arange(60, DAYS), size=4, replace=False):  # back-log dumps
        counts[day, 0] += 6 * cases_mean.max()
    dates = pd.date_range(START, periods=DAYS, freq="D")
    return (
        pd.DataFrame(counts, index=dates, columns=["cases", "hosp", "deaths"]),
        pd.DataFrame(flags, index=dates, columns=list(INTERVENTIONS)),
    )


def build(target: str, seed: int = SEED) -> Task:
    counts, flags = simulate(seed)
    table = forecast_table(counts, target, flags)
    return table.task(
        f"demo-epidemic-{target}",
        TRACK,
        difficulty="real-world-like",
        provenance={
            "source": "generated",
            "generator": "srtui.tasks.generators.epidemic",
            "version": VERSION,
            "seed": seed,
            "model": "SEIR with waning immunity and intervention periods",
            "interventions": {k: [list(p) for p in v] for k, v in INTERVENTIONS.items()},
            "pipeline": "srtui.tasks.pipeline.forecast_table (lags 14..27, horizon 14)",
        },
        description=f"Simulated epidemic: forecast daily {target} 14 days ahead from lagged, smoothed counts.",
    )


for _target in ("cases", "hosp", "deaths"):
    cache.register_generated(
        f"demo-epidemic-{_target}",
        TRACK,
        VERSION,
        partial(build, _target),
        f"simulated SEIR epidemic, {_target} 14 days ahead",
    )
