"""Task catalogue timings: listing, cold builds per family, cached loads. Prints measured figures.

Run: python tests/bench/bench_tasks.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    from tasks.catalogue import TaskContext, entries, get_task

    listed, t_list = timed(entries)
    print(f"entries(): {len(listed)} tasks registered in {t_list * 1000:.0f} ms (imports included)")
    sample = ["srbench2022-exact-hard-s2082", "srbench2022-featsel-r0.05-s2082", "srbench2022-localopt-n5-s2082",
              "srbench2022-extrap-r0.1-s2082", "srbench2022-noise-r0.15-s2082", "feynman-i-6-2a-noise0",
              "feynman-test-10-noise0.01", "strogatz-vdp1-noise0.1", "nsr-cs-7", "fp-planck", "demo-epidemic-cases"]
    with tempfile.TemporaryDirectory() as tmp:
        ctx = TaskContext(cache_dir=Path(tmp))
        for name in sample:
            task, cold = timed(lambda: get_task(name, ctx))
            _, warm = timed(lambda: get_task(name, ctx))
            print(f"{name:36s} {task.X_train.shape[0]:6d}+{task.X_test.shape[0]:<6d} rows  "
                  f"cold {cold * 1000:7.1f} ms  cached {warm * 1000:6.1f} ms  ratio {cold / warm:6.1f}x")


if __name__ == "__main__":
    main()
