"""Reading a published file into rows of the runs table (srtui.results.scoring.tables), with its names mapped.

Shipped tables are read from ``data/``; feathers are found under ``--data-dir``, SRTUI_DATA_DIR or
the workspace cache, else downloaded once into the cache (srtui.tasks.datafiles: the project's one
download, sha256 checked against the LFS pointer). Feathers need pyarrow (extra ``published``).
Every file is read once, through the one bounded reader (srtui.engine.untrusted.read_file: no link, no
FIFO or device, its size checked before reading), and parsed from the bytes read (and hashed):
never opened again by its path.
"""

from __future__ import annotations

import importlib
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.results.scoring.published import names
from srtui.results.scoring.published.sources import DATA, LFS_BASE, PublishedFile
from srtui.results.scoring.resources import J_PER_KWH

if TYPE_CHECKING:
    from srtui.tasks.datafiles import Verified

MIRROR_ENV = "SRTUI_PUBLISHED_MIRROR"  # a mirror of LFS_BASE (same layout: BRANCH/PATH)
MAX_BYTES = 512 << 20  # a published file larger than this is not read (the largest is 79 MB)
#: published column -> runs-table column
_RENAME = {
    "algorithm": "method",
    "random_state": "seed",
    "model_size": "size",
    "simplified_complexity": "size_simplified",
    "target_noise": "noise",
    "training time (s)": "fit_s",
}


class PublishedError(SrtuiError, ValueError):
    """A published source that cannot be read; one line for the CLI."""


def _feather(found: Verified) -> pd.DataFrame:
    try:
        importlib.import_module("pyarrow")  # pandas reads feathers through it
    except ImportError:
        raise PublishedError(
            f"reading {found.path.name} needs pyarrow: install srtui's extra 'published' "
            "(pip install 'srtui[published]')"
        ) from None
    try:
        return pd.read_feather(found.stream())
    except (OSError, ValueError) as exc:
        raise PublishedError(f"{found} is not a readable feather file: {' '.join(str(exc).split())[:200]}") from None


def load(path: Path) -> Verified:
    """A published file given by its path (shipped, or the user's ``--published FILE``) read
    through the one bounded reader, at most MAX_BYTES; one line (PublishedError) otherwise."""
    from srtui.engine.untrusted import UntrustedFileError, read_file
    from srtui.tasks.datafiles import Verified

    try:
        return Verified(path, read_file(path, MAX_BYTES))
    except UntrustedFileError as exc:
        raise PublishedError(f"refusing {exc}") from None
    except OSError as exc:
        raise PublishedError(f"{path} cannot be read: {exc.strerror or exc}") from None


def locate(pf: PublishedFile, cache_dir: Path | None, data_dir: Path | None) -> Verified:
    """The bytes of a published file (as hashed, when a checksum is known): shipped, the user's
    file, found in a data directory, or downloaded."""
    if pf.shipped:
        return load(DATA / pf.shipped)
    if not pf.branch:  # the user's own file (--published FILE)
        return load(Path(pf.path))
    from srtui.tasks.catalogue import TaskContext
    from srtui.tasks.datafiles import RemoteFile
    from srtui.tasks.datafiles import locate as find

    url = pf.url.replace(LFS_BASE, os.environ[MIRROR_ENV].rstrip("/") + "/") if os.environ.get(MIRROR_ENV) else pf.url
    remote = RemoteFile(pf.rel, url, sha256=pf.sha256 or None)
    found, _ = find(remote, TaskContext(cache_dir=cache_dir, data_dir=data_dir))
    if len(found.data) > MAX_BYTES:
        raise PublishedError(f"{found} is larger than {MAX_BYTES >> 20} MB: not a published SRBench file")
    return found


def read_file(found: Verified) -> pd.DataFrame:
    """A published table (.csv) or per-run results (.feather) as it is, parsed from the bytes
    ``locate`` read (never from the path again)."""
    if found.path.suffix == ".feather":
        return _feather(found)
    try:
        return pd.read_csv(io.BytesIO(found.data))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise PublishedError(f"{found} is not a readable CSV file: {' '.join(str(exc).split())[:200]}") from None


def rows(raw: pd.DataFrame, track: str, release: str, per_run: bool) -> pd.DataFrame:
    """Published rows in the runs table's columns: ``task`` mapped (an unmapped dataset keeps its
    published name), ``dataset`` the published name, ``srtui_method`` the mapped method."""
    df = raw.rename(columns={k: v for k, v in _RENAME.items() if k in raw.columns})
    if not {"method", "dataset"} <= set(df.columns):
        raise PublishedError("a published table needs the columns algorithm and dataset")
    df = df.copy()
    if "symbolic_solution_rate_(%)" in df.columns:  # groundtruth.csv: a rate per dataset and noise
        df["symbolic_solution"] = df["symbolic_solution_rate_(%)"] / 100
    if "symbolic_solution" in df.columns:
        df["symbolic_solution"] = df["symbolic_solution"].astype(float)
    if "r2_test" not in df.columns:
        df["r2_test"] = np.nan
    if "seed" not in df.columns:
        df["seed"] = 0
    noise = df["noise"].astype(float) if "noise" in df.columns else pd.Series(0.0, index=df.index)
    df["noise"] = noise
    df["method"], df["dataset"] = df["method"].astype(str), df["dataset"].astype(str)
    tasks = {(d, n): names.task(track, d, release, n) for d, n in set(zip(df["dataset"], noise))}
    df["task"] = [tasks[(d, n)].srtui or d for d, n in zip(df["dataset"], noise)]
    methods = {m: names.method(m, release).srtui for m in df["method"].unique()}
    df["srtui_method"] = df["method"].map(methods)
    df["status"] = "ok"
    df["per_run"] = per_run
    if "fit_s" in df.columns:
        df["wall_s"] = df["fit_s"]
    return df


def energy_rows(raw: pd.DataFrame) -> pd.DataFrame:
    """power_consumption.feather: eco2AI's kWh of each run, as ``energy_j`` keyed like the runs."""
    df = raw.rename(columns={k: v for k, v in _RENAME.items() if k in raw.columns})
    need = {"method", "dataset", "seed", "power_consumption(kWh)"}
    if not need <= set(df.columns):
        raise PublishedError(f"power_consumption needs the columns {', '.join(sorted(need))}")
    out = df[["method", "dataset", "seed"]].astype({"method": str, "dataset": str})
    out = out.assign(energy_j=df["power_consumption(kWh)"].astype(float) * J_PER_KWH, energy_method="eco2ai")
    return out.drop_duplicates(["method", "dataset", "seed"], keep="last")
