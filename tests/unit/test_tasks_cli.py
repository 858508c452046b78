"""`srtui tasks`: list, show, export, add (validation before any write)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from srtui.cli import main
from srtui.tasks.catalogue import TaskContext, get_task


def run(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def test_list_json_has_every_track(tmp_path, capsys):
    code, out, _ = run(["tasks", "list", "--json", "-w", str(tmp_path)], capsys)
    assert code == 0
    rows = json.loads(out)
    assert len(rows) > 990 and {"name", "track", "offline", "description"} <= set(rows[0])
    assert {"demo-epidemic-cases", "srbench2022-realworld-hosp", "pmlb-1028-swd", "nsr-nguyen-1"} <= {
        r["name"] for r in rows
    }


def test_show_json(tmp_path, capsys):
    code, out, _ = run(["tasks", "show", "srbench2022-featsel-r0.1-s2082", "--json", "-w", str(tmp_path)], capsys)
    info = json.loads(out)
    assert code == 0 and info["n_train"] == 500 and info["property"] == "feature_absence"
    assert info["irrelevant_features"] == sorted(f"x{i}" for i in range(11, 21))
    assert info["provenance"]["seed"] == 2082
    assert info["provenance"]["official_files"].endswith("2082_featureselection_hard_data_{train,test}.csv")


def test_show_unknown_task_is_one_line(tmp_path, capsys):
    code, _, err = run(["tasks", "show", "no-such-task", "-w", str(tmp_path)], capsys)
    assert code != 0 and err.count("\n") == 1 and "unknown task" in err


def test_export_round_trips(tmp_path, capsys):
    code, _, _ = run(
        ["tasks", "export", "demo-epidemic-cases", "--out", str(tmp_path / "out"), "-w", str(tmp_path)], capsys
    )
    assert code == 0
    task = get_task("demo-epidemic-cases", TaskContext.for_workspace(tmp_path))
    train = pd.read_csv(tmp_path / "out" / "train.csv")
    assert list(train.columns) == ["date", *task.feature_names, task.target_name]
    assert np.array_equal(train[task.feature_names].to_numpy(), task.X_train)
    assert np.array_equal(train[task.target_name].to_numpy(), task.y_train)
    assert json.loads((tmp_path / "out" / "task.json").read_text())["fingerprint"] == task.fingerprint()


def _csv(path, rows):
    path.write_text("\n".join(rows) + "\n")
    return path


def test_add_user_task_and_use_it(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    df = pd.DataFrame({"speed (m/s)": X[:, 0], "mass": X[:, 1], "y": 2 * X[:, 0] * X[:, 1]})
    df.to_csv(tmp_path / "data.csv", index=False)
    ws = tmp_path / "ws"
    code, out, err = run(
        [
            "tasks",
            "add",
            "my-task",
            str(tmp_path / "data.csv"),
            "--target",
            "y",
            "--truth",
            "2*speed__m_s_*mass",
            "-w",
            str(ws),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, _ = run(["tasks", "show", "my-task", "--json", "-w", str(ws)], capsys)
    info = json.loads(out)
    assert info["features"] == ["speed__m_s_", "mass"] and info["n_train"] == 30 and info["n_test"] == 10
    assert info["provenance"]["renamed_columns"] == {"speed (m/s)": "speed__m_s_"}
    code, out, _ = run(["tasks", "list", "--json", "-w", str(ws)], capsys)
    assert "my-task" in {r["name"] for r in json.loads(out)}
    code, _, err = run(["tasks", "add", "my-task", str(tmp_path / "data.csv"), "--target", "y", "-w", str(ws)], capsys)
    assert code != 0 and "already exists" in err


@pytest.mark.parametrize(
    "rows,target,expect",
    [
        (["a,b,y", "1,2,3", "4,x,6", "7,8,9", "1,1,1"], "y", "not numeric"),
        (["a,b,y", "1,2,3", "4,5,6", "7,8,9", "1,1,1"], "z", "no target column"),
        (["a,b,y", "1,2,3", "4,,6", "7,8,9", "1,1,1"], "y", "missing value"),
        (["a,b,y", "1,2,3"], "y", "row(s)"),
    ],
)
def test_add_rejects_bad_csv_and_writes_nothing(tmp_path, capsys, rows, target, expect):
    ws = tmp_path / "ws"
    code, _out, err = run(
        ["tasks", "add", "bad", str(_csv(tmp_path / "bad.csv", rows)), "--target", target, "-w", str(ws)], capsys
    )
    assert code != 0 and expect in err and err.count("\n") == 1
    assert not ws.exists() or not any((ws / "tasks").glob("*"))


def test_add_rejects_bad_truth_and_missing_file(tmp_path, capsys):
    good = _csv(tmp_path / "ok.csv", ["a,b,y", "1,2,3", "4,5,6", "7,8,9", "1,1,1"])
    ws = tmp_path / "ws"
    code, _, err = run(["tasks", "add", "t1", str(good), "--target", "y", "--truth", "a*zz", "-w", str(ws)], capsys)
    assert code != 0 and "ground truth" in err
    code, _, err = run(["tasks", "add", "t2", str(tmp_path / "missing.csv"), "--target", "y", "-w", str(ws)], capsys)
    assert code != 0 and "file not found" in err
    assert not ws.exists() or not any((ws / "tasks").glob("*"))
