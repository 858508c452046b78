"""User tasks that declare their property: `srtui tasks add ... --property feature_absence
--irrelevant ...` is scored on that property by `srtui score srbench2022-synthetic`, end to end;
suite patterns match the workspace's own tasks; bad declarations are one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import srtui

from srtui.cli import main
from srtui.tasks.suites import SuiteError, load_suite


def run(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def official_style(folder, seed=0):
    """A competition-style pair of files: x1..x6 then y; y uses x1..x3, x4..x6 are irrelevant."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, size=(200, 6))
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(1, 7)]).assign(y=1.5 * X[:, 0] - 2 * X[:, 1] + 0.5 * X[:, 2])
    folder.mkdir(parents=True, exist_ok=True)
    df.iloc[:100].to_csv(folder / "data_train.csv", index=False)
    df.iloc[100:].to_csv(folder / "data_test.csv", index=False)
    return folder / "data_train.csv", folder / "data_test.csv"


def test_declared_feature_absence_is_scored_end_to_end(tmp_path):
    ws = tmp_path / "ws"
    train, test = official_style(tmp_path / "files")
    w = ("--workspace", str(ws))
    added = srtui(
        "tasks",
        "add",
        "off-featsel",
        str(train),
        "--test",
        str(test),
        "--target",
        "y",
        "--property",
        "feature_absence",
        "--irrelevant",
        "x4,x5,x6",
        *w,
        check=True,
    )
    assert "property feature_absence" in added.stdout and "renamed" not in added.stdout
    srtui("tasks", "add", "off-plain", str(train), "--test", str(test), "--target", "y", *w, check=True)
    suite = tmp_path / "off.toml"
    suite.write_text(
        'name = "off"\ntasks = ["off-*"]\nmethods = ["linear"]\nseeds = [1]\nscoring = "srbench2022-synthetic"\n'
    )
    srtui("run", str(suite), *w, check=True)
    scored = json.loads(srtui("score", "srbench2022-synthetic", "--format", "json", *w, check=True).stdout)
    per_task = {row["task"]: row for row in scored["tables"]["per_task"]}
    assert set(per_task) == {"off-featsel", "off-plain"}  # the pattern matched the workspace's tasks
    assert per_task["off-featsel"]["property"] == "feature_absence"
    # least squares puts ~1e-16 on the irrelevant columns of this noiseless target; the 2022 judge
    # rounds floats below 1e-3 to 0 before reading the features a model uses: all three left out
    assert per_task["off-featsel"]["property_value"] == pytest.approx(1.0)
    assert per_task["off-featsel"]["rank_property"] is not None
    # an accuracy task has no property of its own: the judge (profile reference) scores test R2 there
    plain = per_task["off-plain"]
    assert plain["property"] == "accuracy" and plain["property_value"] == pytest.approx(plain["accuracy"], abs=1e-9)


def test_add_records_property_and_feature_sets(tmp_path, capsys):
    train, test = official_style(tmp_path / "files")
    renamed = tmp_path / "files" / "renamed.csv"
    pd.read_csv(train).rename(columns={"x6": "noise col"}).to_csv(renamed, index=False)
    ws = tmp_path / "ws"
    code, out, err = run(
        [
            "tasks",
            "add",
            "t-abs",
            str(renamed),
            "--target",
            "y",
            "--irrelevant",
            "x4, noise col",
            "--shortcut",
            "x5",
            "-w",
            str(ws),
        ],
        capsys,
    )
    assert code == 0, err
    assert out.splitlines()[-1] == "renamed columns: 'noise col' -> noise_col"  # one line
    code, out, _ = run(["tasks", "show", "t-abs", "--json", "-w", str(ws)], capsys)
    info = json.loads(out)
    assert info["property"] == "feature_absence"  # implied by the feature sets
    assert info["irrelevant_features"] == ["noise_col", "x4"] and info["shortcut_features"] == ["x5"]
    code, out, err = run(
        [
            "tasks",
            "add",
            "t-ext",
            str(train),
            "--test",
            str(test),
            "--target",
            "y",
            "--property",
            "extrapolation",
            "-w",
            str(ws),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run(
        [
            "tasks",
            "add",
            "t-noise",
            str(train),
            "--target",
            "y",
            "--property",
            "noise",
            "--noiseless-task",
            "t-ext",
            "-w",
            str(ws),
        ],
        capsys,
    )
    assert code == 0, err
    info = json.loads(run(["tasks", "show", "t-noise", "--json", "-w", str(ws)], capsys)[1])
    assert info["property"] == "noise_robustness" and info["provenance"]["noiseless_task"] == "t-ext"


@pytest.mark.parametrize(
    "extra,expect",
    [
        (["--irrelevant", "x4,zz"], "--irrelevant: no feature column 'zz'"),
        (["--shortcut", "y"], "--shortcut: no feature column 'y'"),
        (["--property", "speed"], "--property 'speed': choose one of"),
        (["--property", "exact_rediscovery"], "needs --truth"),
        (["--property", "feature_absence"], "needs --irrelevant"),
        (["--property", "extrapolation"], "needs --test"),
        (["--property", "noise"], "needs --noiseless-task"),
    ],
)
def test_bad_declarations_are_one_line_and_write_nothing(tmp_path, capsys, extra, expect):
    train, _ = official_style(tmp_path / "files")
    ws = tmp_path / "ws"
    code, _, err = run(["tasks", "add", "bad", str(train), "--target", "y", *extra, "-w", str(ws)], capsys)
    assert code != 0 and expect in err and err.count("\n") == 1
    assert not ws.exists() or not any((ws / "tasks").glob("*"))


def test_builtin_suites_expand_over_builtin_tasks_only(tmp_path, capsys):
    train, _ = official_style(tmp_path / "files")
    ws = tmp_path / "ws"
    assert run(["tasks", "add", "srbench2022-exact-mine", str(train), "--target", "y", "-w", str(ws)], capsys)[0] == 0
    assert "srbench2022-exact-mine" not in load_suite("srbench2022-synthetic", ws).tasks
    suite = tmp_path / "mine.toml"
    suite.write_text('tasks = ["srbench2022-exact-m*"]\nmethods = ["linear"]\n')
    assert load_suite(str(suite), ws).tasks == [
        "srbench2022-exact-medium-s" + s
        for s in ("2082", "3946", "5847", "6087", "6589", "7102", "7884", "8674", "9023", "9900")
    ] + ["srbench2022-exact-mine"]
    other = tmp_path / "off.toml"
    other.write_text('tasks = ["off-*"]\nmethods = ["linear"]\n')
    with pytest.raises(SuiteError, match="matches no task"):
        load_suite(str(other), ws)
