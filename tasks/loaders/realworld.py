"""SRBench 2022 real-world track: the official New York State files, and NYC through the pipeline.

``srbench2022-realworld-{cases,hosp,deaths}``: the competition's own feature files (14-day lag and
horizon) with their train/test split and dates. ``nyc-covid-{cases,hosp,deaths}``: NYC's daily
counts put through ``srtui.tasks.pipeline`` (the same features, built here).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only; pandas is imported where it is used
    import pandas as pd

from srtui.tasks import cache
from srtui.tasks.build import make_task
from srtui.tasks.catalogue import TaskContext, TaskError
from srtui.tasks.datafiles import RemoteFile, locate
from srtui.tasks.model import Task
from srtui.tasks.pipeline import PipelineError, forecast_table

VERSION = "1"
TRACK = "srbench2022-realworld"
BASE = "https://raw.githubusercontent.com/cavalab/srbench/srcomp/competition-2022/experiment/data/stage2/data/"
TARGETS = ("cases", "hosp", "deaths")
NYC = RemoteFile(
    "nyc-covid/data-by-day.csv",
    "https://raw.githubusercontent.com/nychealth/coronavirus-data/master/trends/data-by-day.csv",
)
NYC_COLUMNS = {"CASE_COUNT": "cases", "HOSPITALIZED_COUNT": "hosp", "DEATH_COUNT": "deaths"}


def official_file(target: str, part: str) -> RemoteFile:
    name = f"135_NY_value_{target}_14_14_{part}.csv"
    return RemoteFile(f"srbench2022/realworld/{name}", BASE + name)


def official(target: str, context: TaskContext) -> Task:
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    parts, prov = {}, {}
    for part in ("train", "test"):
        path, prov[part] = locate(official_file(target, part), context)
        parts[part] = pd.read_csv(path.stream())
    target_col = f"value_{target}"
    for part, df in parts.items():
        if target_col not in df.columns or "date" not in df.columns:
            raise TaskError(f"{prov[part]['file']}: expected columns 'date' and {target_col!r}")
    full = pd.concat([parts["train"].assign(_train=True), parts["test"].assign(_train=False)])
    full = full.sort_values("date", kind="stable").reset_index(drop=True)
    features = [c for c in full.columns if c not in ("date", target_col, "_train")]
    idx = np.arange(len(full))
    return make_task(
        f"srbench2022-realworld-{target}",
        TRACK,
        features,
        target_col,
        full[features].to_numpy(dtype=float),
        full[target_col].to_numpy(dtype=float),
        idx[full["_train"].to_numpy()],
        idx[~full["_train"].to_numpy()],
        dates=full["date"].astype(str).to_numpy(),
        difficulty="real-world",
        split="the competition's split: alternating 5-week train / 3-week test chunks",
        property="trust",
        provenance={
            "source": "SRBench 2022 competition, stage 2 (New York State COVID-19)",
            "files": [prov["train"], prov["test"]],
        },
        description=f"Forecast New York State daily {target} 14 days ahead (official competition features).",
    )


def nyc_counts(context: TaskContext) -> tuple[pd.DataFrame, dict[str, str]]:
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    path, prov = locate(NYC, context)
    raw = pd.read_csv(path.stream())
    missing = [c for c in ["date_of_interest", *NYC_COLUMNS] if c not in raw.columns]
    if missing:
        raise TaskError(f"{path}: missing columns {missing}")
    counts = raw[list(NYC_COLUMNS)].rename(columns=NYC_COLUMNS).astype(float)
    counts.index = pd.to_datetime(raw["date_of_interest"], format="%m/%d/%Y")
    return counts, prov


def nyc(target: str, context: TaskContext) -> Task:
    counts, prov = nyc_counts(context)
    try:
        table = forecast_table(counts, target)
    except PipelineError as exc:
        raise TaskError(f"nyc-covid: {exc}") from None
    return table.task(
        f"nyc-covid-{target}",
        TRACK,
        difficulty="real-world",
        provenance={
            "source": "NYC Department of Health, nychealth/coronavirus-data",
            "file": prov,
            "pipeline": "srtui.tasks.pipeline.forecast_table (lags 14..27, horizon 14, no policy flags)",
        },
        description=f"Forecast New York City daily {target} 14 days ahead (srtui's pipeline on NYC counts).",
    )


for _t in TARGETS:
    cache.register_loaded(
        f"srbench2022-realworld-{_t}",
        TRACK,
        VERSION,
        partial(official, _t),
        f"New York State {_t}, 14-day horizon (official files)",
        tuple(official_file(_t, part) for part in ("train", "test")),
    )
    cache.register_loaded(
        f"nyc-covid-{_t}",
        TRACK,
        VERSION,
        partial(nyc, _t),
        f"New York City {_t} through the real-world pipeline",
        (NYC,),
    )
