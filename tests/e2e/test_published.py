"""`srtui score RULE --published`: the workspace's runs beside SRBench's published results (real CLI,
real fits, a real HTTP server on 127.0.0.1 for the feather downloads)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data_dir, srtui
from typer.testing import CliRunner

from srtui.cli import app, optional_values
from srtui.engine.errors import SrtuiError
from srtui.engine.methods.registry import BUILTIN
from srtui.results.scoring.published.sources import SOURCES

#: the feather tests need pyarrow (srtui's extra 'published'), which the `test` extra leaves out
needs_pyarrow = pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None,
    reason="needs pyarrow: srtui's extra 'published' (pip install -e '.[published]')",
)
QUAL = ("556_analcatdata_apnea2", "579_fri_c0_250_5", "654_fri_c0_500_10")


def _json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _board(data: dict) -> dict[str, dict]:
    return {r["method"]: r for r in data["tables"]["leaderboard"]}


def test_shipped_2021_table_alone_gives_the_papers_front_0(tmp_path: Path) -> None:
    data = _json(srtui("score", "srbench2021", "--published", "--format", "json", "-w", str(tmp_path / "none")))
    board = _board(data)
    assert len(board) == 21 and {r["source"] for r in board.values()} == {"published: SRBench 2021"}
    assert {m for m, r in board.items() if r["pareto_front"] == 0} == {"*Operon", "*GP-GOMEA", "*DSR"}
    assert board["Linear"]["srtui_method"] == "sgd" and board["*Operon"]["srtui_method"] == "pyoperon"
    assert "published: SRBench 2021" in data["sources"] and not data.get("warnings")
    assert any("one median over 10 seeds" in n for n in data["notes"])


def test_groundtruth_rates_per_noise_level_from_the_shipped_table(tmp_path: Path) -> None:
    data = _json(srtui("score", "srbench-groundtruth", "--published", "srbench2021", "--format", "json"))
    rows = {(r["method"], r["noise"]): r for r in data["tables"]["leaderboard"]}
    assert {n for _, n in rows} == {0.0, 0.001, 0.01}
    # the paper's Figure 3: AI Feynman solves about half of the problems without noise
    assert 50 < rows[("AIFeynman", 0.0)]["symbolic_solution_rate"] < 55
    assert rows[("Operon", 0.0)]["srtui_method"] == "pyoperon"


def test_refusals_are_one_line(tmp_path: Path) -> None:
    for args, words in (
        (["score", "srbench2022-synthetic", "--published"], "takes no published source"),
        (["score", "srbench2021", "--published", "nope"], "unknown published source 'nope'"),
        (["score", "srbench2021", "--strict"], "go with --published"),
        (["score", "srbench2021", "--published", "--from-csv", "x.csv"], "not both"),
    ):
        proc = srtui(*args, "-w", str(tmp_path / "none"))
        assert proc.returncode == 2 and words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    bad = tmp_path / "bad.feather"
    bad.write_bytes(b"ARROW1 but not really")
    proc = srtui("score", "srbench2021", "--published", str(bad), "-w", str(tmp_path / "none"))
    assert proc.returncode == 2 and "not a readable feather file" in proc.stderr and proc.stderr.count("\n") == 1
    # offline, a feather found nowhere: the line names the file to place and where
    proc = srtui(
        "score",
        "srbench2021",
        "--published",
        "srbench2021-runs",
        "-w",
        str(tmp_path / "ws"),
        env={"SRTUI_OFFLINE": "1"},
    )
    where = tmp_path / "ws" / "cache" / "data" / "srbench" / "results" / "black-box_results.feather"
    assert proc.returncode == 2 and f"place it at {where}" in proc.stderr and proc.stderr.count("\n") == 1
    csv = tmp_path / "runs.csv"
    csv.write_text("task,method,seed,r2_test\nt,a,1,0.5\nt,b,1,0.4\n")
    proc = srtui("score", "wilcoxon", "--from-csv", str(csv), "--format", "plot")
    assert proc.returncode == 2 and "has no figure" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


@pytest.fixture(scope="module")
def qual_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with real rf and linear runs on three of the 2021 black-box datasets (the shared
    copies of SRBench 2022's qualification files are the same PMLB files)."""
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    root = tmp_path_factory.mktemp("pub")
    suite = root / "mine.toml"
    tasks = [f"srbench2022-qual-{d.replace('_', '-').lower()}" for d in QUAL]
    suite.write_text(
        f'name = "mine"\ntasks = {json.dumps(tasks)}\nmethods = ["rf", "linear"]\nseeds = [1, 2]\n'
        "[limits]\ntime_s = 120\n"
    )
    ws = root / "ws"
    srtui("run", str(suite), "-w", str(ws), env={"SRTUI_DATA_DIR": str(data)}, timeout=600, check=True)
    return ws


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_workspace_methods_among_the_21_with_warnings(qual_workspace: Path) -> None:
    ws = str(qual_workspace)
    proc = srtui("score", "srbench2021", "--suite", "mine", "--published", "--format", "json", "-w", ws)
    data = _json(proc)
    board = _board(data)
    assert len(board) == 23
    assert board["rf"]["source"] == board["linear"]["source"] == "this workspace"
    assert board["rf"]["datasets"] == 3 and board["*Operon"]["datasets"] == 3  # like for like: the 3 both ran
    assert board["rf"]["failed_runs"] == 0  # the published seeds are not the workspace's missing runs
    pairs = pd.DataFrame(data["tables"]["published_pairs"])
    rf = pairs[pairs["method"] == "rf"]
    assert list(rf["published_method"].unique()) == ["RandomForest"] and len(rf) == 3
    assert rf["r2_test"].notna().all() and rf["r2_test_published"].notna().all()
    warnings = data["warnings"]
    assert any(w.startswith("scikit-learn:") and "0.24.1" in w for w in warnings), warnings
    assert any(w.startswith("seeds: 2 run(s)") for w in warnings)
    assert any(w.startswith("split: one split per dataset") for w in warnings)
    assert any(w.startswith("tuning:") for w in warnings)
    # all three are published datasets: the 119 others are left out, and said so
    assert any(w.startswith("datasets:") and "over the 3 dataset(s)" in w and "119 published" in w for w in warnings)
    assert all("\n" not in w for w in warnings) and proc.stderr.count("srtui: warning:") == len(warnings)
    table = srtui("score", "srbench2021", "--suite", "mine", "--published", "-w", ws).stdout
    lines = table.splitlines()
    assert "this workspace" in table and any(line.startswith("warning: scikit-learn:") for line in lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("warning:"))
    assert all(line.startswith("warning: ") for line in lines[first:])  # under the table, one line each
    strict = srtui("score", "srbench2021", "--suite", "mine", "--published", "--strict", "-w", ws)
    assert strict.returncode == 2 and "--strict" in strict.stderr and "scikit-learn" in strict.stderr
    assert strict.stdout == ""


def test_latex_and_markdown_mark_the_published_rows(qual_workspace: Path) -> None:
    ws = str(qual_workspace)
    tex = srtui("score", "srbench2021", "--suite", "mine", "--published", "--format", "latex", "-w", ws).stdout
    board = tex.split("% table: ")[1]  # the leaderboard (other tables mark their published rows too)
    assert board.startswith("leaderboard")
    rows = [line for line in board.splitlines() if line.endswith(r"\\") and "&" in line][1:]  # past the header
    marked = [r for r in rows if r"\textsuperscript{\dag}" in r.split("&")[0]]
    assert len(rows) == 23 and len(marked) == 21
    assert not any(r.startswith(("rf", "linear")) and r"\dag" in r.split("&")[0] for r in rows)
    assert r"\textsuperscript{\dag} published: SRBench 2021: not run here" in tex
    assert "% warning: scikit-learn:" in tex
    md = srtui("score", "srbench2021", "--suite", "mine", "--published", "--format", "md", "-w", ws).stdout
    assert "| *Operon† |" in md.replace("\\*", "*") or "*Operon†" in md
    assert "† published: SRBench 2021: not run here" in md and "> warning: scikit-learn:" in md


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.skipif("sgd" not in BUILTIN, reason="follow-up: the sgd method (helper blackbox21) is not here yet")
def test_sgd_medians_beside_the_published_linear(tmp_path: Path) -> None:
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    files = sorted((data / "srbench2022" / "qualification").glob("*.tsv.gz"))
    tasks = [f"srbench2022-qual-{f.name.removesuffix('.tsv.gz').replace('_', '-').lower()}" for f in files]
    suite = tmp_path / "sgd.toml"
    suite.write_text(f'name = "sgd"\ntasks = {json.dumps(tasks)}\nmethods = ["sgd"]\nseeds = [1]\n')
    ws = str(tmp_path / "ws")
    srtui("run", str(suite), "-w", ws, env={"SRTUI_DATA_DIR": str(data)}, timeout=900, check=True)
    out = _json(srtui("score", "srbench2021", "--suite", "sgd", "--published", "--format", "json", "-w", ws))
    pairs = pd.DataFrame(out["tables"]["published_pairs"])
    assert set(pairs["published_method"]) == {"Linear"} and len(pairs) == len(files)
    assert any(w.startswith("scikit-learn:") and "0.24.1" in w for w in out["warnings"])


# --- feathers: the published per-run schema, read from a file and downloaded over HTTP ------------


def _blackbox_feather(path: Path) -> Path:
    """A feather in collate_blackbox_results.py's schema: two methods, two datasets, two seeds."""
    rng = np.random.default_rng(0)
    rows = [
        {
            "dataset": d,
            "algorithm": a,
            "random_state": s,
            "training time (s)": 10.0 + s,
            "model_size": size,
            "symbolic_model": "x0*2",
            "r2_test": r2 + rng.uniform(0, 0.01),
            "mse_test": 0.1,
            "mae_test": 0.2,
            "params_str": "{}",
            "training time (hr)": (10.0 + s) / 3600,
            "r2_zero_test": r2,
            "friedman_dataset": "_fri_" in d,
            "symbolic_alg": a == "Operon",
        }
        for d in ("1028_SWD", "579_fri_c0_250_5")
        for a, r2, size in (("Operon", 0.9, 30.0), ("SGD", 0.5, 10.0))
        for s in (11284, 860)
    ]
    pd.DataFrame(rows).to_feather(path)
    return path


@needs_pyarrow
def test_a_feather_in_the_published_schema_is_read_and_merged(tmp_path: Path) -> None:
    path = _blackbox_feather(tmp_path / "results.feather")
    data = _json(srtui("score", "srbench2021", "--published", f"srbench2021,{path}", "--format", "json"))
    board = _board(data)
    assert board["Operon"]["source"] == "published: results.feather" and board["Operon"]["datasets"] == 2
    assert board["SGD"]["srtui_method"] == "sgd" and "*Operon" in board and len(board) == 23


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving tmp_path/www (the layout of the LFS media URLs)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root
    finally:
        httpd.shutdown()
        httpd.server_close()


@needs_pyarrow
def test_download_checks_the_lfs_sha256(server: tuple[str, Path], tmp_path: Path, monkeypatch) -> None:
    url, root = server
    served = root / "master" / "results" / "black-box_results.feather"
    served.parent.mkdir(parents=True)
    _blackbox_feather(served)
    ws = tmp_path / "ws"
    cached = ws / "cache" / "data" / "srbench" / "results" / "black-box_results.feather"
    # the real pointer's sha256 is not this file's: refused in one line, nothing kept
    bad = srtui(
        "score", "srbench2021", "--published", "srbench2021-runs", "-w", str(ws), env={"SRTUI_PUBLISHED_MIRROR": url}
    )
    assert bad.returncode == 2 and "sha256" in bad.stderr and bad.stderr.count("\n") == 1, bad.stderr
    assert not cached.exists() and not list(cached.parent.glob("*.part")) if cached.parent.exists() else True
    # with the pointer of this file (a new LFS object), the same download is kept and merged
    digest = hashlib.sha256(served.read_bytes()).hexdigest()
    src = SOURCES["srbench2021-runs"]
    files = tuple(replace(f, sha256=digest) if f.track == "black-box" else f for f in src.files)
    monkeypatch.setitem(SOURCES, "srbench2021-runs", replace(src, files=files))
    monkeypatch.setenv("SRTUI_PUBLISHED_MIRROR", url)
    runner = CliRunner()
    args = ["score", "srbench2021", "--published", "srbench2021-runs", "--format", "json", "-w", str(ws)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert cached.is_file() and hashlib.sha256(cached.read_bytes()).hexdigest() == digest
    board = _board(json.loads(res.stdout))
    assert board["Operon"]["source"] == "published: SRBench 2021 (per run)" and board["Operon"]["datasets"] == 2
    served.unlink()  # a second score reads the cache, no download
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and _board(json.loads(again.stdout)) == board
    # --data-dir holds srbench/<path>: checked by sha256 as well
    monkeypatch.setenv("SRTUI_OFFLINE", "1")
    other = tmp_path / "data" / "srbench" / "results"
    other.mkdir(parents=True)
    (other / "black-box_results.feather").write_bytes(b"not the file")
    res = runner.invoke(app, [*args[:-2], "-w", str(tmp_path / "ws2"), "--data-dir", str(tmp_path / "data")])
    assert isinstance(res.exception, SrtuiError) and "expected sha256" in str(res.exception)


def test_without_pyarrow_the_feather_is_refused_naming_the_extra(tmp_path: Path) -> None:
    path = tmp_path / "results.feather"
    path.write_bytes(b"ARROW1")  # refused before it is read
    code = (
        "import sys; sys.modules['pyarrow'] = None; from srtui.cli import main; "
        f"main(['score', 'srbench2021', '--published', {str(path)!r}, '-w', {str(tmp_path / 'ws')!r}])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "extra 'published'" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_app_leaderboard_toggles_the_published_rows(qual_workspace: Path) -> None:
    import asyncio

    from textual.widgets import DataTable, Select, Static

    from srtui.app.app import SrtuiApp
    from srtui.app.screens.leaderboard import LeaderboardScreen
    from srtui.engine.workspace import Workspace

    async def wait(pilot, condition, timeout: float = 60.0) -> None:  # a loaded 2-core machine
        end = asyncio.get_running_loop().time() + timeout
        while not condition():
            assert asyncio.get_running_loop().time() < end, "condition not reached in time"
            await pilot.pause(0.05)

    async def run() -> None:
        app = SrtuiApp(Workspace(qual_workspace), label="pub", theme="textual-dark")
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.press("3")
            screen = app.screen
            assert isinstance(screen, LeaderboardScreen)
            await wait(pilot, lambda: screen.query_one("#board-suite", Select).value == "mine")
            screen.query_one("#board-rule", Select).value = "srbench2021"  # a suite file without a rule
            await wait(pilot, lambda: screen.board is not None and screen.board.rule == "srbench2021")
            assert screen.board is not None and len(screen.board.rows) == 2 and not screen.board.published
            await pilot.press("u")
            await wait(pilot, lambda: screen.board is not None and screen.board.published)
            board = screen.board
            assert board is not None and len(board.rows) == 23
            source = board.columns.index("source")
            assert {r[source] for r in board.rows} == {"this workspace", "published: SRBench 2021"}
            # at 80 columns the source (last) is out of view: each published method is marked (#55)
            assert source == len(board.columns) - 2 and board.columns[-1] == "srtui_method"
            table = screen.query_one("#board", DataTable)
            shown = [str(table.get_row_at(i)[board.method_column]) for i in range(len(board.rows))]
            assert [m.endswith("\u2020") for m in shown] == [r[source] != "this workspace" for r in board.rows]
            info = str(screen.query_one("#board-info", Static).render())
            assert "beside the published results" in info and "protocol warning" in info and "(n shows them)" in info
            await pilot.press("n")  # the warnings, one a line, until n folds them again
            await wait(pilot, lambda: "warning: scikit-learn:" in str(screen.query_one("#board-info", Static).render()))
            await pilot.press("n")
            await wait(pilot, lambda: "warning:" not in str(screen.query_one("#board-info", Static).render()))
            await pilot.press("u")
            await wait(pilot, lambda: screen.board is not None and not screen.board.published)

    asyncio.run(run())


def _v2_feathers(folder: Path) -> dict[str, Path]:
    """SRBench 2.0's results.feather (collate_experiments_results.py) and power_consumption.feather
    (collate_blackbox_eco2ai_stats.py) in their published schemas: two methods, two datasets, 3 seeds."""
    out = folder / "srbench" / "results" / "black-box-tuning"
    out.mkdir(parents=True)
    runs, power = [], []
    for d in ("1028_SWD", "192_vineyard"):
        for a, r2, size, kwh in (("Operon", 0.85, 40.0, 2e-3), ("gplearn", 0.55, 20.0, 5e-4)):
            for i, s in enumerate((29802, 21575, 11964)):
                flags = {"symbolic_alg": True, "pre_trained": False, "gp_alg": True}
                runs.append(
                    {"dataset": d, "algorithm": a, "random_state": s,
                     "training time (s)": 200.0 if a == "Operon" else 100.0,
                     "model_size": size, "symbolic_model": "x", "r2_test": r2 + 0.05 * i + 0.02 * (d == "192_vineyard"),
                     "mse_test": 0.1, "mae_test": 0.1,
                     "params_str": "{}", "training time (hr)": 0.03, **flags, "r2_zero_test": r2,
                     "friedman_dataset": False}
                )  # fmt: skip
                power.append(
                    {"dataset": d, "algorithm": a, "random_state": s, "start_time": "2024-01-01 00:00:00",
                     "experiment_description": f"{a} {s}", "duration(s)": 100.0, "power_consumption(kWh)": kwh,
                     "CO2_emissions(kg)": 1e-4, "CPU_name": "x", "GPU_name": "", "cost": 0.0, **flags}
                )  # fmt: skip
    pd.DataFrame(runs).to_feather(out / "results.feather")
    pd.DataFrame(power).to_feather(out / "power_consumption.feather")
    return {"black-box": out / "results.feather", "energy": out / "power_consumption.feather"}


@needs_pyarrow
def test_srbench2025_profiles_and_energy_from_the_published_feathers(tmp_path: Path, monkeypatch) -> None:
    files = _v2_feathers(tmp_path / "data")
    src = SOURCES["srbench2025"]
    digests = {t: hashlib.sha256(p.read_bytes()).hexdigest() for t, p in files.items()}
    patched = tuple(replace(f, sha256=digests[f.track]) if f.track in digests else f for f in src.files)
    monkeypatch.setitem(SOURCES, "srbench2025", replace(src, files=patched))
    monkeypatch.setenv("SRTUI_OFFLINE", "1")  # read from --data-dir, never downloaded
    # `--published` alone: srtui.cli.main's optional_values, which CliRunner bypasses
    args = optional_values(["score", "srbench2025", "--published", "--data-dir", str(tmp_path / "data")])
    args += ["-w", str(tmp_path / "ws")]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    board = _board(data)
    # 2.0's names: gplearn keeps its name, Operon stands for pyoperon
    assert board["Operon"]["source"] == "published: SRBench 2.0" and board["Operon"]["srtui_method"] == "pyoperon"
    assert board["Operon"]["auc"] > board["gplearn"]["auc"] and board["Operon"]["seeds"] == 3
    energy = {r["method"]: r for r in data["tables"]["energy_time"]}
    assert energy["Operon"]["median_energy_kwh"] == pytest.approx(2e-3)
    assert energy["Operon"]["median_fit_s"] == pytest.approx(200.0) and energy["Operon"]["energy_method"] == "eco2ai"
    plot = CliRunner().invoke(app, [*args, "--format", "plot"])
    assert plot.exit_code == 0 and "energy vs median training time" in plot.stdout
    assert "\x1b" not in plot.stdout and "Operon" in plot.stdout


@needs_pyarrow
def test_groundtruth_feather_per_run_solution_rates(tmp_path: Path) -> None:
    rows = [
        {"dataset": "feynman_I_10_7", "algorithm": a, "random_state": s, "target_noise": noise, "r2_test": r2,
         "model_size": 9, "simplified_complexity": 7, "symbolic_model": "x", "simplified_symbolic_model": "x",
         "symbolic_error_is_zero": sol, "symbolic_error_is_constant": False, "symbolic_fraction_is_constant": False,
         "symbolic_solution": sol, "training time (s)": 1.0, "data_group": "Feynman"}
        for a, sol, r2 in (("tuned.OperonRegressor", True, 0.9999), ("tuned.gplearn", False, 0.5))
        for noise in (0.0, 0.1)
        for s in (1, 2)
    ]  # fmt: skip
    path = tmp_path / "ground-truth_results.feather"
    pd.DataFrame(rows).to_feather(path)
    data = _json(srtui("score", "srbench-groundtruth", "--published", str(path), "--format", "json"))
    got = {(r["method"], r["noise"]): r for r in data["tables"]["leaderboard"]}
    assert got[("tuned.OperonRegressor", 0.1)]["symbolic_solution_rate"] == 100
    assert got[("tuned.OperonRegressor", 0.0)]["accuracy_solution_rate"] == 100
    assert got[("tuned.gplearn", 0.0)]["symbolic_solution_rate"] == 0
    assert got[("tuned.OperonRegressor", 0.0)]["srtui_method"] == "pyoperon"


def test_the_figure_shows_the_workspace_among_the_21(qual_workspace: Path) -> None:
    proc = srtui(
        "score", "srbench2021", "--suite", "mine", "--published", "--format", "plot", "-w", str(qual_workspace)
    )
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "Pareto fronts" in proc.stdout.splitlines()[0]
    legend = [line.split("  ") for line in proc.stdout.splitlines() if line.startswith("  ") and "front" in line]
    named = {parts[2]: (parts[3], parts[4]) for parts in legend}
    assert len(named) == 23 and len({parts[1] for parts in legend}) == 23  # one letter per method
    assert named["rf"][1] == named["linear"][1] == "this workspace"
    assert {m for m, (front, _) in named.items() if front == "front 0"} >= {"*Operon"}
    assert any(line.startswith("warning: scikit-learn:") for line in proc.stdout.splitlines())
