"""What a newcomer meets first, through the real CLI: listings that never cut names, a piped run
that says what each job did, `srtui results` as a table on a terminal, `srtui run --help` in
panels at 80 columns, did-you-mean for every mistyped name (issue #32)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from conftest import srtui
from ptyterm import PtyProcess


def on_terminal(*args: str, cwd: Path | None = None, timeout: float = 120) -> str:
    """Run the real CLI on an 80x24 pseudo-terminal; what it drew (escape codes removed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "COLUMNS", "LINES")}
    term = PtyProcess([sys.executable, "-m", "srtui", *args], env=env, size=(80, 24), cwd=cwd)
    try:
        code, _ = term.wait_exit(timeout)
        assert code == 0, term.text
        term.hangup()
        return term.text.replace("\r\n", "\n")
    finally:
        term.kill()


def test_tasks_list_piped_is_one_plain_row_per_task_and_never_cuts_a_name() -> None:
    as_json = srtui("tasks", "list", "--json", check=True).stdout
    import json

    names = [t["name"] for t in json.loads(as_json)]
    out = srtui("tasks", "list", check=True)
    rows = out.stdout.splitlines()
    assert len(rows) == len(names), "one row per task, no header or footer on stdout"
    assert [r.split("\t")[0] for r in rows] == names
    assert all(r.count("\t") == 3 for r in rows)
    assert "…" not in out.stdout
    assert f"{len(names)} tasks" in out.stderr


def test_tasks_list_on_a_terminal_keeps_whole_names_at_80_columns() -> None:
    text = on_terminal("tasks", "list", "--track", "srbench2022-synthetic")
    long_names = [n for n in srtui("tasks", "list", "--track", "srbench2022-synthetic").stdout.split() if "-" in n]
    assert "feynman" in text or long_names
    for line in text.splitlines():
        if line.strip() and not line.startswith("note"):
            first = line.split()[0]
            assert "…" not in first, line


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_piped_run_names_each_job_and_is_quiet_when_nothing_ran(workspace: Path, suite_file) -> None:
    suite = suite_file("newcomer", tasks=("smoke-linear",), methods=("probe-noop", "linear"), seeds=(1, 2))
    first = srtui("run", str(suite), "-w", str(workspace), "-j", "2", check=True)
    lines = [line for line in first.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 4, first.stderr
    for line in lines:
        assert re.fullmatch(r"\[\d/4\] smoke-linear  (probe-noop|linear)  seed [12]  ok  \d+\.\d s", line), line
    again = srtui("run", str(suite), "-w", str(workspace), check=True)
    assert "accuracy metrics of 0" not in again.stderr
    assert "computing metrics" not in again.stderr
    assert "nothing to run; 4 already done" in again.stderr


def test_results_is_a_table_on_a_terminal_and_csv_or_json_when_piped(workspace: Path, suite_file) -> None:
    suite = suite_file("tbl", tasks=("smoke-linear",), methods=("linear",), seeds=(1,))
    srtui("run", str(suite), "-w", str(workspace), check=True)
    table = on_terminal("results", "-w", str(workspace))
    head = table.splitlines()[0].split()
    assert head[:4] == ["task", "method", "seed", "status"], table
    assert "smoke-linear  linear" in table and "1 jobs" in table
    assert all(len(line) <= 80 for line in table.splitlines())
    assert "job_id,suite" not in table
    piped = srtui("results", "-w", str(workspace), check=True).stdout
    assert piped.startswith("job_id,suite,task,method")
    asked = on_terminal("results", "-w", str(workspace), "--format", "csv")
    assert "job_id,suite,task" in asked
    bad = srtui("results", "-w", str(workspace), "--format", "tabel")
    assert bad.returncode == 2 and "did you mean 'table'?" in bad.stderr


def test_run_help_is_in_panels_and_readable_at_80_columns() -> None:
    out = srtui("run", "--help", env={"COLUMNS": "80", "TERM": "dumb"}, check=True).stdout
    for panel in ("What to run", "Limits per job", "Protocol and SRBench method folders", "Cluster (Dask)"):
        assert panel in out
    assert not re.search(r"<(bool|str|int|float|path|list\[\w+\])>", out, re.IGNORECASE), out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert len(out.splitlines()) <= 60
    assert "…" not in out


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("methods", "check", "pyoperonn"), "pyoperon"),
        (("tasks", "show", "feynman-i-10-7-noise"), "feynman-i-10-7-noise0"),
        (("run", "smok", "--dry-run"), "smoke"),
        (("run", "smoke", "--methods", "pyoperonn", "--dry-run"), "pyoperon"),
        (("score", "srbench2022-synthetc", "--from-csv", "RUNS"), "srbench2022-synthetic"),
        (("score", "srbench2021", "--format", "latx", "--from-csv", "RUNS"), "latex"),
        (("export", "--format", "jsn"), "json"),
    ],
)
def test_did_you_mean_for_mistyped_names(args: tuple[str, ...], suggestion: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("task,method,seed,r2_test\nt,a,1,0.5\nt,b,1,0.7\n")
    args = tuple(str(runs) if a == "RUNS" else a for a in args)
    out = srtui(*args, "-w", str(tmp_path / "ws")) if args[0] in ("export",) else srtui(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"did you mean {suggestion!r}?" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_latex_says_booktabs_runs_tex_has_a_papers_columns(workspace: Path, suite_file, tmp_path: Path) -> None:
    suite = suite_file("tex", tasks=("smoke-linear",), methods=("linear",), seeds=(1,))
    srtui("run", str(suite), "-w", str(workspace), check=True)
    srtui("export", "--format", "latex", "--out", str(tmp_path / "tex"), "-w", str(workspace), check=True)
    runs_tex = (tmp_path / "tex" / "runs.tex").read_text()
    assert "\\usepackage{booktabs}" in runs_tex
    header = next(line for line in runs_tex.splitlines() if line.startswith("task &"))
    assert header.count("&") < 10, header
    assert "model" not in header and "job\\_id" not in header
    assert max(len(line) for line in runs_tex.splitlines()) < 200


def test_the_reference_auc_that_looks_wrong_gets_one_footnote_and_on_front_has_no_nan(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    rows = ["task,method,seed,status,r2_test,size,truth_size"]
    rows += [
        "t1,linear,1,ok,0.94,5,7",
        "t2,linear,1,ok,1.0,5,7",
        "t1,gplearn,1,ok,0.993,30,7",
        "t2,gplearn,1,ok,0.999,30,7",
    ]
    runs.write_text("\n".join(rows) + "\n")
    for fmt in ("table", "md", "latex", "csv"):
        out = srtui("score", "srbench2025", "--from-csv", str(runs), "--format", fmt, cwd=tmp_path, check=True).stdout
        notes = [line for line in out.splitlines() if "holds a curve flat" in line]
        assert len(set(notes)) == 1, out  # CSV repeats its header per table
        assert "linear on t1: AUC 1 at median R2 0.94" in notes[0] and "flat after its highest R2" in notes[0]
        assert "NaN" not in out and "nan" not in out.lower().replace("nano", "")
    corrected = srtui("score", "srbench2025", "--from-csv", str(runs), "-o", "profile=corrected", cwd=tmp_path)
    assert "holds a curve flat" not in corrected.stdout


def test_srtui_in_a_folder_without_a_workspace_says_so_and_creates_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "COLUMNS", "LINES")}
    term = PtyProcess([sys.executable, "-m", "srtui"], env=env, size=(80, 24), cwd=tmp_path)
    try:
        term.wait_for("none is made until a run starts", timeout=60)
        term.wait_for("run smoke` in a shell", timeout=10)
        for key in "23451":  # every section looks at the (missing) workspace
            term.send(key)
        term.send("\x11")  # ctrl+q
        code, _ = term.wait_exit(30)
        assert code == 0
    finally:
        term.kill()
    assert list(tmp_path.iterdir()) == []
    status = srtui("status", cwd=tmp_path)
    assert status.returncode == 2 and "run `srtui run SUITE` to create one" in status.stderr
    assert list(tmp_path.iterdir()) == []
