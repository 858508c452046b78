"""Issue 55: the report's limits table said ``cpu_s: null`` where the run's jobs had a CPU limit of
1.5 x their wall limit + 10 s (srtui.engine.spec.Limits.effective_cpu_s): it shows the value in force."""

from __future__ import annotations

import json

import pandas as pd

from srtui.results.outputs.report import _limits


def test_the_limits_table_shows_the_limits_in_force() -> None:
    stored = [
        json.dumps({"time_s": 60.0, "mem_mb": 400.0, "cpu_s": None, "grace_s": 5.0}),
        json.dumps({"time_s": 60.0, "mem_mb": 400.0, "cpu_s": 30.0, "grace_s": 5.0, "disk_mb": 2048.0}),
        "not json",
    ]
    shown = list(_limits(pd.DataFrame({"limits": stored, "jobs": [3, 2, 1]}))["limits"])
    assert shown[0] == "time_s 60.0, mem_mb 400.0, cpu_s 100 (from time_s), grace_s 5.0, disk_mb 1024 (default)"
    assert "cpu_s 30," in shown[1] and shown[1].endswith("disk_mb 2048")
    assert shown[2] == "not json"  # a row srtui cannot read is shown as stored
