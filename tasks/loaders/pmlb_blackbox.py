"""SRBench 2021's black-box track: the 122 PMLB regression datasets of its published table.

``BLACKBOX_2021`` is the ``dataset`` column of SRBench's ``docs/csv/blackbox_results.csv``; each
task ``srbench2021-bb-<kebab>`` reads PMLB's file at the commit the manifest pins it to
(``srtui.tasks.loaders.pmlb_files``), checked against PMLB's sha256. Run them as SRBench 2021 did with the
suite ``srbench2021-blackbox`` (protocol ``srbench2021``: its seeds, 75/25 split per seed, training
cap, scaling and halving-grid tuning; see ``docs/tasks-blackbox.md``).
"""

from __future__ import annotations

from srtui.tasks.loaders import pmlb_files
from srtui.tasks.loaders.pmlb import QUALIFICATION, add, kebab

TRACK = "srbench2021-blackbox"
BLACKBOX_2021: tuple[str, ...] = tuple(pmlb_files.manifest()["srbench2021_blackbox"])


def task_name(pmlb: str) -> str:
    """``1028_SWD`` -> ``srbench2021-bb-1028-swd``."""
    return f"srbench2021-bb-{kebab(pmlb)}"


def _register(dataset: str) -> None:
    meta = pmlb_files.info(dataset)
    shape = f"{meta['rows']} rows, {meta['features']} features" if "rows" in meta else "shape unknown"
    # the qualification files srtui already knows are the same bytes (same sha256): read them in place
    extra = (f"srbench2022/qualification/{dataset}.tsv.gz",) if dataset in QUALIFICATION else ()
    add(
        task_name(dataset),
        TRACK,
        pmlb_files.remote(dataset, *extra),
        f"PMLB {dataset} ({shape}; SRBench 2021 black-box)",
        difficulty="black-box",
        description=f"PMLB regression dataset {dataset}, one of SRBench 2021's 122 black-box datasets ({shape}).",
        provenance={
            "pmlb": dataset,
            "pmlb_commit": meta["commit"],
            "rows": meta.get("rows"),
            "features": meta.get("features"),
        },
    )


for _d in BLACKBOX_2021:
    _register(_d)
