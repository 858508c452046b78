"""Every module of tasks/generators/ and tasks/loaders/ (srtui.tasks.catalogue.modules) against the
task contract: the first task of each of its tracks builds, under its own name and track, with
arrays of the declared shape, finite and the same on a second build (seeded), and its ground
truth, where declared, reads over its features and gives its noiseless targets. Parametrised
over the registry: a new module is tested with no edit here. A task of downloaded data is built
from the shared data (tests/conftest.py: ../shared/data or $SRTUI_DATA_DIR) when its files are
there, else skipped with the reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from srtui.tasks.catalogue import TaskContext, TaskEntry, modules
from srtui.tasks.datafiles import find_local
from srtui.tasks.model import Task
from srtui.tasks.truth import evaluate_truth, parse_truth

CASES = [
    pytest.param(entry, id=f"{module.rpartition('.')[2]}:{entry.track}")
    for module, found in modules().items()
    for entry in {e.track: e for e in reversed(found)}.values()  # the first task of each track
]


def _build(entry: TaskEntry, tmp_path: Path) -> Task:
    from conftest import shared_data_dir

    data = shared_data_dir()
    context = TaskContext(cache_dir=tmp_path / "cache", data_dir=data)
    missing = [f.rel for f in entry.files if find_local(f, context) is None]
    if missing:
        pytest.skip(f"{entry.name} needs downloaded data not in the shared data ({data}): {', '.join(missing)}")
    return entry.build(context)


@pytest.mark.parametrize("entry", CASES)
def test_the_first_task_of_each_track_keeps_the_contract(entry: TaskEntry, tmp_path: Path) -> None:
    task = _build(entry, tmp_path)
    assert (task.name, task.track) == (entry.name, entry.track)
    assert task.n_features > 0 and len(set(task.feature_names)) == task.n_features
    assert len(task.y_train) > 0 and len(task.y_test) > 0
    for X, y, index in ((task.X_train, task.y_train, task.train_index), (task.X_test, task.y_test, task.test_index)):
        assert X.dtype == np.float64 and X.shape == (len(y), task.n_features) and index.shape == y.shape
        assert np.all(np.isfinite(y)), "targets must be finite"
    assert not set(task.train_index) & set(task.test_index), "a row is in both splits"
    assert _build(entry, tmp_path / "again").fingerprint() == task.fingerprint(), "two builds differ"


@pytest.mark.parametrize("entry", CASES)
def test_a_declared_ground_truth_gives_the_noiseless_targets(entry: TaskEntry, tmp_path: Path) -> None:
    task = _build(entry, tmp_path)
    if task.ground_truth is None:
        pytest.skip(f"{entry.name} declares no ground truth")
    if entry.files:
        pytest.skip(f"{entry.name}: measured or published data (its truth is checked against its files elsewhere)")
    parse_truth(task.ground_truth, task.feature_names)
    if task.noise:
        pytest.skip(f"{entry.name} has noise {task.noise}")
    got = evaluate_truth(task, task.X_train)
    np.testing.assert_allclose(got, task.y_train, rtol=1e-6, atol=1e-9)


def test_a_module_imported_before_the_catalogue_loads_keeps_its_name() -> None:
    """A test file (or any code) that imports one task module first, then asks the catalogue for
    its modules: each task still names the module that registered it (a fresh interpreter: this
    one has loaded the catalogue already)."""
    import subprocess
    import sys

    code = (
        "import srtui.tasks.generators.groundtruth, srtui.tasks.loaders.pmlb_blackbox\n"
        "from srtui.tasks.catalogue import modules\n"
        "found = {m: len(e) for m, e in modules().items()}\n"
        "assert found['srtui.tasks.generators.groundtruth'] > 0, found\n"
        "assert found['srtui.tasks.loaders.pmlb_blackbox'] > 0, found\n"
        "assert 'srbench2021-blackbox' not in {e.track for e in modules()['srtui.tasks.loaders.pmlb']}\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
