"""Issue 58: ``srbench2025`` splits as SRBench 2.0's code does, not by the task's own split.

SRBench 2.0's ``optimize_model.py`` (branch ``srbench_2025``) reads each PMLB file, seeds numpy's
global generator with the run's seed, splits with ``train_test_split(features, labels,
train_size=0.75, test_size=0.25, random_state=seed)`` and, when the training rows are more than
``max_train_samples`` (40,000, ``analyze.py``'s default), keeps that many drawn by
``np.random.choice(..., replace=False)``. Its seeds are the first 30 of ``experiment/seeds.py``.
The golden split here is that code's own calls, run on the shared PMLB files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data_dir

from srtui.engine.protocols import SEEDS_2025, applied, capped_rows, get_protocol
from srtui.engine.spec import JobSpec, Limits
from srtui.runs.tuning import DataWriter, _split
from srtui.tasks.catalogue import TaskContext, get_task

DATASETS = ("579_fri_c0_250_5", "556_analcatdata_apnea2")
SEEDS = (23654, 29910)  # 2.0's first seed, and one 2021's ten do not have


def _qualification() -> Path:
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    return data


def _srbench_2025_split(path: Path, seed: int) -> tuple[np.ndarray, ...]:
    """optimize_model.py's data set-up, as its code writes it (read_file, the seed, the split)."""
    from sklearn.model_selection import train_test_split

    data = pd.read_csv(path, sep=None, engine="python", compression="gzip")
    X, y = data.drop("target", axis=1).values, data["target"].values
    np.random.seed(seed)
    X_train, X_test, y_train, y_test = train_test_split(X, y, train_size=0.75, test_size=0.25, random_state=seed)
    return X_train, X_test, y_train, y_test


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_2025_split_is_2_0_s_train_test_split_per_seed(dataset: str, seed: int, tmp_path: Path) -> None:
    data = _qualification()
    protocol = get_protocol("srbench2025")
    name = "srbench2022-qual-" + dataset.replace("_", "-").lower()
    task = get_task(name, TaskContext(data_dir=data))
    spec = JobSpec("s", name, "linear", seed, Limits(), "fp", "1")
    split = _split(protocol, spec, task, DataWriter(tmp_path, None, {}))
    path = data / "srbench2022" / "qualification" / f"{dataset}.tsv.gz"
    X_train, X_test, y_train, y_test = _srbench_2025_split(path, seed)
    # the same rows in the same order (the values: srtui reads the files exactly, 2.0 through pandas)
    np.testing.assert_allclose(split.X_train, X_train, rtol=1e-12)
    np.testing.assert_allclose(split.X_test, X_test, rtol=1e-12)
    np.testing.assert_allclose(split.y_train, y_train, rtol=1e-12)
    np.testing.assert_allclose(split.y_test, y_test, rtol=1e-12)
    # recorded per job, as every protocol's split is
    record = applied(protocol, "xy", False, 1, seed)
    assert record["split"] == "75/25 per seed" and record["cap"] == "none" and record["seed"] == seed


def test_the_2025_cap_draws_without_replacement_over_the_training_rows() -> None:
    cap = get_protocol("srbench2025").train_cap
    assert cap == 40_000
    seed = 23654
    for n_train, n_total in ((45_000, 60_000), (37_500, 50_000)):
        rng = np.random.RandomState(seed)
        ours = capped_rows(n_train, n_total, cap, rng, "srbench2025")
        np.random.seed(seed)  # optimize_model.py: np.random.seed(random_state), then the split, then:
        if n_train > cap:
            expected = np.random.choice(np.arange(n_train), size=cap, replace=False)
            assert ours is not None and np.array_equal(ours, expected) and len(set(ours.tolist())) == cap
        else:  # 2.0 compares the training rows with the cap (2021 the dataset's: it would cap here)
            assert ours is None
            assert capped_rows(n_train, n_total, cap, np.random.RandomState(seed)) is not None


def test_the_2025_protocol_runs_2_0_s_seeds() -> None:
    protocol = get_protocol("srbench2025")
    assert protocol.seeds == SEEDS_2025 and len(SEEDS_2025) == protocol.runs == 30
    assert SEEDS_2025[:4] == (23654, 15795, 860, 5390) and SEEDS_2025[-1] == 5051
