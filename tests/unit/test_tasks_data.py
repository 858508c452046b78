"""Loaded tasks: local data lookup, checksums, offline errors, official real-world files, the pipeline,
suites."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from srtui.tasks.catalogue import TaskContext, TaskError, builtin_names, entries, get_task
from srtui.tasks.pipeline import HORIZON, chunk_split, forecast_table
from srtui.tasks.suites import SuiteError, builtin_suite_names, load_suite, suite_from_dict

SHARED = Path(os.environ.get("SRTUI_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data")
needs_shared = pytest.mark.skipif(not (SHARED / "srbench2022").is_dir(), reason=f"shared data not found at {SHARED}")


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("SRTUI_OFFLINE", "1")
    monkeypatch.delenv("SRTUI_DATA_DIR", raising=False)


def test_listing_covers_every_track_without_building():
    names = set(builtin_names())
    tracks = {e.track for e in entries()}
    assert {
        "srbench2022-synthetic",
        "srbench2022-qualification",
        "srbench2022-realworld",
        "srbench-groundtruth",
        "nsr",
        "srbench2025-firstprinciples",
        "srbench2025-blackbox",
        "demo-realworld",
        "smoke",
    } <= tracks
    assert len([n for n in names if n.startswith("srbench2022-qual-")]) == 20
    assert len([e for e in entries() if e.track == "srbench2025-blackbox"]) == 12
    assert len([n for n in names if n.startswith(("feynman-", "strogatz-"))]) == 133 * 4
    assert (
        len([n for n in names if n.startswith("srbench2022-") and n.endswith(tuple(f"-s{s}" for s in (2082,)))]) == 17
    )


def test_offline_error_names_file_url_and_place(offline, tmp_path):
    ctx = TaskContext(cache_dir=tmp_path / "cache")
    with pytest.raises(TaskError) as err:
        get_task("pmlb-1028-swd", ctx)
    msg = str(err.value)
    pinned = "https://media.githubusercontent.com/media/EpistasisLab/pmlb/7c1f4bdc00136dc2e55c87fa6b8ba6e8af6d1a68/"
    assert "pmlb/1028_SWD.tsv.gz" in msg and pinned + "datasets/1028_SWD/1028_SWD.tsv.gz" in msg
    assert str(tmp_path / "cache" / "data" / "pmlb" / "1028_SWD.tsv.gz") in msg and "\n" not in msg
    assert not (tmp_path / "cache" / "tasks").exists()


@needs_shared
def test_checksum_mismatch_is_refused(offline, tmp_path):
    rel = "srbench2022/realworld/135_NY_value_cases_14_14_train.csv"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_bytes((SHARED / rel).read_bytes() + b"\n")
    with pytest.raises(TaskError, match=f"refusing {tmp_path / rel}: it has sha256 [0-9a-f]{{64}}, expected sha256"):
        get_task("srbench2022-realworld-cases", TaskContext(data_dir=tmp_path))


@needs_shared
@pytest.mark.parametrize("target", ["cases", "hosp", "deaths"])
def test_official_realworld_files(offline, target):
    t = get_task(f"srbench2022-realworld-{target}", TaskContext(data_dir=SHARED))
    assert t.target_name == f"value_{target}" and len(t.y_train) == 420 and len(t.y_test) == 245
    assert t.X_train.shape[1] == 92 and "date" not in t.feature_names
    official_train = pd.read_csv(SHARED / f"srbench2022/realworld/135_NY_value_{target}_14_14_train.csv")
    assert t.dates_train is not None and list(t.dates_train) == list(official_train["date"])
    assert np.array_equal(t.y_train, official_train[f"value_{target}"].to_numpy())
    assert t.provenance["files"][0]["checksum"] == "sha256 shipped with srtui"


@needs_shared
def test_qualification_dataset(offline):
    t = get_task("srbench2022-qual-215-2dplanes", TaskContext(data_dir=SHARED))
    assert t.n_features == 10 and len(t.y_train) + len(t.y_test) == 40768
    assert len(t.y_train) == round(0.75 * 40768)


@needs_shared
def test_pipeline_on_nyc_counts(offline):
    from srtui.tasks.loaders.realworld import nyc_counts

    counts, _ = nyc_counts(TaskContext(data_dir=SHARED))
    table = forecast_table(counts, "cases")
    X = table.X
    assert not X.isna().any().any() and np.isfinite(table.y).all()
    dates = pd.to_datetime(table.dates)
    assert (np.diff(dates.values).astype("timedelta64[D]").astype(int) == 1).all()
    # horizon alignment: the 14-day lag of today's row is the target 14 rows back
    assert np.allclose(X["value_cases_14"].to_numpy()[HORIZON:], table.y[:-HORIZON])
    assert np.allclose(X["value_cases_15"].to_numpy()[HORIZON + 1 :], table.y[: -HORIZON - 1])
    # chunked split: runs of 35 train days, then 21 test days
    is_train = np.zeros(len(table.y), bool)
    is_train[table.train_index] = True
    runs = np.diff(np.flatnonzero(np.diff(is_train.astype(int)) != 0))
    assert set(runs[::2]) | set(runs[1::2]) <= {35, 21} and is_train[:35].all() and not is_train[35:56].any()
    task = get_task("nyc-covid-deaths", TaskContext(data_dir=SHARED))
    assert task.dates_train is not None and task.target_name == "value_deaths"


def test_pipeline_replaces_outliers():
    idx = pd.date_range("2021-01-01", periods=120, freq="D")
    counts = pd.DataFrame({"cases": np.full(120, 100.0)}, index=idx)
    counts.iloc[60, 0] = 100_000.0  # a back-log dump
    table = forecast_table(counts, "cases")
    assert table.y.max() == pytest.approx(100.0)
    assert chunk_split(56)[0].tolist() == list(range(35))


def test_builtin_suites_load_and_name_known_tasks():
    names = set(builtin_names())
    methods = {
        "linear",
        "sgd",
        "lasso",
        "ridge",
        "poly2",
        "dummy",
        "rf",
        "gbr",
        "mlp",
        "knn",
        "pyoperon",
        "gplearn",
        "ffx",
    }
    for suite_name in builtin_suite_names():
        s = load_suite(suite_name)
        assert s.tasks and set(s.tasks) <= names, suite_name
        assert set(s.methods) <= methods, suite_name
    synth = load_suite("srbench2022-synthetic")
    assert len(synth.tasks) == 170 and not any(t.endswith("-cleantest") for t in synth.tasks)
    assert ("srbench2022-exact-easy-s3946", 3946) in synth.jobs() and len(synth.jobs()) == 170
    assert "lasso" in load_suite("srbench2022-realworld").methods


def test_suite_pattern_errors():
    with pytest.raises(SuiteError, match="matches no task"):
        suite_from_dict({"tasks": ["nope-*"], "methods": ["linear"]}, "x")
    with pytest.raises(SuiteError, match="-sSEED"):
        suite_from_dict({"tasks": ["nsr-cs-1"], "methods": ["linear"], "seed_from_task": True}, "x")


def test_demo_suites_are_offline():
    for suite_name in ("smoke", "demo-realworld"):
        by_name = {e.name: e for e in entries()}
        assert all(by_name[t].offline for t in load_suite(suite_name).tasks)
