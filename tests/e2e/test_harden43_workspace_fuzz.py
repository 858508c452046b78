"""Issue 43, break 7: a workspace is untrusted input. Invalid JSON in ``task_info``, a blob in
``jobs.task``, text in REAL columns crashed `results --summary`, `results --format json`,
`report` and `rescore` with tracebacks; each value is now read through a typed reader
(results/store/typed.py): a malformed one is a one-line warning naming table, row and column,
and the command goes on. A hypothesis fuzz writes hostile values into the jobs, metrics and
task_info columns and runs the read-only commands."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import srtui
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from results.store.columns import BY_NAME

DEEP = "[" * 50_000 + "]" * 50_000
HOSTILE = [
    b"\x00\x01blob",
    "{not json",
    DEEP,
    "lots",
    1e308,
    float("nan"),
    -7,
    "\x1b[2J\x1b]0;x\x07",
    "=cmd|'/c calc'!A1",
]
COMMANDS = [["results", "--format", "json"], ["results", "--summary"], ["status"], ["export", "--format", "json"]]
DRIVER = """
import sys
from srtui.cli import main
for argv in {commands!r}:
    try:
        main(argv + ["-w", sys.argv[1]])
    except SystemExit:
        pass
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("fuzz") / "ws"
    srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--seeds", "1", "-w", str(ws), check=True
    )
    return ws


def _hostile(base: Path, to: Path, edits: list[tuple[str, str, object]]) -> Path:
    shutil.copytree(base, to)
    with sqlite3.connect(to / "srtui.db") as conn:
        for table, column, value in edits:
            try:  # names from our own lists
                conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
            except sqlite3.IntegrityError:
                pass  # a NOT NULL column keeps its value
    return to


def _commands(ws: Path, commands: list[list[str]]) -> subprocess.CompletedProcess:
    script = DRIVER.format(commands=commands)
    return subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_the_reported_crashes_are_one_line_warnings(base: Path, tmp_path: Path) -> None:
    ws = _hostile(
        base,
        tmp_path / "ws",
        [("task_info", "info", "{not json"), ("jobs", "task", b"\x00blob"), ("jobs", "r2_test", "lots")],
    )
    for args in (["results", "--summary"], ["results", "--format", "json"], ["rescore"]):
        proc = srtui(*args, "-w", str(ws))
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("srtui: warning: ")]
        assert warnings and all(" row " in ln and " column " in ln for ln in warnings), proc.stderr
    report = srtui("report", "--out", str(tmp_path / "r.html"), "-w", str(ws))
    assert "Traceback" not in report.stderr and report.returncode == 0, report.stderr


COLUMNS = [("jobs", name) for name in BY_NAME if name != "job_id"] + [("task_info", "info"), ("metrics", "value")]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(COLUMNS), st.sampled_from(HOSTILE)), min_size=3, max_size=8))
def test_hostile_values_in_any_column_cause_no_traceback(base: Path, tmp_path_factory, edits) -> None:
    ws = _hostile(base, tmp_path_factory.mktemp("h") / "ws", [(t, c, v) for (t, c), v in edits])
    proc = _commands(ws, COMMANDS)
    assert "Traceback" not in proc.stderr, (edits, proc.stderr[-3000:])
