"""SRBench 2022 stage-1 SEIR tasks: the official files, checksummed, loaded as they are; `tasks list`
says what srtui cannot do for them. Files are read from a git mirror of cavalab/srbench when this
machine has one (they are not in the shared data folder)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from srtui.tasks.catalogue import TaskContext, TaskError, entries, get_task
from srtui.tasks.datafiles import shipped_checksums
from srtui.tasks.loaders import srbench2022_seir as seir

MIRROR = Path(os.environ.get("SRTUI_SRBENCH_MIRROR", "/work/.mirror/cavalab+srbench/repo"))
STAGE1 = "competition-2022/experiment/data/stage1/data/seir/"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no git mirror of cavalab/srbench at {MIRROR}")


def from_mirror(name: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={MIRROR}", "show", f"srcomp:{STAGE1}{name}"], capture_output=True, check=True
    ).stdout


@pytest.fixture
def seir_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SRTUI_OFFLINE", "1")
    monkeypatch.delenv("SRTUI_DATA_DIR", raising=False)
    folder = tmp_path / "data" / "srbench2022" / "seir"
    folder.mkdir(parents=True)
    for c in "SEIR":
        for part in ("train", "test"):
            name = f"1235_seird{c}_easy_data_{part}.csv"
            (folder / name).write_bytes(from_mirror(name))
    return tmp_path / "data"


def test_every_seir_task_is_listed_as_a_download():
    names = {e.name: e for e in entries() if e.name.startswith("srbench2022-seir-")}
    assert len(names) == 4 * 3 * 10
    assert not any(e.offline for e in names.values())
    assert "srbench2022-seir-ds-hard-s9574" in names
    sums = shipped_checksums()
    assert sum(k.startswith("srbench2022/seir/") for k in sums) == 240  # train + test of each


def test_list_says_what_is_missing(tmp_path):
    from conftest import srtui

    # piped, stdout is one row per task; the count and the notes go to stderr
    out = srtui("tasks", "list", "--track", "srbench2022-synthetic", "--workspace", str(tmp_path)).stderr
    note = [line for line in out.splitlines() if line.startswith("note:")]
    assert note and "generator is not published" in " ".join(out.split()) and "x_N" in out


@needs_mirror
def test_checksums_are_those_of_the_official_files():
    for name in ("1235_seirdS_easy_data_train.csv", "9574_seirdR_hard_data_test.csv"):
        assert shipped_checksums()[f"srbench2022/seir/{name}"] == hashlib.sha256(from_mirror(name)).hexdigest()


@needs_mirror
def test_official_files_load_as_they_are(seir_dir, tmp_path):
    t = get_task("srbench2022-seir-de-easy-s1235", TaskContext(cache_dir=tmp_path / "cache", data_dir=seir_dir))
    assert t.feature_names == seir.FEATURES and t.target_name == "dE"
    assert (len(t.y_train), len(t.y_test)) == (2007, 1993) and t.property == "exact_rediscovery"
    first = [float(v) for v in from_mirror("1235_seirdE_easy_data_train.csv").decode().splitlines()[1].split(",")]
    assert np.array_equal(t.X_train[0], first[:-1]) and t.y_train[0] == first[-1]
    assert all(f["checksum"] == "sha256 shipped with srtui" for f in t.provenance["files"])
    assert t.ground_truth is not None and "x_S + x_E + x_I + x_R" in t.ground_truth
    assert "x_N" in t.provenance["x_N"]
    assert t.provenance["ground_truth_r2_on_files"] < 0.5  # the judge's formula does not fit these files


@needs_mirror
def test_a_changed_file_is_refused(seir_dir, tmp_path):
    path = seir_dir / "srbench2022" / "seir" / "1235_seirdS_easy_data_test.csv"
    path.write_bytes(path.read_bytes().replace(b"0.625", b"0.626", 1))
    with pytest.raises(TaskError, match=f"refusing {path}: it has sha256 [0-9a-f]{{64}}, expected sha256"):
        get_task("srbench2022-seir-ds-easy-s1235", TaskContext(cache_dir=tmp_path / "cache", data_dir=seir_dir))
