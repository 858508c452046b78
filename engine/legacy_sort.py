"""numpy 1.20's ``np.argsort`` of a float64 array (``kind="quicksort"``, the default), written out
so that an ordering SRBench 2021 got from it does not depend on the numpy installed here.

scikit-learn 0.24.1's halving search keeps the candidates ``np.argsort(mean_test_score)[-k:]``
(``_top_k``). numpy's default argsort is not stable: among equal scores, and among NaNs (sorted
last), the order is whatever its introsort leaves, and numpy 2.x's SIMD sorts leave another one.
This is the generic ``aquicksort_double`` of numpy 1.20-1.24 (``npysort/quicksort.c.src``; numpy
1.25 dispatches argsort of 64-bit types to AVX-512 where the CPU has it):

- the indexes start as ``0..n-1``; while a part has more than ``SMALL_QUICKSORT + 1`` elements it
  is partitioned around the median of its first, middle and last element (compared in that
  order: middle < first, last < middle, middle < first, swapping each time), the pivot parked at
  ``last - 1``, the two scans skipping elements strictly less / strictly greater than the pivot;
  the larger part is pushed on a stack and the smaller sorted next;
- a part of at most ``SMALL_QUICKSORT + 1`` elements is insertion-sorted (shifting while the new
  element is strictly less);
- past a depth of ``2 * floor(log2(n))`` partitions a part is heap-sorted (``aheapsort_double``);
- "less" is NaN-aware: ``a < b or (b is NaN and a is not)``, so NaNs go last and two NaNs are
  equal.

``tests/e2e/test_halving_sklearn024.py`` checks it against the orders numpy 1.23.5 gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SMALL_QUICKSORT = 15


def _lt(a: float, b: float) -> bool:
    """numpy's ``DOUBLE_LT``: NaNs sort last, two NaNs are equal."""
    return a < b or (math.isnan(b) and not math.isnan(a))


def argsort(values: Sequence[float]) -> list[int]:
    """The indexes numpy 1.20's ``np.argsort(np.asarray(values, dtype=float))`` returns."""
    v = [float(x) for x in values]
    n = len(v)
    idx = list(range(n))
    if n < 2:
        return idx
    stack: list[tuple[int, int, int]] = []  # (first, last, depth left) of the parts to sort
    pl, pr = 0, n - 1
    cdepth = (n.bit_length() - 1) * 2  # npy_get_msb(n) * 2
    while True:
        if cdepth < 0:  # checked only for a part taken from the stack, as numpy does
            _heapsort(v, idx, pl, pr - pl + 1)
        else:
            while pr - pl > SMALL_QUICKSORT:
                pi = _partition(v, idx, pl, pr)
                cdepth -= 1
                if pi - pl < pr - pi:  # push the larger part, go on with the smaller
                    stack.append((pi + 1, pr, cdepth))
                    pr = pi - 1
                else:
                    stack.append((pl, pi - 1, cdepth))
                    pl = pi + 1
            _insertion(v, idx, pl, pr)
        if not stack:
            return idx
        pl, pr, cdepth = stack.pop()


def _partition(v: list[float], idx: list[int], pl: int, pr: int) -> int:
    pm = pl + ((pr - pl) >> 1)
    if _lt(v[idx[pm]], v[idx[pl]]):
        idx[pm], idx[pl] = idx[pl], idx[pm]
    if _lt(v[idx[pr]], v[idx[pm]]):
        idx[pr], idx[pm] = idx[pm], idx[pr]
    if _lt(v[idx[pm]], v[idx[pl]]):
        idx[pm], idx[pl] = idx[pl], idx[pm]
    vp = v[idx[pm]]
    pi, pj = pl, pr - 1
    idx[pm], idx[pj] = idx[pj], idx[pm]
    while True:
        pi += 1
        while _lt(v[idx[pi]], vp):
            pi += 1
        pj -= 1
        while _lt(vp, v[idx[pj]]):
            pj -= 1
        if pi >= pj:
            break
        idx[pi], idx[pj] = idx[pj], idx[pi]
    pk = pr - 1
    idx[pi], idx[pk] = idx[pk], idx[pi]
    return pi


def _insertion(v: list[float], idx: list[int], pl: int, pr: int) -> None:
    for pi in range(pl + 1, pr + 1):
        vi = idx[pi]
        vp = v[vi]
        pj = pi
        while pj > pl and _lt(vp, v[idx[pj - 1]]):
            idx[pj] = idx[pj - 1]
            pj -= 1
        idx[pj] = vi


def _heapsort(v: list[float], idx: list[int], start: int, n: int) -> None:
    """``aheapsort_double`` of ``idx[start:start + n]`` (1-based heap, as numpy indexes it)."""

    def a(i: int) -> int:
        return idx[start + i - 1]

    def put(i: int, value: int) -> None:
        idx[start + i - 1] = value

    def sift(i: int, tmp: int, size: int) -> None:
        j = i << 1
        while j <= size:
            if j < size and _lt(v[a(j)], v[a(j + 1)]):
                j += 1
            if _lt(v[tmp], v[a(j)]):
                put(i, a(j))
                i = j
                j += j
            else:
                break
        put(i, tmp)

    for node in range(n >> 1, 0, -1):
        sift(node, a(node), n)
    while n > 1:
        tmp = a(n)
        put(n, a(1))
        n -= 1
        sift(1, tmp, n)
