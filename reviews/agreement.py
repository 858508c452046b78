"""Agreement between experts and with themselves, from long ratings (expert, item, rating).

- Krippendorff's alpha, ordinal (the ``krippendorff`` package; missing ratings allowed);
- Cohen's kappa with quadratic weights for every pair of experts (scikit-learn), on the items
  both rated;
- ICC(2,k) - two-way random effects, absolute agreement, mean of k raters (Shrout & Fleiss 1979)
  - with its 95 % confidence interval (``pingouin``), on the items every expert rated;
- self-consistency: each expert's first rating against their rating of the hidden repeat.

Every figure needs at least two experts (and enough items): otherwise it is missing, with a note
saying why, never a made-up number.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SCALE = (1, 2, 3, 4, 5)


@dataclass
class Agreement:
    alpha: float | None
    kappa: pd.DataFrame  # expert_a, expert_b, items, kappa
    icc: dict[str, Any]  # icc, ci95_low, ci95_high, items, experts (values None when not computable)
    notes: list[str] = field(default_factory=list)


def matrix(ratings: pd.DataFrame) -> pd.DataFrame:
    """Experts x items, NaN where an expert has no rating of the item."""
    return ratings.pivot_table(index="expert", columns="item", values="rating", aggfunc="first").astype(float)


def krippendorff_alpha(m: pd.DataFrame) -> float | None:
    import krippendorff

    values = m.to_numpy(dtype=float)
    pairable = (np.sum(~np.isnan(values), axis=0) >= 2).sum()
    if m.shape[0] < 2 or pairable == 0:
        return None
    observed = np.unique(values[~np.isnan(values)])
    if len(observed) < 2:
        return None  # no variation at all: alpha is undefined (0/0)
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement="ordinal", value_domain=list(SCALE)))


def pairwise_kappa(m: pd.DataFrame) -> pd.DataFrame:
    from sklearn.metrics import cohen_kappa_score

    rows = []
    for a, b in itertools.combinations(m.index, 2):
        both = m.loc[[a, b]].dropna(axis=1)
        kappa = None
        if both.shape[1] >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # constant raters: sklearn warns and returns nan
                k = cohen_kappa_score(
                    both.loc[a].astype(int), both.loc[b].astype(int), labels=list(SCALE), weights="quadratic"
                )
            kappa = None if np.isnan(k) else float(k)
        rows.append({"expert_a": a, "expert_b": b, "items": int(both.shape[1]), "kappa": kappa})
    return pd.DataFrame(rows, columns=["expert_a", "expert_b", "items", "kappa"])


def icc2k(m: pd.DataFrame) -> dict[str, Any]:
    """ICC(2,k) with its 95 % CI over the items every expert rated (pingouin's ICC(A,k) row)."""
    complete = m.dropna(axis=1)
    out: dict[str, Any] = {
        "icc": None,
        "ci95_low": None,
        "ci95_high": None,
        "items": int(complete.shape[1]),
        "experts": int(m.shape[0]),
    }
    if m.shape[0] < 2 or complete.shape[1] < 3:
        return out
    if np.nanvar(complete.to_numpy()) == 0:
        return out
    import pingouin  # imported here: it pulls in matplotlib (seconds), only reports need it

    long = complete.reset_index().melt(id_vars="expert", var_name="item", value_name="rating")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pingouin.intraclass_corr(long, targets="item", raters="expert", ratings="rating")
    row = (
        table.set_index("Type").loc["ICC(A,k)"]
        if "ICC(A,k)" in set(table["Type"])
        else table.set_index("Type").loc["ICC2k"]
    )
    lo, hi = row["CI95"] if "CI95" in row else row["CI95%"]
    out.update(icc=float(row["ICC"]), ci95_low=float(lo), ci95_high=float(hi))
    return out


def agreement(ratings: pd.DataFrame) -> Agreement:
    """``ratings``: columns expert, item, rating (first showings only: repeats left out)."""
    m = matrix(ratings) if len(ratings) else pd.DataFrame()
    notes = []
    if m.shape[0] < 2:
        notes.append(
            "agreement needs ratings from at least two experts "
            f"(this session has {m.shape[0]} expert{'s' if m.shape[0] != 1 else ''} with ratings)"
        )
        empty = pd.DataFrame(columns=["expert_a", "expert_b", "items", "kappa"])
        return Agreement(
            None,
            empty,
            {"icc": None, "ci95_low": None, "ci95_high": None, "items": 0, "experts": int(m.shape[0])},
            notes,
        )
    alpha = krippendorff_alpha(m)
    if alpha is None:
        notes.append("Krippendorff's alpha is undefined: no item rated by two experts, or no variation in ratings")
    kappa = pairwise_kappa(m)
    icc = icc2k(m)
    if icc["icc"] is None:
        notes.append(
            f"ICC(2,k) needs at least 3 items rated by every expert and some variation ({icc['items']} such items)"
        )
    return Agreement(alpha, kappa, icc, notes)


def self_consistency(pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs``: expert, first, repeat (ratings of the same item). Per expert: pairs, exact
    agreement share, mean absolute difference."""
    cols = ["expert", "repeat_pairs", "exact_share", "mean_abs_diff"]
    if pairs.empty:
        return pd.DataFrame(columns=cols)
    d = pairs.assign(diff=(pairs["first"] - pairs["repeat"]).abs())
    out = (
        d.groupby("expert")
        .agg(
            repeat_pairs=("diff", "size"),
            exact_share=("diff", lambda s: float((s == 0).mean())),
            mean_abs_diff=("diff", "mean"),
        )
        .reset_index()
    )
    return out[cols]
