"""Tuned runs end to end: a driver SIGKILLed mid-tuning resumes to one final job per (task,
method, seed) with the configuration its tuning scores choose (both protocols, local backend),
the tuning jobs on the Dask backend, and the Done-when run of linear, ridge, gplearn, pyoperon."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from conftest import poll_db, srtui, start_srtui

from srtui.engine.protocols import best_configuration, halving_best, halving_keep, mean_scores

RIDGE_GRID = "ridge = [{ alphas = [10.0] }, { alphas = [100.0] }, { alphas = [1000.0] }]"
#: the Done-when run's tiny grids: two configurations (2021 searches the grid alone; under 2025 one
#: of them repeats the suite's params, so one configuration besides the defaults)
SR_GRIDS = (
    "gplearn = [{ population_size = 100 }, { population_size = 60 }]\n"
    "pyoperon = [{ max_length = 25 }, { population_size = 50 }]"
)


def _suite(
    tmp_path: Path,
    name: str,
    protocol: str,
    methods: list[str],
    seeds: list[int],
    tasks: list[str],
    extra: str = "",
    grids: str = "",
) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ntasks = {json.dumps(tasks)}\nmethods = {json.dumps(methods)}\n'
        f'seeds = {json.dumps(seeds)}\nprotocol = "{protocol}"\n{extra}\n[tuning.grids]\n{RIDGE_GRID}\n{grids}\n'
    )
    return path


def _tuned_results(workspace: Path, suite: str) -> tuple[list[dict], list[dict]]:
    rows = json.loads(
        srtui("results", "--format", "json", "--tuning", "--workspace", str(workspace), check=True).stdout
    )
    return [r for r in rows if r["suite"] == suite], [r for r in rows if r["suite"] == suite + "@tuning"]


def check_choices(finals: list[dict], tuning: list[dict], protocol: str) -> None:
    """One final per (task, method, seed); its params are the summary's choice, and that choice is
    what the protocol's rule makes of the scores the stored tuning jobs have."""
    assert len({(r["task"], r["method"], r["seed"]) for r in finals}) == len(finals)
    for final in finals:
        summary = final["tuning"]
        if final["method"] == "linear":  # one configuration: no search, no summary
            assert summary is None
            continue
        assert summary is not None and final["params"] == summary["chosen"]
        mine = [
            r for r in tuning if (r["task"], r["method"], r["seed"]) == (final["task"], final["method"], final["seed"])
        ]
        stored = sorted(r["r2_test"] for r in mine if r["status"] == "ok" and r["r2_test"] is not None)
        summarised = sorted(
            s for it in summary["iterations"] for c in it["candidates"] for s in c["fold_r2"] if s is not None
        )
        assert summarised == stored  # every tuning job counted once, with its stored score
        its = summary["iterations"]
        scores = [[c["fold_r2"] for c in it["candidates"]] for it in its]
        params = [[c["params"] for c in it["candidates"]] for it in its]
        if protocol == "srbench2025":
            assert final["params"] == params[0][best_configuration(scores[0])[0]]
            continue
        candidates = list(range(len(params[0])))
        for i in range(len(its) - 1):  # each iteration's candidates are the kept ones of the one before
            kept = halving_keep(candidates, mean_scores(scores[i], 0.0))
            assert [params[i][c] for c in kept] == params[i + 1]
            candidates = list(range(len(kept)))
        assert final["params"] == params[-1][halving_best(candidates, mean_scores(scores[-1], 0.0))]


def _ok_count(workspace: Path) -> int:
    rows = poll_db(workspace, "SELECT count(*) FROM jobs WHERE status = 'ok'")
    return rows[0][0] if rows else 0


@pytest.mark.slow
# 2025: the defaults and 3 configurations; 2021: the 3 configurations (HalvingGridSearchCV's param_grid)
@pytest.mark.parametrize("protocol,n_tuning", [("srbench2025", 2 * 4 * 5), ("srbench2021", 2 * (3 * 5 + 1 * 5))])
def test_a_driver_killed_mid_tuning_resumes_to_one_final_job_each(
    workspace: Path, tmp_path: Path, protocol: str, n_tuning: int
) -> None:
    suite = _suite(tmp_path, "killed", protocol, ["ridge"], [1, 2], ["smoke-interaction"])
    driver = start_srtui("run", str(suite), "--jobs", "2", "--workspace", str(workspace))
    deadline = time.monotonic() + 180
    while _ok_count(workspace) < 6 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    done = _ok_count(workspace)
    assert 6 <= done < n_tuning, f"the tuning ended ({done} jobs ok) before the driver could be killed"
    srtui("run", str(suite), "--jobs", "2", "--workspace", str(workspace), check=True)
    finals, tuning = _tuned_results(workspace, "killed")
    assert len(finals) == 2 and all(r["status"] == "ok" for r in finals)
    assert len(tuning) == n_tuning and all(r["status"] == "ok" for r in tuning)
    check_choices(finals, tuning, protocol)


@pytest.mark.slow
def test_tuning_jobs_run_on_the_dask_backend(workspace: Path, tmp_path: Path) -> None:
    suite = _suite(tmp_path, "dasked", "srbench2021", ["ridge"], [1], ["smoke-linear"])
    srtui(
        "run",
        str(suite),
        "--backend",
        "dask",
        "--cluster",
        "local",
        "--jobs",
        "2",
        "--workspace",
        str(workspace),
        check=True,
    )
    finals, tuning = _tuned_results(workspace, "dasked")
    assert len(finals) == 1 and len(tuning) == 3 * 5 + 1 * 5 and all(r["status"] == "ok" for r in finals + tuning)
    check_choices(finals, tuning, "srbench2021")


DONE_WHEN_LIMITS = """
[limits]
time_s = 60
[params.gplearn]
generations = 3
population_size = 60
[params.pyoperon]
generations = 3
population_size = 50
[tuning.limits]
time_s = 30
"""


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["srbench2025", "srbench2021"])
def test_done_when_linear_ridge_gplearn_pyoperon_on_two_tasks(workspace: Path, tmp_path: Path, protocol: str) -> None:
    methods = ["linear", "ridge", "gplearn", "pyoperon"]
    suite = _suite(
        tmp_path, "dw", protocol, methods, [5], ["smoke-linear", "smoke-interaction"], DONE_WHEN_LIMITS, SR_GRIDS
    )
    srtui("run", str(suite), "--jobs", "2", "--workspace", str(workspace), check=True, timeout=1500)
    finals, tuning = _tuned_results(workspace, "dw")
    assert sorted((r["task"], r["method"]) for r in finals) == sorted(
        (t, m) for t in ("smoke-linear", "smoke-interaction") for m in methods
    )
    assert all(r["status"] == "ok" and r["energy_j"] > 0 and r["energy_method"] for r in finals)
    # every method but linear has a grid to search (SRBench's LinearRegression: fit_intercept (True,))
    assert {r["method"] for r in tuning} == set(methods) - {"linear"}
    check_choices(finals, tuning, protocol)
