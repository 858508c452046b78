"""`score`, `plot`, `report` and `export` say on stderr what they are doing (issue 56): piped, one
plain line per step once the command is past a second of work (``SRTUI_PROGRESS_AFTER_S``; 0
here, so a small workspace shows every step); stdout stays the command's own. `plot` keeps each
figure in the workspace's cache: the next call of the same figure over the same runs copies it,
importing neither pandas nor matplotlib; a write to the store draws it again. The real CLI, in
subprocesses, its driver's modules read as tests/e2e/test_lazy_imports.py reads them."""

from __future__ import annotations

import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import srtui
from test_lazy_imports import imported

SUITE = """name = "steps"
tasks = ["smoke-linear"]
methods = ["linear", "poly2"]
seeds = [1, 2]
scoring = "srbench2021"
"""
EVERY_STEP = {"SRTUI_PROGRESS_AFTER_S": "0"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("steps")
    (root / "steps.toml").write_text(SUITE)
    srtui("run", str(root / "steps.toml"), "-w", str(root / "ws"), check=True)
    return root / "ws"


def _steps(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("srtui: ") and "note" not in line]


def test_score_and_export_piped_print_one_line_per_step(workspace: Path) -> None:
    out = srtui("score", "srbench2021", "--format", "csv", "-w", str(workspace), env=EVERY_STEP, check=True)
    assert _steps(out.stderr) == [
        "srtui: score srbench2021: reading the runs (1/2)",
        "srtui: score srbench2021: scoring 4 runs (2/2)",
    ]
    assert "linear" in out.stdout and "srtui:" not in out.stdout  # stdout: the score alone
    quiet = srtui("score", "srbench2021", "--format", "csv", "-w", str(workspace), check=True)
    assert quiet.stdout == out.stdout and _steps(quiet.stderr) == []  # a small workspace: under a second of work
    export = srtui("export", "--format", "md", "-w", str(workspace), env=EVERY_STEP, check=True)
    assert _steps(export.stderr) == [
        "srtui: export: reading the runs",
        "srtui: export: the table of 4 runs",
        "srtui: export: leaderboard of steps (1/1)",
    ]


def test_report_piped_prints_each_suite_s_steps(workspace: Path, tmp_path: Path) -> None:
    out = srtui("report", "--out", str(tmp_path / "r.html"), "-w", str(workspace), env=EVERY_STEP, check=True)
    assert out.stderr.splitlines() == [
        "srtui: report: reading the runs of steps (1/1)",
        "srtui: report: leaderboard and figures of steps (1/1)",
        "srtui: report: printing 4 models",  # each method's best and median, printed meanwhile
        f"wrote {tmp_path / 'r.html'}",
    ]


def test_plot_prints_its_steps_then_reuses_the_kept_figure(workspace: Path, tmp_path: Path) -> None:
    shutil.copytree(workspace, tmp_path / "ws")  # written to below
    args = ["plot", "points", "--width", "3.5", "-w", str(tmp_path / "ws")]
    first = srtui(*args, "--out", str(tmp_path / "a.svg"), env=EVERY_STEP, check=True)
    assert _steps(first.stderr) == [
        "srtui: plot points: reading the runs (1/2)",
        "srtui: plot points: scoring and drawing a.svg (2/2)",
    ]
    proc, modules = imported(tmp_path, *args, "--out", str(tmp_path / "b.svg"))
    assert proc.returncode == 0 and _steps(proc.stderr) == [], proc.stderr
    assert (tmp_path / "b.svg").read_bytes() == (tmp_path / "a.svg").read_bytes()
    assert not {"pandas", "matplotlib"} & {m.split(".")[0] for m in modules}
    assert proc.stderr.splitlines()[-1] == f"wrote {tmp_path / 'b.svg'}"
    # another width, another figure: drawn
    other = srtui(*args[:3], "7", *args[4:], "--out", str(tmp_path / "c.svg"), env=EVERY_STEP, check=True)
    assert len(_steps(other.stderr)) == 2
    # a write to the store: drawn again, never the kept file of the runs before
    with sqlite3.connect(tmp_path / "ws" / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET r2_test = r2_test / 2")
    again = srtui(*args, "--out", str(tmp_path / "d.svg"), env=EVERY_STEP, check=True)
    assert len(_steps(again.stderr)) == 2
    assert (tmp_path / "d.svg").read_bytes() != (tmp_path / "a.svg").read_bytes()


def test_on_a_terminal_the_steps_are_a_progress_line_gone_at_the_end(workspace: Path) -> None:
    """stderr a terminal (a pty here), stdout piped: rich's transient progress line on stderr,
    the score alone on stdout. The score is computed: a kept answer (srtui/cli/score_cache.py,
    left by another test of this workspace) is printed at once, with no steps to show."""
    shutil.rmtree(workspace / "cache" / "scores", ignore_errors=True)
    main, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "NO_COLOR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "srtui", "score", "srbench2021", "--format", "csv", "-w", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=child,
        env={**env, "TERM": "xterm", "COLUMNS": "100"},
    )
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(main)
    assert proc.returncode == 0, seen
    # drawn (which step's words a frame shows depends on rich's refresh ticks), cursor hidden
    assert b"score srbench2021" in seen and b"\x1b[?25l" in seen
    assert b"\x1b[?25h" in seen  # and given back at the end
    assert b"linear" in out and b"srtui:" not in out and b"\x1b" not in out


def test_methods_check_says_what_it_does_its_json_alone_on_stdout() -> None:
    """A check takes seconds on a busy machine (a fork server's imports, the sealed job): its
    steps on stderr, its answer alone on stdout."""
    out = srtui("methods", "check", "linear", "--json", env=EVERY_STEP, check=True)
    assert _steps(out.stderr) == [
        "srtui: methods check linear: planning (1/2)",
        "srtui: methods check linear: fitting linear on smoke-interaction, sealed (2/2)",
    ]
    assert json.loads(out.stdout)["status"] == "ok"
