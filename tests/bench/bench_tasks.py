"""Task catalogue timings: listing, cold builds per family, cached loads. Prints measured figures.

Run: python tests/bench/bench_tasks.py [--pmlb DIR]

The SRBench 2021 black-box part builds the 122 tasks from a local PMLB folder (``datasets/NAME/
NAME.tsv.gz``, read in place, each file checked against the manifest's sha256), cold (empty
cache) and cached. With ``--pmlb DIR`` (a PMLB checkout) every file is PMLB's own; without it the
bench makes a PMLB-shaped folder: the 20 shared PMLB files (``$SRTUI_DATA_DIR`` or
``../shared/data``) and, for the other 102, random data of each dataset's rows and features, whose
sha256 it puts in the manifest in this process only (a timing, not a fidelity check).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pmlb", type=Path, help="a PMLB checkout (else a PMLB-shaped folder is made)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pmlb = args.pmlb or pmlb_shaped(Path(tmp) / "pmlb")
        blackbox_2021(pmlb)  # first: it may set checksums before the catalogue is imported
    catalogue()


def shared_pmlb() -> Path | None:
    env = os.environ.get("SRTUI_DATA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    folder = base / "srbench2022" / "qualification"
    return folder if folder.is_dir() else None


def pmlb_shaped(root: Path) -> Path:
    """A PMLB-shaped folder of the 122 datasets: the shared real files, random data for the rest."""
    from srtui.tasks.loaders import pmlb_files

    manifest = pmlb_files.manifest()
    real = shared_pmlb()
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    n_real = 0
    for name in manifest["srbench2021_blackbox"]:
        path = root / "datasets" / name / f"{name}.tsv.gz"
        path.parent.mkdir(parents=True)
        if real is not None and (real / f"{name}.tsv.gz").is_file():
            shutil.copyfile(real / f"{name}.tsv.gz", path)
            n_real += 1
            continue
        meta = manifest["files"][name]
        columns = [f"x{i}" for i in range(meta["features"])] + ["target"]
        frame = pd.DataFrame(rng.normal(size=(meta["rows"], len(columns))), columns=columns)
        frame.to_csv(path, sep="\t", index=False, float_format="%.6f", compression="gzip")
        meta["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()  # this process only
        meta["size"] = path.stat().st_size
    print(
        f"PMLB-shaped folder: {n_real} real PMLB files, {122 - n_real} synthetic of the same shapes, "
        f"made in {time.perf_counter() - t0:.1f} s"
    )
    return root


def blackbox_2021(pmlb: Path) -> None:
    """The 122 SRBench 2021 black-box tasks built from ``pmlb`` (read in place), cold then cached."""
    from srtui.tasks.catalogue import TaskContext, get_task
    from srtui.tasks.loaders.pmlb_blackbox import BLACKBOX_2021, task_name

    with tempfile.TemporaryDirectory() as tmp:
        ctx = TaskContext(cache_dir=Path(tmp), data_dir=pmlb)
        names = [task_name(n) for n in BLACKBOX_2021]
        tasks, cold = timed(lambda: [get_task(n, ctx) for n in names])
        _, warm = timed(lambda: [get_task(n, ctx) for n in names])
    rows = sum(len(t.y_train) + len(t.y_test) for t in tasks)
    print(
        f"SRBench 2021 black-box: {len(tasks)} tasks, {rows:,} rows from {pmlb}: cold {cold:.1f} s "
        f"({cold / len(tasks) * 1000:.0f} ms each, sha256 and parsing included), cached {warm:.2f} s, "
        f"ratio {cold / warm:.1f}x"
    )


def catalogue() -> None:
    from srtui.tasks.catalogue import TaskContext, entries, get_task

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
    from srtui.tasks.generators import srbench2022 as s22
    from srtui.tasks.suites import COMPETITION_SEEDS

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
