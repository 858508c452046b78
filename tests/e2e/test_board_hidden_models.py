"""Issue 43, break 10: under profile reference (the 2022 code: a missing simplicity rank counts as
the best), a method that hides its model (none, or over the 100,000-character cap) outranks an
honest one with the same predictions; the leaderboard marks each such row and its note names
profile=corrected, which ranks the honest method first."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import srtui


def _runs(path: Path, hidden: str) -> Path:
    rows = []
    for task in ("t1", "t2", "t3"):
        for seed in (1, 2):
            common = {"task": task, "seed": seed, "status": "ok", "property": "accuracy"}
            rows.append({**common, "method": "honest", "r2_test": 0.9, "simplicity": -1.2, "model": "x0 + 1"})
            rows.append({**common, "method": "hider", "r2_test": 0.9, "simplicity": "", "model": hidden})
            rows.append({**common, "method": "third", "r2_test": 0.5, "simplicity": -0.5, "model": "x0"})
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("hidden", ["", "x0 + " * 25_000], ids=["missing", "over-the-cap"])
def test_a_hidden_model_that_outranks_an_honest_one_is_flagged(tmp_path: Path, hidden: str) -> None:
    runs = _runs(tmp_path / "runs.csv", hidden)
    out = srtui("score", "srbench2022-synthetic", "--from-csv", str(runs), "--format", "json", check=True)
    doc = json.loads(out.stdout)
    board = {row["method"]: row for row in doc["tables"]["leaderboard"]}
    assert board["hider"]["score"] > board["honest"]["score"]  # the reference code's behaviour, kept
    assert board["hider"]["hidden_model"] == "*" and board["honest"]["hidden_model"] == ""
    assert board["third"]["hidden_model"] == ""
    assert any("profile=corrected" in note and "hidden model" in note for note in doc["notes"]), doc["notes"]
    text = srtui("score", "srbench2022-synthetic", "--from-csv", str(runs), check=True).stdout
    assert "profile=corrected" in text
    corrected = srtui(
        "score",
        "srbench2022-synthetic",
        "--from-csv",
        str(runs),
        "-o",
        "profile=corrected",
        "--format",
        "json",
        check=True,
    )
    fixed = {row["method"]: row for row in json.loads(corrected.stdout)["tables"]["leaderboard"]}
    assert fixed["honest"]["score"] > fixed["hider"]["score"] and "hidden_model" not in fixed["honest"]


def test_an_honest_board_has_no_flag(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "runs.csv", "x0 + 2")  # a model shown, its simplicity missing for another reason
    doc = json.loads(
        srtui("score", "srbench2022-synthetic", "--from-csv", str(runs), "--format", "json", check=True).stdout
    )
    assert "hidden_model" not in doc["tables"]["leaderboard"][0]
