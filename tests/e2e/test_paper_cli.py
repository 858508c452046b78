"""A researcher's walk through the CLI (issue #46): exports that pandas reads as they are, models
that read back in srtui's parser, `expr` with a '-'-led model, tables that fit 80 columns, a
`methods check` that keeps out of the researcher's workspace, tuning lines that say what ran."""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, srtui
from ptyterm import PtyProcess

from srtui.engine.expression import parse_expression

#: a task whose linear model starts with a negative intercept: ``-3.0... + 2.0...*x0``
TASK = "paper-negative-intercept-law"


def on_terminal(*args: str, timeout: float = 180) -> str:
    """The real CLI on an 80x24 pseudo-terminal; what it drew (escape codes removed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "COLUMNS", "LINES")}
    term = PtyProcess([sys.executable, "-m", "srtui", *args], env=env, size=(80, 24))
    try:
        code, _ = term.wait_exit(timeout)
        assert code == 0, term.text
        term.hangup()
        return term.text.replace("\r\n", "\n")
    finally:
        term.kill()


@pytest.fixture(scope="module")
def researcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with a task of the researcher's own (long name, negative intercept) run by
    linear and probe-noop, two seeds."""
    root = tmp_path_factory.mktemp("paper")
    ws = root / "ws"
    rng = np.random.default_rng(0)
    for part, n in (("train", 60), ("test", 30)):
        x = rng.uniform(-1, 1, size=(n, 2))
        pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "y": -3.0 + 2.0 * x[:, 0]}).to_csv(
            root / f"{part}.csv", index=False
        )
    srtui(
        "tasks",
        "add",
        TASK,
        str(root / "train.csv"),
        "--test",
        str(root / "test.csv"),
        "--target",
        "y",
        "-w",
        str(ws),
        check=True,
    )
    suite = root / "mine.toml"
    suite.write_text(f'name = "mine"\ntasks = ["{TASK}"]\nmethods = ["linear", "probe-noop"]\nseeds = [1, 2]\n')
    srtui("run", str(suite), "-w", str(ws), "-j", "2", check=True)
    return ws


def test_export_csv_is_plain_and_every_model_reads_back(researcher: Path, tmp_path: Path) -> None:
    out = tmp_path / "exported"
    srtui("export", "--format", "csv", "--out", str(out), "-w", str(researcher), check=True)
    files = sorted(out.glob("*.csv"))
    assert {f.name for f in files} >= {"runs.csv"}
    for path in files:
        text = path.read_text()
        assert not any(line.startswith("#") for line in text.splitlines()), path
        table = pd.read_csv(path)  # no comment="#", no skiprows: as a reader calls it
        assert len(table) > 0, path
        group = path.name.split(".")[0]
        meta = json.loads((out / f"{group}.meta.json").read_text())
        assert path.name in meta["tables"].values()
        assert {"rule", "profile", "options", "notes", "srtui_version"} <= set(meta)
    runs = pd.read_csv(out / "runs.csv")
    stored = {
        r["job_id"]: r["model"]
        for r in json.loads(srtui("results", "--format", "json", "-w", str(researcher), check=True).stdout)
    }
    assert dict(zip(runs["job_id"], runs["model"])) == stored  # no ' before a number-led model
    assert any(m.startswith("-3") for m in stored.values()), stored
    for model in runs["model"]:
        parse_expression(model, ["x0", "x1"], "python")
    piped = srtui("results", "--format", "csv", "-w", str(researcher), check=True).stdout
    (tmp_path / "results.csv").write_text(piped)
    for model in pd.read_csv(tmp_path / "results.csv")["model"]:
        parse_expression(model, ["x0", "x1"], "python")


def test_expr_reads_a_model_that_starts_with_minus() -> None:
    out = srtui("expr", "-4.39e-07 + x1", check=True).stdout
    assert "expression: -4.39e-07 + x1" in out
    data = json.loads(srtui("expr", "--json", "-x1*2", "--truth", "-2*x1", "--r2-test", "-0.5", check=True).stdout)
    assert data["expression"] == "-x1*2" and data["truth"] == "-2*x1"
    typo = srtui("expr", "--jsn", "x1")
    assert typo.returncode != 0 and "--jsn" in typo.stderr


def _cut(line: str) -> bool:
    """A value cut short: an ellipsis anywhere but in the model, the table's last column."""
    return "…" in line and not line.rstrip().endswith("…")


def test_results_at_80_columns_shows_whole_values(researcher: Path) -> None:
    text = on_terminal("results", "-w", str(researcher))
    rows = [line for line in text.splitlines() if TASK in line]
    assert len(rows) == 4, text
    for line in rows:
        assert len(line) <= 80 and not _cut(line), line
        assert re.search(r"\b[12]\s+ok\s", line), line  # seed and status whole
    assert "left out at 80 columns" in text or "model" in text


def test_results_summary_has_accuracy_per_suite(researcher: Path) -> None:
    rows = json.loads(srtui("results", "--summary", "--format", "json", "-w", str(researcher), check=True).stdout)
    assert {(r["suite"], r["method"]) for r in rows} == {("mine", "linear"), ("mine", "probe-noop")}
    linear = next(r for r in rows if r["method"] == "linear")
    assert linear["median_r2_test"] == pytest.approx(1.0) and linear["jobs"] == linear["ok"] == 2
    text = on_terminal("results", "--summary", "-w", str(researcher))
    assert "median R2" in text and "suite" in text
    for line in text.splitlines():
        assert len(line) <= 80 and "…" not in line, line


def test_methods_list_piped_is_tsv_and_fits_80_columns() -> None:
    names = [r["name"] for r in json.loads(srtui("methods", "list", "--json", check=True).stdout)]
    piped = srtui("methods", "list", check=True)
    rows = piped.stdout.splitlines()
    assert [r.split("\t")[0] for r in rows] == names
    assert all(r.count("\t") == 7 for r in rows)
    assert f"{len(names)} methods" in piped.stderr
    text = on_terminal("methods", "list")
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for name in names:  # one line per method, its name whole at the start
        assert sum(1 for line in lines if re.match(rf"{re.escape(name)} +(yes|no) ", line)) == 1, name


def test_methods_check_keeps_out_of_the_researchers_workspace(researcher: Path) -> None:
    before = {
        r["job_id"] for r in json.loads(srtui("results", "--format", "json", "-w", str(researcher), check=True).stdout)
    }
    check = srtui("methods", "check", "linear", "-w", str(researcher), check=True)
    after = {
        r["job_id"] for r in json.loads(srtui("results", "--format", "json", "-w", str(researcher), check=True).stdout)
    }
    assert after == before
    kept = researcher / "checks" / "linear"
    assert (kept / "srtui.db").is_file() and str(kept) in check.stderr


def test_tuning_lines_name_configuration_and_fold_and_the_total_holds(tmp_path: Path) -> None:
    run = srtui(
        "run", "smoke", "--methods", "ridge", "--tasks", "smoke-linear", "--seeds", "1",
        "--protocol", "srbench2025", "-w", str(tmp_path / "ws"), check=True,
    )  # fmt: skip
    lines = [line for line in run.stderr.splitlines() if line.startswith("[")]
    totals = {re.match(r"\[\d+/(\d+)\]", line).group(1) for line in lines}  # type: ignore[union-attr]
    assert totals == {str(len(lines))}, lines
    bodies = [re.sub(r"^\[\d+/\d+\] | +[\d.]+ s$", "", line) for line in lines]
    assert len(set(bodies)) == len(bodies), lines
    assert sum("config" in b and "fold" in b for b in bodies) == len(lines) - 1 and "final" in bodies[-1]


def test_data_dir_of_a_flat_folder_names_the_layouts(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "192_vineyard.tsv.gz").write_bytes(b"")
    args = (
        "run", "srbench2021-blackbox", "--tasks", "pmlb-192-vineyard", "--methods", "linear",
        "--data-dir", str(flat), "-w", str(tmp_path / "ws"),
    )  # fmt: skip
    env = {"SRTUI_DATA_DIR": "", "SRTUI_OFFLINE": "1"}
    run = srtui(*args, env=env)  # refused before any job: the error names where srtui looks
    dry = srtui(*args, "--dry-run", env=env)  # plans what it can; the note says the same
    assert run.returncode == 2 and dry.returncode == 0, (run.stderr, dry.stderr)
    for out in (run, dry):
        line = " ".join(out.stderr.split())
        assert (
            f"{flat}/pmlb/192_vineyard.tsv.gz" in line and f"{flat}/datasets/192_vineyard/192_vineyard.tsv.gz" in line
        )
        assert "flat folder" in line


def test_json_has_notes_and_the_same_count_columns_in_both_profiles(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("task,method,seed,r2_test\nt1,a,1,0.9\nt1,b,1,0.5\nt2,a,1,0.8\nt2,b,1,0.7\nt1,a,2,0.9\n")
    columns = []
    for profile in ("reference", "corrected"):
        out = srtui("score", "srbench2025", "--from-csv", str(runs), "--format", "json", "-o", f"profile={profile}")
        data = json.loads(out.stdout)
        assert "notes" in data, profile
        board = data["tables"]["leaderboard"]
        columns.append({k for k in board[0] if not k.startswith("P[")})
        assert {"seeds", "datasets"} <= columns[-1]
    assert columns[0] == columns[1]


def test_help_breaks_descriptions_only_where_the_width_ends() -> None:
    out = srtui("--help", env={"COLUMNS": "80", "TERM": "dumb"}, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("│ ")]
    at = rows[0].index(rows[0].split()[2])  # where the descriptions start
    width = len(rows[0]) - 2 - at
    for prev, row in itertools.pairwise(rows):
        if row[2:at].strip():  # a new command
            continue
        first = row[at:].split()[0]
        assert len(prev[at:-1].rstrip()) + 1 + len(first) > width, (prev, row)


def test_docs_say_what_the_test_extra_installs() -> None:
    import tomllib

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    has_pyarrow = any(re.match(r"pyarrow\b", dep) for dep in extra)
    text = " ".join((REPO / "docs" / "published.md").read_text().split())
    assert ("The `test` extra includes pyarrow" in text) == has_pyarrow
    assert ("the `test` extra does not include pyarrow" in text) == (not has_pyarrow)
