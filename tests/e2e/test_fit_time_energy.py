"""Training time (fit alone) and energy per job, end to end through the real CLI."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import results_json, srtui

from srtui.engine.process import energy


def test_fit_s_times_the_fit_alone_not_the_imports(workspace: Path, suite_file, launcher: str) -> None:
    suite = suite_file(name="fit-time", methods=("linear",), seeds=(1, 2))
    srtui("run", str(suite), "--workspace", str(workspace), "--launcher", launcher, check=True)
    rows = results_json(workspace)
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    for row in rows:
        # LinearRegression on a small task takes milliseconds, tens of them on a loaded machine
        assert row["fit_s"] is not None and 0 < row["fit_s"] < 0.5, row["fit_s"]
        assert row["wall_s"] > row["fit_s"], (row["wall_s"], row["fit_s"])
        if launcher == "exec":
            # an exec'd job starts Python and imports scikit-learn (most of a second) inside its
            # wall time; a forked one inherits them from its server, so only exec shows the gap
            assert row["wall_s"] > row["fit_s"] * 5, (row["wall_s"], row["fit_s"])


def test_preload_defaults_to_the_top_level_modules_of_the_required_distributions() -> None:
    from srtui.engine.methods import registry
    from srtui.engine.methods.base import _top_level_modules

    assert _top_level_modules(("scikit-learn", "no-such-distribution-xyz")) == ["sklearn"]
    assert registry.load("linear").preload() == []  # every named module imports


def test_every_ok_job_has_energy_and_its_method(workspace: Path, suite_file) -> None:
    suite = suite_file(name="energy", tasks=("smoke-linear", "smoke-interaction"), methods=("linear", "probe-noop"))
    srtui("run", str(suite), "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    for row in rows:
        assert row["energy_method"] in ("rapl", "estimate")
        assert row["energy_j"] > 0
        if row["energy_method"] == "estimate":
            # the fit's share of the job: at most the whole job's CPU time and peak memory
            whole_job = (
                row["cpu_s"] * energy.cpu_watts_per_core()
                + energy.RAM_W_PER_GIB * row["peak_rss_mb"] / 1024 * row["wall_s"]
            )
            assert row["energy_j"] < whole_job
    csv_out = srtui("results", "--workspace", str(workspace), check=True).stdout
    assert "energy_j" in csv_out.splitlines()[0] and "energy_method" in csv_out.splitlines()[0]
    exported = srtui("export", "--format", "csv", "--workspace", str(workspace), check=True).stdout
    header = next(line for line in exported.splitlines() if not line.startswith("#"))
    assert {"fit_s", "energy_j", "energy_method"} <= set(header.split(","))


def _domain(path: Path, name: str, uj: int, wrap: int = 2**32) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "name").write_text(name + "\n")
    (path / "energy_uj").write_text(f"{uj}\n")
    (path / "max_energy_range_uj").write_text(f"{wrap}\n")


def test_rapl_counters_are_attributed_by_the_job_s_cpu_share(tmp_path: Path) -> None:
    # the machine has no RAPL: a powercap tree of the kernel's layout stands in for it
    root = tmp_path / "powercap"
    _domain(root / "intel-rapl:0", "package-0", 2**32 - 10_000_000)  # wraps during the job
    _domain(root / "intel-rapl:0" / "intel-rapl:0:0", "core", 7)
    _domain(root / "intel-rapl:0" / "intel-rapl:0:1", "dram", 1_000_000)
    _domain(root / "intel-rapl-mmio:0", "package-0", 5)  # a duplicate view: ignored
    energy._domains.cache_clear()
    begin = replace(energy.start(root), busy_s=100.0)
    (root / "intel-rapl:0" / "energy_uj").write_text(f"{30_000_000}\n")  # 40 J later
    (root / "intel-rapl:0" / "intel-rapl:0:1" / "energy_uj").write_text(f"{5_000_000}\n")  # 4 J
    end = replace(energy.start(root), busy_s=104.0)
    joules, method = energy.finish(begin, 1.0, 3.0, 512.0, root, end=end)
    assert method == "rapl"
    assert joules == pytest.approx((40 + 4) * 1.0 / 4.0)  # the job used 1 of the 4 busy CPU seconds


def test_unreadable_rapl_falls_back_to_the_estimate(tmp_path: Path) -> None:
    root = tmp_path / "powercap"
    _domain(root / "intel-rapl:0", "package-0", 1)
    # unreadable, as the root-only counters of kernels since 2020 are (chmod cannot show it to root)
    (root / "intel-rapl:0" / "energy_uj").unlink()
    (root / "intel-rapl:0" / "energy_uj").mkdir()
    energy._domains.cache_clear()
    begin = energy.start(root)
    assert begin.cpu_uj is None
    joules, method = energy.finish(begin, 2.0, 4.0, 1024.0, root)
    assert method == "estimate"
    assert joules == pytest.approx(2.0 * energy.cpu_watts_per_core() + energy.RAM_W_PER_GIB * 1.0 * 4.0)
    assert energy.finish(begin, None, 4.0, None, root) == (None, None)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_results_summary_gives_median_energy_and_training_time_per_method(workspace: Path, suite_file) -> None:
    import json
    import statistics

    suite = suite_file(
        name="summary", methods=("linear", "probe-sleep"), seeds=(1, 2, 3), params={"probe-sleep": {"seconds": 0.3}}
    )
    srtui("run", str(suite), "--jobs", "2", "--workspace", str(workspace), check=True)
    rows = results_json(workspace)
    out = srtui("results", "--summary", "--format", "json", "--workspace", str(workspace), check=True)
    summary = {r["method"]: r for r in json.loads(out.stdout)}
    assert set(summary) == {"linear", "probe-sleep"}
    for method, got in summary.items():
        mine = [r for r in rows if r["method"] == method and r["status"] == "ok"]
        assert got["ok"] == got["jobs"] == len(mine) == 3
        assert got["suite"] == "summary" and got["median_r2_test"] == statistics.median(r["r2_test"] for r in mine)
        assert got["median_energy_j"] == statistics.median(r["energy_j"] for r in mine)
        assert got["median_energy_kwh"] * 3.6e6 == pytest.approx(got["median_energy_j"])
        assert got["median_fit_s"] == statistics.median(r["fit_s"] for r in mine)
        assert got["energy_method"] in ("rapl", "estimate")
    # a sleeping fit is long, yet draws far less than a busy core
    sleep = summary["probe-sleep"]
    assert sleep["median_fit_s"] >= 0.3
    assert sleep["median_energy_j"] / sleep["median_fit_s"] < 0.5 * energy.cpu_watts_per_core()
    csv_out = srtui("results", "--summary", "--workspace", str(workspace), check=True).stdout.splitlines()
    assert (
        csv_out[0] == "suite,method,jobs,ok,median_r2_test,median_energy_kwh,median_energy_j,median_fit_s,energy_method"
    )
    assert len(csv_out) == 3


def test_method_medians_reports_mixed_measurements_and_skips_unmeasured_runs() -> None:
    import pandas as pd

    from srtui.results.scoring.resources import method_medians

    runs = pd.DataFrame(
        {
            "method": ["a", "a", "a", "b", "b"],
            "energy_j": [1.0, 3.0, None, 10.0, 20.0],
            "energy_method": ["rapl", "estimate", None, "estimate", "estimate"],
            "fit_s": [0.1, 0.3, 9.0, 1.0, 2.0],
        }
    )
    table = method_medians(runs)
    assert list(table["method"]) == ["b", "a"]  # highest median energy first
    a = table.set_index("method").loc["a"]
    assert a["runs"] == 2 and a["median_energy_j"] == 2.0 and a["median_fit_s"] == pytest.approx(0.2)
    assert a["energy_method"] == "estimate+rapl"
    with pytest.raises(ValueError, match="fit_s"):
        method_medians(runs.drop(columns="fit_s"))
