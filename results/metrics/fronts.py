"""SRBench 2021's Pareto fronts of the methods' median ranks, with numpy only: the published loop
(``published_fronts``) and the note a board of fewer fronts gets. The srbench2021 rule
(``srtui.results.scoring.rules.srbench2021``) and the Pareto figure's store reader
(``srtui.results.outputs.figures.ranks``, which imports no pandas: #56) both number fronts here."""

from __future__ import annotations

import numpy as np

PUBLISHED_LEVELS = 6  # blackbox_results.ipynb draws 6 fronts


def published_fronts(objs: np.ndarray, levels: int = PUBLISHED_LEVELS) -> np.ndarray:
    """blackbox_results.ipynb's loop over ``pareto_utils.front`` (both objectives minimised): front
    0, 1, ... up to ``levels``; a point on none keeps -1. Its quirks are kept: a point is dominated
    only by a strictly-better-somewhere, nowhere-worse point (NaN compares as neither), points
    already placed become (inf, inf), and once every point is placed the next level's front is all
    of them, so with fewer than ``levels`` fronts every point ends on the last level."""
    objs = np.asarray(objs, float).copy()
    out = -np.ones(len(objs))
    for level in range(levels):
        better = (objs[:, None, :] < objs[None, :, :]).any(axis=2)  # [i, j]: i better than j somewhere
        worse = (objs[:, None, :] > objs[None, :, :]).any(axis=2)
        dominated = (better & ~worse).any(axis=0)  # some j dominates i
        front = np.flatnonzero(~dominated)
        out[front] = level
        objs[front, :] = np.inf
    return out.astype(int)


def few_fronts_note(fronts: np.ndarray) -> list[str]:
    """The note of a board whose methods all ended on one level (the loop found fewer fronts)."""
    if len(fronts) > 1 and len(np.unique(fronts)) == 1:
        return [
            f"fewer than {PUBLISHED_LEVELS} fronts: the published loop puts every method on its last "
            "level (see -o profile=corrected)"
        ]
    return []
