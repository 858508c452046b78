"""The work every leaderboard of a report shares, done at 100,000 runs without a Python loop per
row (issue 56), gives what the row-by-row code gave: the same frame (values, dtypes, order), the
same protocols per method, the same counts of runs missing and pending."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from srtui.results.scoring.base import PENDING, complete
from srtui.results.scoring.coverage import counts
from srtui.results.scoring.mixed import _key, protocols_per_method
from srtui.results.scoring.tables import normalise


def row_by_row_complete(runs: pd.DataFrame) -> pd.DataFrame:
    """``complete`` as it was written first: a grid of tuples joined on object keys."""
    seeds = runs.groupby("task")["seed"].unique()
    methods = runs["method"].unique()
    grid = pd.DataFrame(
        [(t, m, s) for t, ss in seeds.items() for m in methods for s in ss], columns=["task", "method", "seed"]
    )
    have = runs.drop_duplicates(["task", "method", "seed"])
    keys = dict.fromkeys(("task", "method", "seed"), object)
    out = grid.astype(keys).merge(have.astype(keys), on=["task", "method", "seed"], how="left", indicator=True)
    out.loc[out["_merge"] == "left_only", "status"] = "missing"
    return out.drop(columns="_merge")


def row_by_row_protocols(runs: pd.DataFrame) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for method, key in zip(runs["method"].astype(str), runs["protocol"].map(_key), strict=True):
        if key not in out.setdefault(method, []):
            out[method].append(key)
    return out


def runs_table(seed_kind: str = "int", n_tasks: int = 4, drop: int = 7) -> pd.DataFrame:
    """Methods on tasks and seeds, some runs never made, one run twice, columns of every kind."""
    rng = np.random.default_rng(3)
    rows = []
    for t in range(n_tasks):
        for m in ("zeta", "alpha", "mid"):  # not sorted: the grid keeps their first appearance
            for s in (2, 0, 1) if t % 2 else (0, 1):  # tasks with different seeds
                rows.append(
                    {
                        "task": f"t{n_tasks - t}",
                        "method": m,
                        "seed": {"int": s, "float": float(s), "nan": np.nan if s == 1 else s}[seed_kind],
                        "status": str(rng.choice(["ok", "ok", "error", "pending"])),
                        "r2_test": float(rng.random()),
                        "size": int(rng.integers(1, 9)),
                        "flag": bool(rng.random() < 0.5),
                        "model": f"x0*{rng.random():.3f}",
                    }
                )
    rows = [r for i, r in enumerate(rows) if not drop or i % drop != 3]  # runs never attempted
    rows.append(dict(rows[0], r2_test=0.5))  # the same run twice: the first is kept
    return normalise(pd.DataFrame(rows))


@pytest.mark.parametrize("seed_kind", ["int", "float", "nan"])
def test_complete_is_the_row_by_row_frame(seed_kind: str) -> None:
    runs = runs_table(seed_kind)
    fast, plain = complete(runs), row_by_row_complete(runs)
    assert (fast["status"] == "missing").sum() > 0
    pd.testing.assert_frame_equal(fast, plain, check_dtype=True, check_index_type=True)
    for col in ("task", "method", "seed"):  # the keys are Python objects, as before
        assert [type(v) for v in fast[col]] == [type(v) for v in plain[col]]


def test_complete_of_a_full_grid_and_of_no_runs() -> None:
    full = runs_table(drop=0)[:-1]  # nothing missing, no duplicate
    pd.testing.assert_frame_equal(complete(full), row_by_row_complete(full), check_dtype=True)
    assert (complete(full)["status"] != "missing").all()
    empty = runs_table().iloc[:0]
    pd.testing.assert_frame_equal(complete(empty), row_by_row_complete(empty), check_dtype=True)


def test_coverage_counts_read_only_the_keys_and_status() -> None:
    runs = runs_table()
    plain = row_by_row_complete(runs)
    expected = pd.DataFrame(
        {
            "missing": (plain["status"] == "missing").groupby(plain["method"]).sum().astype(int),
            "pending": plain["status"].isin(PENDING).groupby(plain["method"]).sum().astype(int),
        }
    )
    assert expected["missing"].sum() > 0 and expected["pending"].sum() > 0
    pd.testing.assert_frame_equal(counts(runs), expected, check_names=False)


def test_protocols_per_method_are_the_row_by_row_ones() -> None:
    def record(name: str, seed: int, scaling: str = "none") -> str:
        return json.dumps({"protocol": name, "scaling": scaling, "split": "75/25", "tuning": "none", "seed": seed})

    texts = [record("single", 1), record("single", 2), record("srbench2021", 1, "standard"), None, "not json", "[1]"]
    runs = runs_table(n_tasks=6)
    runs["protocol"] = [texts[i % len(texts)] for i in range(len(runs))]
    fast = protocols_per_method(runs)
    assert fast == row_by_row_protocols(runs)
    assert list(fast) == list(row_by_row_protocols(runs))  # methods in the same order
    assert any(len(keys) > 1 for keys in fast.values())
    runs["protocol"] = np.nan  # a CSV of another tool: nothing recorded
    assert protocols_per_method(runs) == row_by_row_protocols(runs)


def test_typed_jobs_empties_only_values_of_the_wrong_kind(capsys: pytest.CaptureFixture[str]) -> None:
    """Only present values are checked (a column of 100,000 jobs is mostly empty): text, a bool or
    a blob in a number column, a number or a blob in a text column, each empty with one warning."""
    from srtui.results.store.typed import typed_jobs

    frame = pd.DataFrame(
        {
            "job_id": pd.Series(["a", "b", "c", "d", "e", "f"], dtype=object),
            "r2_test": pd.Series([0.5, "text", True, None, b"blob", np.nan], dtype=object),
            "wall_s": pd.Series([None] * 6, dtype=object),  # a column left empty: numbers, all missing
            "model": pd.Series(["x0", 5, None, np.nan, b"blob", "x1"], dtype=object),
            "method": pd.Series(["m"] * 6, dtype="string"),  # pandas' own strings: left as they are
        }
    )
    out = typed_jobs(frame.copy(), table="fast-path test")
    assert out["r2_test"].tolist()[0] == 0.5 and out["r2_test"].iloc[1:].isna().all()
    assert out["wall_s"].dtype.kind == "f" and out["wall_s"].isna().all()
    assert out["model"].tolist()[:3] == ["x0", None, None] and out["model"].tolist()[4:] == [None, "x1"]
    assert out["method"].dtype == frame["method"].dtype and out["method"].tolist() == ["m"] * 6
    warned = capsys.readouterr().err.splitlines()
    assert [line.split(" column ")[1].split(":")[0] for line in warned] == ["r2_test", "model"]
    assert "row b" in warned[0] and "holds str" in warned[0] and "row b" in warned[1] and "holds int" in warned[1]
