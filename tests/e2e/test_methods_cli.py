"""`srtui methods list/install/check`, and the default SR methods through `srtui run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from srtui.cli import app

runner = CliRunner()


def _srtui(*args: str, ws=None, timeout=600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if ws is not None:
        env["SRTUI_WORKSPACE"] = str(ws)
    return subprocess.run(
        [sys.executable, "-m", "srtui", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_list_json_names_every_method_with_status_and_licence():
    res = runner.invoke(app, ["methods", "list", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.output)}
    for name in ("linear", "poly2", "pyoperon", "gplearn", "ffx", "rf"):
        assert rows[name]["installed"] and rows[name]["version"], name
    assert rows["pyoperon"]["time_limit"] and not rows["ffx"]["time_limit"]
    assert rows["rf"]["family"] == "blackbox" and rows["gplearn"]["family"] == "sr"
    assert "non-commercial" in rows["feyn"]["licence"]
    for name in ("rils-rols", "hroch", "feyn", "bingo", "itea"):
        assert rows[name]["optional"]
        if not rows[name]["installed"]:
            assert f"srtui methods install {name}" in rows[name]["why_not"]
    assert not any(n.startswith("probe-") for n in rows)


def test_list_table_shows_licence_and_install_hint():
    res = runner.invoke(app, ["methods", "list"])
    assert res.exit_code == 0
    assert "non-commercial" in res.output and "pyoperon" in res.output


def test_install_dry_run_shows_notice_and_steps_and_runs_nothing():
    res = runner.invoke(app, ["methods", "install", "feyn", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "non-commercial" in res.output and "pip install feyn" in res.output
    res = runner.invoke(app, ["methods", "install", "rils-rols", "--dry-run"])
    lines = [ln for ln in res.output.splitlines() if ln.startswith("$ ")]
    assert lines[0].endswith("pip install pybind11 setuptools wheel") and "--no-build-isolation rils-rols" in lines[1]


def test_install_of_builtin_and_unknown_methods():
    res = runner.invoke(app, ["methods", "install", "pyoperon"])
    assert res.exit_code == 0 and "installed with srtui" in res.output
    proc = _srtui("methods", "install", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "srtui: error: unknown method 'nope' (see `srtui methods list`)"


def test_check_runs_a_tiny_fit_through_the_engine(tmp_path):
    proc = _srtui("methods", "check", "poly2", "--json", "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "ok" and out["r2_test"] > 0.999999 and out["fidelity_r2"] > 0.999999
    assert "x0*x1" in out["model"]
    from srtui.engine.process.seal import isolation  # the capability report (#39): which isolation the job had

    assert out["isolation"] == isolation().summary


def test_check_of_unknown_method_fails_cleanly(tmp_path):
    proc = _srtui("methods", "check", "nope", "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2 and "unknown method 'nope'" in proc.stderr


DETERMINISTIC = ("linear", "poly2", "gplearn", "pyoperon", "ffx")
DEFAULT_SR = ("gplearn", "pyoperon", "ffx")


#: the issue task with smoke's seed and scoring but not smoke's [params]: smoke sizes the SR methods
#: by generations (10, for a fast suite, #45); the issue's done-when is about the methods' defaults,
#: whose search the 10 s budget sizes (gplearn's generation cap, pyoperon's time limit)
ISSUE_SUITE = """name = "issue"
tasks = ["smoke-interaction"]
methods = ["linear", "poly2", "gplearn", "pyoperon", "ffx"]
seeds = [2082]
scoring = "srbench2022-synthetic"
[limits]
time_s = 10
mem_mb = 2000
grace_s = 3
"""


def _issue_task_runs(tmp_path, methods, names=("a", "b")):
    """`srtui run` of the issue's task (10 s budget) in fresh workspaces; rows by method per run."""
    suite = tmp_path / "issue.toml"
    suite.write_text(ISSUE_SUITE)
    runs = []
    for name in names:
        ws = tmp_path / name
        run = _srtui(
            "run",
            str(suite),
            "--methods",
            ",".join(methods),
            "--jobs",
            "1",
            "--workspace",
            str(ws),
            ws=ws,
        )
        assert run.returncode == 0, run.stderr
        out = _srtui("results", "--format", "json", "--workspace", str(ws), ws=ws)
        runs.append({r["method"]: r for r in json.loads(out.stdout)})
    return runs


@pytest.mark.slow
def test_default_sr_methods_on_the_issue_task_through_srtui_run(tmp_path):
    """Issue "Methods", done-when: 10 s budget, R2 >= 0.99, fidelity >= 0.999, same seed same model.

    Timing-sensitive by nature (a 10 s wall limit that includes interpreter start-up): run it
    on an otherwise idle machine.
    """
    models: list[dict[str, str]] = []
    problems: list[tuple[object, ...]] = []
    budget_stopped = set()  # on a loaded machine gplearn may stop on its wall budget before its cap
    for rows in _issue_task_runs(tmp_path, DETERMINISTIC):
        for name in DETERMINISTIC:
            r = rows[name]
            if r["status"] != "ok" or (r["fidelity_r2"] or 0) < 0.999:
                problems.append((name, r["status"], r["wall_s"], r["cpu_s"], r["fidelity_r2"], r["limit_detail"]))
            elif name in DEFAULT_SR and r["r2_test"] < 0.99:
                problems.append((name, "r2_test", r["r2_test"], r["model"]))
            if name == "gplearn" and r["method_notes"]["stopped_by"] != "cap":
                # legitimate, and said in its notes, but not reproducible: its models may differ
                assert r["method_notes"]["generations"] < r["method_notes"]["generation_cap"]
                budget_stopped.add(name)
        models.append({n: rows[n]["model"] for n in DETERMINISTIC})
    assert not problems, problems
    same = [n for n in DETERMINISTIC if n not in budget_stopped]
    assert same and {n: models[0][n] for n in same} == {n: models[1][n] for n in same}
