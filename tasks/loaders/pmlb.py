"""PMLB datasets: SRBench 2022 qualification, SRBench 2.0 black-box and first-principles measurements,
and PMLB's own Feynman/Strogatz files (a download option beside srtui's regenerated ones).

All are read from ``NAME.tsv.gz`` (tab-separated, target column ``target``) with SRBench's random
75/25 split, seeded by the task name; their numbers exactly, or under a protocol that says so as
pandas 1.x parsed them (``TaskContext.parse``, ``srtui.tasks.loaders.pandas1``). Column names are
sanitised into Python identifiers; the mapping is kept in the provenance.
"""

from __future__ import annotations

from typing import Any

from srtui.tasks import cache
from srtui.tasks.build import make_task, shuffled_split, stable_seed
from srtui.tasks.catalogue import TaskContext
from srtui.tasks.datafiles import RemoteFile, locate
from srtui.tasks.generators.groundtruth import problems
from srtui.tasks.loaders import pmlb_files
from srtui.tasks.loaders.tables import numeric_xy, read_table, sanitise_names
from srtui.tasks.model import Task

VERSION = "1"
SRCOMP_BASE = "https://raw.githubusercontent.com/cavalab/srbench/srcomp/competition-2022/experiment/data/stage0/"

QUALIFICATION = (
    "197_cpu_act",
    "215_2dplanes",
    "218_house_8L",
    "225_puma8NH",
    "227_cpu_small",
    "294_satellite_image",
    "556_analcatdata_apnea2",
    "557_analcatdata_apnea1",
    "564_fried",
    "573_cpu_act",
    "579_fri_c0_250_5",
    "581_fri_c3_500_25",
    "582_fri_c1_500_25",
    "584_fri_c4_500_25",
    "586_fri_c3_1000_25",
    "590_fri_c0_1000_50",
    "593_fri_c1_1000_10",
    "595_fri_c0_1000_10",
    "654_fri_c0_500_10",
    "666_rmftsa_ladata",
)
#: SRBench 2.0's black-box selection (as listed in its paper; see the report on verifying it)
BLACKBOX = (
    "1028_SWD",
    "1089_USCrime",
    "1193_BNG_lowbwt",
    "1199_BNG_echoMonths",
    "192_vineyard",
    "210_cloud",
    "522_pm10",
    "557_analcatdata_apnea1",
    "579_fri_c0_250_5",
    "606_fri_c2_1000_10",
    "650_fri_c0_500_50",
    "678_visualizing_environmental",
)
#: first-principles datasets that are real measurements (the generated ones are regenerated here)
FIRST_PRINCIPLES_REAL = (
    "absorption",
    "bode",
    "hubble",
    "kepler",
    "leavitt",
    "supernovae_zg",
    "supernovae_zr",
    "tully_fisher",
)


def kebab(dataset: str) -> str:
    return dataset.replace("_", "-").lower()


def pmlb_file(dataset: str) -> RemoteFile:
    """PMLB's file, pinned and checksummed by the manifest (``srtui.tasks.loaders.pmlb_files``)."""
    return pmlb_files.remote(dataset)


def qualification_file(dataset: str) -> RemoteFile:
    return RemoteFile(f"srbench2022/qualification/{dataset}.tsv.gz", f"{SRCOMP_BASE}{dataset}.tsv.gz")


def load(name: str, track: str, remote: RemoteFile, context: TaskContext, **fields: Any) -> Task:
    fields = dict(fields)
    path, prov = locate(remote, context)
    df = read_table(path, sep="\t", parse=context.parse)
    columns, X, y = numeric_xy(df, "target", str(path))
    mapping = sanitise_names(columns)
    train, test = shuffled_split(len(y), 0.75, stable_seed(name, "split"))
    names = [mapping[c] for c in columns]
    truth = fields.pop("ground_truth", None)
    if truth is not None and sorted(names) != sorted(fields.pop("truth_features")):
        truth = None  # the file's columns are not the formula's variables: no ground truth to offer
    fields.pop("truth_features", None)
    extra = fields.pop("provenance", {})
    return make_task(
        name,
        track,
        names,
        "target",
        X,
        y,
        train,
        test,
        ground_truth=truth,
        split="random 75/25 (seeded by the task name)",
        provenance={"source": "PMLB", **extra, **prov, "renamed_columns": {k: v for k, v in mapping.items() if k != v}},
        **fields,
    )


def add(name: str, track: str, remote: RemoteFile, summary: str, **fields: Any) -> None:
    """Register a task read from one PMLB-shaped file (built on demand, cached)."""

    def build(ctx: TaskContext) -> Task:
        return load(name, track, remote, ctx, **fields)

    cache.register_loaded(name, track, VERSION, build, summary, (remote,), by_parse=True)


for _d in QUALIFICATION:
    add(
        f"srbench2022-qual-{kebab(_d)}",
        "srbench2022-qualification",
        qualification_file(_d),
        f"PMLB {_d}: the qualification rule is to beat LinearRegression",
        difficulty="qualification",
        description=f"SRBench 2022 qualification dataset {_d}; beat LinearRegression.",
    )
for _d in BLACKBOX:
    add(
        f"pmlb-{kebab(_d)}",
        "srbench2025-blackbox",
        pmlb_file(_d),
        f"PMLB {_d} (black-box)",
        difficulty="black-box",
        description=f"PMLB black-box regression dataset {_d}.",
    )
for _d in FIRST_PRINCIPLES_REAL:
    add(
        f"pmlb-first-principles-{kebab(_d)}",
        "srbench2025-firstprinciples",
        pmlb_file(f"first_principles_{_d}"),
        f"PMLB first_principles_{_d} (real measurements)",
        difficulty="measured",
        description=f"First-principles law from real measurements: {_d}.",
    )
for _p, _meta in problems().items():
    add(
        f"pmlb-{kebab(_p)}",
        "srbench-groundtruth-pmlb",
        pmlb_file(_p),
        f"PMLB's own {_p} file",
        difficulty=_meta["family"],
        property="exact_rediscovery",
        ground_truth=_meta["formula"],
        truth_features=_meta["features"],
        description=f"PMLB's copy of {_p} (formula {_meta['formula']}); features renamed as in provenance.",
    )
