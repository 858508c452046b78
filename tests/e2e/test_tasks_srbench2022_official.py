"""The SRBench 2022 stage-1 tasks equal the competition's files: all 170 top-level datasets against
the fingerprints taken from the official CSVs (rows, column names, sums of y and y^2, the first
three y values, the column sums of X), per train and test file, to a relative 1e-12."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import shared_data_dir

from srtui.tasks.generators import srbench2022 as s22
from srtui.tasks.suites import COMPETITION_SEEDS

DATA = shared_data_dir()
FINGERPRINTS = DATA / "fidelity" / "srbench2022_stage1_fingerprints.json" if DATA else None
needs_fingerprints = pytest.mark.skipif(
    FINGERPRINTS is None or not FINGERPRINTS.is_file(),
    reason="shared data fidelity/srbench2022_stage1_fingerprints.json not found",
)
REL = 1e-12


def official_stems(seed: int):
    """(official file stem, builder) for each of a seed's 17 datasets."""
    for d in s22.EXACT:
        yield f"{seed}_exact_formula_{d}", lambda d=d: s22.exact(d, seed)
    for r in s22.FEATSEL_R:
        yield f"{seed}_featureselection_{s22.LEVEL[r]}", lambda r=r: s22.featsel(r, seed)
    for r in s22.EXTRAP_R:
        yield f"{seed}_extrapolation_{s22.LEVEL[r]}", lambda r=r: s22.extrap(r, seed)
    for r in s22.NOISE_R:
        yield f"{seed}_noise_{s22.NOISE_LEVEL[r]}", lambda r=r: s22.noise(r, seed)
    for n in s22.LOCALOPT_N:
        yield f"{seed}_localopt_{s22.LOCALOPT_LEVEL[n]}", lambda n=n: s22.localopt(n, seed)


def mismatches(stem: str, task, want: dict) -> list[str]:
    bad = []
    for part, X, y in (("train", task.X_train, task.y_train), ("test", task.X_test, task.y_test)):
        w = want[part]
        if [*task.feature_names, task.target_name] != w["columns"]:
            bad.append(f"{stem} {part}: columns {task.feature_names} vs {w['columns']}")
        if len(y) != w["rows"]:
            bad.append(f"{stem} {part}: {len(y)} rows vs {w['rows']}")
            continue
        got = {"y_sum": y.sum(), "y_sq_sum": (y**2).sum(), "y_first": y[:3], "X_col_sums": X.sum(axis=0)}
        for key, value in got.items():
            if not np.allclose(value, w[key], rtol=REL, atol=0):
                bad.append(f"{stem} {part}: {key} {np.asarray(value).tolist()} vs {w[key]}")
    return bad


@needs_fingerprints
def test_every_stage1_dataset_matches_the_official_files():
    assert FINGERPRINTS is not None  # needs_fingerprints
    want = json.loads(FINGERPRINTS.read_text())
    built = {stem: build() for seed in COMPETITION_SEEDS for stem, build in official_stems(seed)}
    assert sorted(built) == sorted(want), "the 170 official datasets, one task each"
    bad = [msg for stem, task in built.items() for msg in mismatches(stem, task, want[stem])]
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


@needs_fingerprints
def test_the_old_noise_stream_would_fail_the_check():
    """The comparison can fail: the same data with noise from another stream does not match."""
    assert FINGERPRINTS is not None  # needs_fingerprints
    want = json.loads(FINGERPRINTS.read_text())
    task = s22.featsel(0.1, 2082)
    rng = np.random.default_rng([2082, 1])
    task.y_train = task.y_train + rng.normal(0, 1e-6, len(task.y_train))
    assert mismatches("2082_featureselection_hard", task, want["2082_featureselection_hard"])
