"""Name maps: published dataset and method names to srtui's tasks and methods.

Datasets
  black-box (2021): PMLB name -> ``srbench2021-bb-<kebab>`` (``1028_SWD`` -> ``srbench2021-bb-1028-swd``).
  black-box (2.0): PMLB name -> ``pmlb-<kebab>`` for srtui's 12 SRBench 2.0 black-box tasks.
  ground-truth: ``feynman_I_10_7`` + ``target_noise`` 0.01 -> ``feynman-i-10-7-noise0.01`` (srtui's
  regenerated problems, srtui.tasks.generators.groundtruth).
  first-principles: ``first_principles_<law>`` -> ``pmlb-first-principles-<law>`` (measured) or
  ``fp-<law>`` (generated).
  A workspace task built from the same PMLB file (its provenance names it) stands for the dataset
  too (srtui.results.scoring.published.merge).

Methods
  The published spelling is cleaned as SRBench's collate scripts clean it (a leading ``*`` marks an
  SR method; ``tuned.``/``tuned`` prefixes and a ``Regressor`` suffix are dropped), then looked up
  per release: the 2021 ``Linear`` is SRBench's tuned SGDRegressor renamed by
  ``collate_blackbox_results.py`` (-> ``sgd``), while 2.0's ``Linear`` is ``sklearn_linear``
  (LinearRegression, -> ``linear``). A name srtui has no method for maps to None with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NO_ADAPTER = "no srtui adapter: run SRBench's own method folder with `srtui run --method-dir`"

#: cleaned name -> srtui method, the same in every release
_COMMON = {
    "Operon": "pyoperon",
    "gplearn": "gplearn",
    "FFX": "ffx",
    "ITEA": "itea",
    "Lasso": "lasso",
    "Ridge": "ridge",
    "RandomForest": "rf",
    "RF": "rf",
    "MLP": "mlp",
    "QLattice": "feyn",
    "Bingo": "bingo",
    "Rils-Rols": "rils-rols",
    "SGD": "sgd",
}
_BY_RELEASE = {
    "srbench2021": {"Linear": "sgd"},  # SGDRegressor, renamed 'Linear' by collate_blackbox_results.py
    "srbench2025": {"Linear": "linear"},  # improving_names.py: sklearn_linear -> Linear
}
#: cleaned name -> why it maps to no srtui method
UNMAPPED = {
    "AdaBoost": "no built-in AdaBoost baseline in srtui",
    "adaboost": "no built-in AdaBoost baseline in srtui",
    "KernelRidge": "no built-in kernel ridge baseline in srtui",
    "LGBM": "LightGBM is not a built-in srtui method (SRBench's folder runs with --method-dir)",
    "LightGBM": "LightGBM is not a built-in srtui method (SRBench's folder runs with --method-dir)",
    "XGB": "XGBoost is not a built-in srtui method (SRBench's folder runs with --method-dir)",
    **{
        name: NO_ADAPTER
        for name in (
            "AFP",
            "AFP_EHC",
            "AFP_FE",
            "AIFeynman",
            "BSR",
            "Brush",
            "DSR",
            "E2E",
            "EPLEX",
            "EQL",
            "FEAT",
            "Genetic Engine",
            "Genetic Engine 1p1",
            "Genetic Engine hc",
            "Genetic Engine rs",
            "GP-GOMEA",
            "GPZGD",
            "MRGP",
            "NeSymRes",
            "PS-Tree",
            "PYSR",
            "SBP-GP",
            "TIR",
            "TPSR",
            "uDSR",
        )
    },
}
#: the names SRBench 2.0's improving_names.py can produce (its feathers are not shipped: the
#: maps are tested on this list)
SRBENCH2025_NAMES = (
    "AFP", "AFP_EHC", "AFP_FE", "Bingo", "Brush", "BSR", "E2E", "EPLEX", "EQL", "FEAT", "FFX",
    "Genetic Engine", "Genetic Engine 1p1", "Genetic Engine hc", "Genetic Engine rs", "GP-GOMEA",
    "gplearn", "GPZGD", "ITEA", "LightGBM", "NeSymRes", "Operon", "PS-Tree", "PYSR", "QLattice",
    "Rils-Rols", "adaboost", "Lasso", "Linear", "MLP", "RF", "Ridge", "SGD", "TIR", "TPSR", "uDSR", "XGB",
)  # fmt: skip


@dataclass(frozen=True)
class Mapped:
    published: str
    srtui: str | None  # None: srtui has no such method / task
    reason: str = ""


#: published names that do not say what ran: each gets a footnote wherever it is drawn
FOOTNOTES = {"Linear": "Linear = SGDRegressor (SRBench 2021's tuned SGD, renamed by its collating script)"}


def footnotes(published: dict[str, str]) -> list[str]:
    """The footnotes of the published names among ``published`` (method -> source label)."""
    return [FOOTNOTES[m] for m in sorted(published) if m in FOOTNOTES]


def clean_method(name: str) -> str:
    """SRBench's own clean-up of a method's name (collate_*.py, improving_names.py)."""
    out = name.strip().lstrip("*")
    for prefix in ("tuned.", "tuned"):
        if out.startswith(prefix):
            out = out[len(prefix) :]
    return out.replace("Regressor", "")


#: SRBench 2.0's folder names -> the names its results carry (postprocessing/scripts/improving_names.py)
FOLDERS_2025 = {
    "afp": "AFP", "afp_ehc": "AFP_EHC", "afp_fe": "AFP_FE", "bingo": "Bingo", "brush": "Brush", "bsr": "BSR",
    "e2et": "E2E", "eplex": "EPLEX", "eql": "EQL", "feat": "FEAT", "ffx": "FFX", "geneticengine": "Genetic Engine",
    "geneticengine_1p1": "Genetic Engine 1p1", "geneticengine_hc": "Genetic Engine hc",
    "geneticengine_rs": "Genetic Engine rs", "gpgomea": "GP-GOMEA", "gplearn": "gplearn", "gpzgd": "GPZGD",
    "itea": "ITEA", "lightgbm": "LightGBM", "nesymres": "NeSymRes", "operon": "Operon", "ps-tree": "PS-Tree",
    "pysr": "PYSR", "qlattice": "QLattice", "rils-rols": "Rils-Rols", "sklearn_adaboost": "adaboost",
    "sklearn_lasso": "Lasso", "sklearn_linear": "Linear", "sklearn_mlp": "MLP", "sklearn_randomforest": "RF",
    "sklearn_ridge": "Ridge", "sklearn_sgd": "SGD", "tir": "TIR", "tpsr": "TPSR", "udsr": "uDSR", "xgboost": "XGB",
}  # fmt: skip
#: SRBench 2021's method-file names, cleaned, -> the name collate_blackbox_results.py published
_FILES_2021 = {"SGD": "Linear"}


def file_published_name(name: str, release: str) -> str:
    """The published name (cleaned as ``clean_method`` cleans it) of the runs SRBench made with a
    method file or folder called ``name`` (a file's stem, a folder's name): 2021's file
    ``SGDRegressor.py`` ran as "SGD", published as "Linear"; 2.0's folder ``sklearn_linear`` as
    "Linear" (improving_names.py). A workspace method of that name is paired with those rows."""
    if release == "srbench2025":
        return FOLDERS_2025.get(name.replace("tuned", "").replace("Regressor", ""), clean_method(name))
    clean = clean_method(name)
    return _FILES_2021.get(clean, clean)


def method(name: str, release: str) -> Mapped:
    """The srtui method a published method name stands for in ``release``."""
    clean = clean_method(name)
    found = _BY_RELEASE.get(release, {}).get(clean) or _COMMON.get(clean)
    if found:
        return Mapped(name, found)
    return Mapped(name, None, UNMAPPED.get(clean, f"unknown published method {clean!r}"))


def blackbox_task(dataset: str, release: str) -> Mapped:
    from srtui.tasks.loaders.pmlb import BLACKBOX, kebab

    if release == "srbench2021":
        return Mapped(dataset, f"srbench2021-bb-{kebab(dataset)}")
    if dataset in BLACKBOX:
        return Mapped(dataset, f"pmlb-{kebab(dataset)}")
    return Mapped(dataset, None, "not one of srtui's SRBench 2.0 black-box tasks (tasks/loaders/pmlb.py BLACKBOX)")


def groundtruth_task(dataset: str, noise: float) -> Mapped:
    from srtui.tasks.generators.groundtruth import NOISE_LEVELS, problems, task_name

    if dataset not in problems():
        return Mapped(dataset, None, "not among srtui's 133 Feynman and Strogatz problems")
    if not any(math.isclose(noise, level) for level in NOISE_LEVELS):
        return Mapped(dataset, None, f"noise {noise:g} is not one of srtui's levels")
    return Mapped(dataset, task_name(dataset, noise))


def firstprinciples_task(dataset: str) -> Mapped:
    from srtui.tasks.generators.firstprinciples import LAWS
    from srtui.tasks.loaders.pmlb import FIRST_PRINCIPLES_REAL, kebab

    law = dataset.removeprefix("first_principles_")
    if law in FIRST_PRINCIPLES_REAL:
        return Mapped(dataset, f"pmlb-first-principles-{kebab(law)}")
    if kebab(law) in LAWS:
        return Mapped(dataset, f"fp-{kebab(law)}")
    return Mapped(dataset, None, "not one of srtui's first-principles tasks")


def task(track: str, dataset: str, release: str, noise: float = 0.0) -> Mapped:
    """The srtui task a published dataset of ``track`` stands for."""
    if track == "ground-truth":
        return groundtruth_task(dataset, noise)
    if track == "first-principles":
        return firstprinciples_task(dataset)
    return blackbox_task(dataset, release)
