"""Like for like (#40): one protocol per run, whatever the method's kind, recorded per job.

A suite with a built-in method (``linear``), a method folder (``mine``, SRBench 2.0's layout) and
a method in its own environment (``sgd-sklearn024``, in the stand-in environment of
tests/e2e/test_methods_environment.py) runs under each protocol; every final job records the same
protocol, scaling, split, cap and tuning. Under srbench2025, fp-newton gives the built-in its
real size (SRBench 2.0 scales X and y for every method), not the 1 that rounding its raw-unit
coefficients gave when only the folder was scaled.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import results_json, srtui
from test_methods_environment import _stand_in

FOLDER = """from sklearn.linear_model import LinearRegression
est = LinearRegression()
def model(est, X):
    return " + ".join([repr(float(est.intercept_))] + [f"{float(c)!r}*{n}" for c, n in zip(est.coef_, X.columns)])
"""
ENV = "sgd-sklearn024"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "regressor.py").write_text(FOLDER)
    return folder


def _record(row: dict) -> dict:
    value = row["protocol"]
    return json.loads(value) if isinstance(value, str) else value


#: protocol -> (task, [tuning] lines): srbench2021 tunes every method over two configurations
#: (halving search), srbench2022 tunes nothing, srbench2025 gives each one configuration
CASES = {
    "srbench2021": (
        "smoke-linear",
        "grids = { linear = [{ fit_intercept = true }, { fit_intercept = false }], "
        "mine = [{ fit_intercept = true }, { fit_intercept = false }], "
        '"sgd-sklearn024" = [{ alpha = 0.01 }, { alpha = 0.001 }] }',
    ),
    "srbench2022": ("smoke-linear", ""),
    "srbench2025": ("fp-newton", 'grids = { linear = [], mine = [], "sgd-sklearn024" = [] }'),
}


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    "protocol",
    # 2021's halving search is 33 jobs: the slow step (the other two are the same path, cheaper)
    [pytest.param("srbench2021", marks=pytest.mark.slow), "srbench2022", "srbench2025"],
)
def test_every_method_kind_runs_under_the_one_protocol_of_the_run(
    protocol: str, workspace: Path, tmp_path: Path
) -> None:
    task, tuning = CASES[protocol]
    folder = _folder(tmp_path)
    _stand_in(tmp_path / "envs")
    suite = tmp_path / "s.toml"
    suite.write_text(
        f'name = "s"\ntasks = ["{task}"]\nmethods = ["linear", "{ENV}"]\nseeds = [1]\n'
        f'protocol = "{protocol}"\n[limits]\ntime_s = 60\n[tuning]\n{tuning}\n'
    )
    env = {"SRTUI_ENVS": str(tmp_path / "envs")}
    run = srtui("run", str(suite), "--method-dir", str(folder), "-w", str(workspace), "--jobs", "2", env=env)
    assert run.returncode == 0, run.stderr
    finals = {r["method"]: r for r in results_json(workspace) if r["suite"] == "s"}
    assert set(finals) == {"linear", "mine", ENV} and all(r["status"] == "ok" for r in finals.values())
    records = {m: _record(r) for m, r in finals.items()}
    fields = ("protocol", "scaling", "split", "cap", "tuning", "seed")
    assert len({tuple(rec[f] for f in fields) for rec in records.values()}) == 1, records
    rec = records["linear"]
    assert rec["protocol"] == protocol and rec["seed"] == 1 and rec["cap"] == "none"
    assert rec["scaling"] == "xy"  # 2021 and 2022: eval_kwargs' defaults; 2025: its commands' flags
    assert rec["split"] == "75/25 per seed"  # 2.0's optimize_model.py splits as 2021's evaluate_model.py
    if protocol == "srbench2021":
        assert rec["tuning"] == "halving search over 2 configurations, 5-fold CV"
        tuned = [r for r in results_json(workspace) if r["suite"] == "s@tuning"]
        assert {r["method"] for r in tuned} == {"linear", "mine", ENV} and len(tuned) == 3 * 2 * 5
    elif protocol == "srbench2022":
        assert rec["tuning"] == "none"
    # one scaling path: the folder's model is mapped back to raw units like the built-in's
    assert finals["mine"]["method_notes"]["model_as_printed"] != finals["mine"]["model"]
    assert finals["mine"]["r2_test"] == pytest.approx(finals["linear"]["r2_test"], abs=1e-9)
    if protocol == "srbench2025":  # the fp-newton case: the built-in keeps its real size
        out = srtui("score", "srbench2025", "--suite", "s", "--format", "json", "-w", str(workspace), check=True)
        pareto = {r["method"]: r["size"] for r in json.loads(out.stdout)["tables"]["pareto"]}
        assert pareto["linear"] == pareto["mine"] > 1 and pareto[ENV] > 1, pareto


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_a_leaderboard_of_two_protocols_is_refused_unless_allowed(workspace: Path, tmp_path: Path) -> None:
    for protocol in ("none", "srbench2022"):
        srtui(
            "run", "smoke", "--methods", "linear,poly2", "--tasks", "smoke-linear", "--protocol", protocol,
            "-w", str(workspace), check=True,
        )  # fmt: skip
    out = srtui("score", "srbench2022-synthetic", "--suite", "smoke", "-w", str(workspace))
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1
    assert "jobs of 2 protocols" in out.stderr and "--allow-mixed" in out.stderr
    plot = srtui("plot", "ranks", "--suite", "smoke", "--out", str(tmp_path / "r.svg"), "-w", str(workspace))
    assert plot.returncode != 0 and "jobs of 2 protocols" in plot.stderr and not (tmp_path / "r.svg").exists()
    mixed = srtui(
        "score", "srbench2022-synthetic", "--suite", "smoke", "--allow-mixed", "--format", "json",
        "-w", str(workspace), check=True,
    )  # fmt: skip
    result = json.loads(mixed.stdout)
    board = result["tables"]["leaderboard"]
    assert board and all(row["protocol"] == "[1] [2]" for row in board)  # every row footnoted
    marks = {n.split(" ", 1)[1].split(" (")[0]: n.split(" ")[0] for n in result["notes"] if n.startswith("[")}
    assert sorted(marks) == ["none", "srbench2022"] and sorted(marks.values()) == ["[1]", "[2]"]
    assert any(
        n.startswith(f"{marks['srbench2022']} srbench2022 (scaling per method, split 75/25") for n in result["notes"]
    )
    # the record is shown where jobs are shown: results, and the report's table per method
    rows = results_json(workspace)
    assert {_record(r)["protocol"] for r in rows} == {"none", "srbench2022"}
    srtui("report", "--out", str(tmp_path / "r.html"), "-w", str(workspace), check=True)
    html = (tmp_path / "r.html").read_text()
    assert "protocol applied" in html and "srbench2022: scaling xy, split 75/25 per seed" in html


def _one_line_error(out) -> str:
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    return out.stderr


def test_suite_file_mistakes_are_one_line_errors_and_patterns_work_on_the_command_line(
    workspace: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "s.toml"
    base = 'name = "s"\ntasks = ["smoke-linear"]\nmethods = ["linear"]\n'
    suite.write_text(base + "seed = [1]\n")
    err = _one_line_error(srtui("run", str(suite), "--dry-run", "-w", str(workspace)))
    assert "unknown key 'seed'; did you mean 'seeds'?" in err
    suite.write_text(base + 'seeds = [1]\nscoring = "srbench2022-synthetc"\n')
    err = _one_line_error(srtui("run", str(suite), "--dry-run", "-w", str(workspace)))
    assert "unknown scoring rule 'srbench2022-synthetc'" in err and "did you mean 'srbench2022-synthetic'" in err
    # the same patterns as in suite files, for tasks and methods
    dry = srtui("run", "smoke", "--tasks", "smoke-*", "--methods", "poly*,lin*", "--dry-run", "-w", str(workspace))
    assert dry.returncode == 0, dry.stderr
    planned = [line.split() for line in dry.stdout.splitlines() if line.startswith("  ") and "seed" in line]
    assert {(p[1], p[2]) for p in planned} == {
        (m, t) for m in ("poly2", "linear") for t in ("smoke-interaction", "smoke-linear")
    }
    err = _one_line_error(srtui("run", "smoke", "--tasks", "nope-*", "--dry-run", "-w", str(workspace)))
    assert "--tasks: task pattern 'nope-*' matches no task" in err
    # srbench2021 fixes its seeds: n_seeds takes its first N, not the competition's
    suite.write_text(base + "n_seeds = 2\n")
    dry = srtui("run", str(suite), "--protocol", "srbench2021", "--dry-run", "-w", str(workspace), check=True)
    seeds = {line.split()[-1] for line in dry.stdout.splitlines() if line.startswith("  ") and "seed" in line}
    assert seeds == {"23654", "15795"}, dry.stdout


def test_a_dry_run_without_data_shows_the_plan_and_the_missing_files(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "no-data"
    empty.mkdir()
    args = ("run", "srbench2025-blackbox", "--tasks", "pmlb-1028-swd,pmlb-192-vineyard", "--methods", "linear,rf")
    dry = srtui(*args, "--seeds", "2", "--dry-run", "-w", str(workspace), env={"SRTUI_DATA_DIR": str(empty)})
    assert dry.returncode == 0, dry.stderr
    assert "protocol srbench2025" in dry.stdout
    assert "linear         4 more job(s) once the data are fetched" in dry.stdout
    assert "pmlb-1028-swd: pmlb/1028_SWD.tsv.gz" in dry.stdout and "pmlb-192-vineyard:" in dry.stdout
    assert "srtui tasks fetch srbench2025-blackbox" in dry.stderr
    run = srtui(*args, "--seeds", "2", "-w", str(workspace), env={"SRTUI_DATA_DIR": str(empty)})
    assert "data files this run reads are missing" in _one_line_error(run)  # a real run is still refused


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_published_ranks_are_over_the_datasets_both_sides_ran(workspace: Path, tmp_path: Path) -> None:
    """A workspace that ran 2 of SRBench 2021's 122 black-box datasets: every method, published or
    not, is ranked over those 2, as a hand computation on the shipped table says."""
    import pandas as pd
    from conftest import shared_data_dir

    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    stems = ("556_analcatdata_apnea2", "579_fri_c0_250_5")
    tasks = [f"srbench2022-qual-{s.replace('_', '-').lower()}" for s in stems]
    suite = tmp_path / "mine.toml"
    suite.write_text(
        f'name = "mine"\ntasks = {json.dumps(tasks)}\nmethods = ["linear"]\nseeds = [1]\nscoring = "srbench2021"\n'
    )
    srtui("run", str(suite), "-w", str(workspace), env={"SRTUI_DATA_DIR": str(data)}, check=True)
    out = srtui("score", "srbench2021", "--suite", "mine", "--published", "--format", "json", "-w", str(workspace))
    result = json.loads(out.stdout)
    board = {r["method"]: r for r in result["tables"]["leaderboard"]}
    # by hand: per dataset the median test R2 (one value per published method, one seed here),
    # rounded to 3 decimals, ranked highest first (ties: the average rank); the median over the 2
    shipped = (
        Path(__file__).parents[2] / "results" / "scoring" / "published" / "data" / "srbench2021-blackbox_results.csv"
    )
    pub = pd.read_csv(shipped)
    pub = pub[pub["dataset"].isin(stems)].rename(columns={"algorithm": "method"})
    pub["task"] = pub["dataset"].map(dict(zip(stems, tasks)))
    mine = pd.DataFrame(
        [(r["task"], r["method"], r["r2_test"]) for r in results_json(workspace)], columns=["task", "method", "r2_test"]
    )
    both = pd.concat([pub[["task", "method", "r2_test"]], mine]).dropna()
    ranks = both.assign(r=both["r2_test"].round(3).groupby(both["task"]).rank(ascending=False))
    expected = ranks.groupby("method")["r"].median()
    assert len(board) == len(expected) == 22
    for method, rank in expected.items():
        assert board[method]["median_rank_r2"] == pytest.approx(rank), method
        assert board[method]["datasets"] == 2, method
    left = result["tables"]["left_out"]
    assert len(left) == 120 and {r["left_out"] for r in left} == {"published, not run here"}
    line = next(w for w in result["warnings"] if w.startswith("datasets:"))
    assert "over the 2 dataset(s) both sides ran; left out: 120 published dataset(s) not run here" in line
    assert out.stderr.count("datasets: ranks, medians and fronts are over the 2 dataset(s)") == 1
    # the same intersection for the figures and the report, with the same warning in the page
    svg = tmp_path / "pareto.svg"
    plot = srtui("plot", "pareto", "--suite", "mine", "--published", "--out", str(svg), "-w", str(workspace))
    assert plot.returncode == 0 and "over the 2 dataset(s) both sides ran" in plot.stderr, plot.stderr
    text = svg.read_text()
    assert "this workspace (1): filled" in text and "published: SRBench 2021 (21): hollow" in text
    assert "Linear = SGDRegressor" in text  # the published spelling kept, with its footnote
    assert "Reference profile (SRBench 2021&#x27;s notebook)" in text or "Reference profile (SRBench 2021's" in text
    assert "profile=corrected" in text and "non-dominated" in text  # the caption names the corrected option
    corrected = tmp_path / "corrected.svg"
    srtui("plot", "pareto", "--suite", "mine", "-o", "profile=corrected", "--out", str(corrected), "-w", str(workspace))
    assert "Reference profile" not in corrected.read_text() and "hollow" not in corrected.read_text()
    html = tmp_path / "r.html"
    srtui("report", "--published", "--out", str(html), "-w", str(workspace), check=True)
    page = html.read_text()
    assert "datasets: ranks, medians and fronts are over the 2 dataset(s) both sides ran" in page
    assert "-o profile=corrected draws complete non-dominated sorting" in page
