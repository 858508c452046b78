"""What the methods cost: median energy and median training time of a single run, per method.

SRBench 2.0's Figure 1 (``postprocessing/notebooks/power_consumption.ipynb``) plots, per
algorithm, the median over single runs (every dataset x seed) of eco2AI's
``power_consumption(kWh)``, and the training time measured around ``fit``. Here the runs are
rows of ``srtui.results.scoring.tables.runs_frame``: ``energy_j`` and ``fit_s`` are both of the fit alone
(see srtui.engine.process.energy and srtui.engine.process.job_worker), and only runs that finished carry them.
"""

from __future__ import annotations

import pandas as pd

J_PER_KWH = 3.6e6
COLUMNS = ("method", "runs", "median_energy_kwh", "median_energy_j", "median_fit_s", "energy_method")
#: `srtui results --summary`: per suite and method, accuracy first, then what a run cost
SUMMARY_COLUMNS = ("suite", "method", "jobs", "ok", "median_r2_test", *COLUMNS[2:])


def method_medians(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per method with a figure, highest median energy first (the figure's order).

    ``runs`` counts the runs with an energy figure; ``energy_method`` is ``rapl``,
    ``estimate`` or both joined by ``+`` when runs of one method were measured differently
    (e.g. spread over machines with and without RAPL)."""
    missing = {"method", "energy_j", "energy_method", "fit_s"} - set(runs.columns)
    if missing:
        raise ValueError(f"runs lack the column(s) {', '.join(sorted(missing))}")
    measured = runs[runs["energy_j"].notna()]
    if measured.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    energy = pd.to_numeric(measured["energy_j"])
    grouped = measured.assign(energy_j=energy, fit_s=pd.to_numeric(measured["fit_s"])).groupby("method")
    out = pd.DataFrame(
        {
            "runs": grouped.size(),
            "median_energy_j": grouped["energy_j"].median(),
            "median_fit_s": grouped["fit_s"].median(),
            "energy_method": grouped["energy_method"].agg(lambda s: "+".join(sorted(set(s.dropna())))),
        }
    )
    out["median_energy_kwh"] = out["median_energy_j"] / J_PER_KWH
    out = out.reset_index().sort_values(["median_energy_j", "method"], ascending=[False, True])
    return out[list(COLUMNS)].reset_index(drop=True)


def suite_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per suite and method (suites apart: their tasks differ): its jobs, the finished
    (``ok``) ones, their median test R2, then ``method_medians``' figures of a single run; the
    methods of a suite by median R2, best first."""
    parts = []
    for suite, frame in runs.groupby("suite", sort=True):
        ok = frame[frame["status"] == "ok"]
        counts = pd.DataFrame(
            {
                "jobs": frame.groupby("method").size(),
                "ok": ok.groupby("method").size(),
                "median_r2_test": pd.to_numeric(ok["r2_test"]).groupby(ok["method"]).median(),
            }
        )
        costs = method_medians(frame).drop(columns="runs").set_index("method")
        table = counts.join(costs).rename_axis("method").reset_index()
        table["ok"] = table["ok"].fillna(0).astype(int)
        table = table.sort_values(["median_r2_test", "method"], ascending=[False, True], na_position="last")
        parts.append(table.assign(suite=suite))
    if not parts:
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    return pd.concat(parts, ignore_index=True)[list(SUMMARY_COLUMNS)]
