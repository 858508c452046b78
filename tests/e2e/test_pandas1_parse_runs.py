"""A workspace's srbench2021 jobs say how their PMLB file was parsed (#41): a run under
``srbench2021`` (pandas 1.x's parse) beside one under ``srbench2021-exact`` in the same workspace
makes new jobs on other data files, and their leaderboard is refused as two protocols, never
mixed silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import results_json, shared_data_dir, srtui

TASK = "srbench2021-bb-579-fri-c0-250-5"


def _record(row: dict) -> dict:
    value = row["protocol"]
    return json.loads(value) if isinstance(value, str) else value


@pytest.mark.slow  # two runs of the CLI (the unit proof: tests/unit/test_pandas1_floats.py)
def test_the_two_parses_are_two_jobs_and_two_protocols(workspace: Path, tmp_path: Path) -> None:
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification" / "579_fri_c0_250_5.tsv.gz").is_file():
        pytest.skip("needs the shared PMLB files (../shared/data/srbench2022/qualification or $SRTUI_DATA_DIR)")
    suite = tmp_path / "mine.toml"
    suite.write_text(
        f'name = "mine"\ntasks = ["{TASK}"]\nmethods = ["linear"]\nseeds = [23654]\nscoring = "srbench2021"\n'
    )
    for protocol in ("srbench2021-exact", "srbench2021"):
        srtui("run", str(suite), "--protocol", protocol, "-w", str(workspace), "--data-dir", str(data), check=True)
    rows = [r for r in results_json(workspace) if r["suite"] == "mine"]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    records = {_record(r)["protocol"]: r for r in rows}
    assert "data" not in _record(records["srbench2021-exact"])
    assert _record(records["srbench2021"])["data"] == "PMLB files as pandas 1.x parsed them"
    assert records["srbench2021"]["data_fingerprint"] != records["srbench2021-exact"]["data_fingerprint"]
    cached = sorted(p.name for p in (workspace / "cache" / "tasks").glob(f"{TASK}-v*.npz"))
    assert cached == [f"{TASK}-v1+pandas-1.x.npz", f"{TASK}-v1.npz"]
    out = srtui("score", "srbench2021", "--suite", "mine", "-w", str(workspace))
    assert out.returncode != 0 and "jobs of 2 protocols" in out.stderr
