"""Task catalogue timings: listing, cold builds per family, cached loads. Prints measured figures.

Run: python tests/bench/bench_tasks.py
"""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    from tasks.catalogue import TaskContext, entries, get_task

    listed, t_list = timed(entries)
    print(f"entries(): {len(listed)} tasks registered in {t_list * 1000:.0f} ms (imports included)")
    sample = [
        "srbench2022-exact-hard-s2082",
        "srbench2022-featsel-r0.05-s2082",
        "srbench2022-localopt-n5-s2082",
        "srbench2022-extrap-r0.1-s2082",
        "srbench2022-noise-r0.15-s2082",
        "feynman-i-6-2a-noise0",
        "feynman-test-10-noise0.01",
        "strogatz-vdp1-noise0.1",
        "nsr-cs-7",
        "fp-planck",
        "demo-epidemic-cases",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        ctx = TaskContext(cache_dir=Path(tmp))
        for name in sample:
            task, cold = timed(lambda name=name: get_task(name, ctx))
            _, warm = timed(lambda name=name: get_task(name, ctx))
            print(
                f"{name:36s} {task.X_train.shape[0]:6d}+{task.X_test.shape[0]:<6d} rows  "
                f"cold {cold * 1000:7.1f} ms  cached {warm * 1000:6.1f} ms  ratio {cold / warm:6.1f}x"
            )
    stage1_all()


def stage1_all() -> None:
    """The 170 SRBench 2022 stage-1 datasets built cold (no cache): what the fingerprint test does."""
    from tasks.generators import srbench2022 as s22
    from tasks.suites import COMPETITION_SEEDS

    def build_all() -> int:
        n = 0
        for seed in COMPETITION_SEEDS:
            builds = [lambda d=d, seed=seed: s22.exact(d, seed) for d in s22.EXACT]
            builds += [
                partial(f, r, seed)
                for f, levels in ((s22.featsel, s22.FEATSEL_R), (s22.extrap, s22.EXTRAP_R), (s22.noise, s22.NOISE_R))
                for r in levels
            ]
            builds += [lambda k=k, seed=seed: s22.localopt(k, seed) for k in s22.LOCALOPT_N]
            for build in builds:
                build()
                n += 1
        return n

    n, secs = timed(build_all)
    print(f"SRBench 2022 stage 1: {n} datasets built cold in {secs:.2f} s ({secs / n * 1000:.1f} ms each)")


if __name__ == "__main__":
    main()
