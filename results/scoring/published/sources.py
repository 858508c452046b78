"""The published sources: which files, which rules they feed, and the protocol they were run under.

A source is a release's published results: small tables shipped with srtui (``data/``, cited in
``data/CITATION.md``) or SRBench's per-run feathers, Git LFS objects downloaded on demand and
checked against the sha256 of their LFS pointers. Each file belongs to one track (``black-box``,
``ground-truth``, ``first-principles``, ``energy``) and feeds the rules that score that track.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from srtui.engine.protocols import PARSE_PANDAS1
from srtui.results.metrics.profiles import Profile

DATA = Path(__file__).resolve().parent / "data"
#: where GitHub serves the LFS objects of cavalab/srbench (a mirror can replace it: SRTUI_PUBLISHED_MIRROR)
LFS_BASE = "https://media.githubusercontent.com/media/cavalab/srbench/"


@dataclass(frozen=True)
class Protocol:
    """How the published runs were made; each field is compared with the workspace's runs."""

    seeds: int
    split: str  # "per seed": train_test_split(random_state=seed); "fixed": one split per dataset
    train_cap: int  # training rows kept (0: all)
    time_s: float  # per run
    tuning: str  # "search" (a grid search per dataset) or "fixed" (tuned parameters, no search)
    scaling: str  # "xy" (X and y standardised) or "none"
    sklearn: str  # the scikit-learn version of the release's environment ("" = not pinned)
    profile: Profile = Profile.REFERENCE  # published numbers come from the publication's code
    #: how its code parsed the data files (srtui.engine.protocols.PARSES; "" = not compared)
    parse: str = ""
    #: its model size where that is not the count of the model's nodes: "complexity" (2021's
    #: evaluate_model.py stored each method file's complexity(), or its number of features)
    sizes: str = ""


@dataclass(frozen=True)
class PublishedFile:
    track: str  # black-box, ground-truth, first-principles, energy
    path: str  # path in cavalab/srbench on ``branch``
    branch: str
    shipped: str = ""  # the file name under data/ when srtui ships it
    sha256: str = ""  # of the file (shipped) or of the LFS object (its pointer's oid)
    size: int = 0
    per_run: bool = True  # False: one row per method and dataset (a median or a rate over seeds)
    protocol: Protocol | None = None

    @property
    def rel(self) -> str:
        """Its path under a data directory (``--data-dir``, SRTUI_DATA_DIR, the workspace cache)."""
        return f"srbench/{self.path}"

    @property
    def url(self) -> str:
        return f"{LFS_BASE}{self.branch}/{self.path}"


@dataclass(frozen=True)
class Source:
    name: str  # what --published takes
    label: str  # the rows' source column: "published: <label>"
    release: str  # srbench2021 or srbench2025: which name map applies
    files: tuple[PublishedFile, ...] = field(default_factory=tuple)

    @property
    def source_label(self) -> str:
        return f"published: {self.label}"

    def file_for(self, track: str) -> PublishedFile | None:
        return next((f for f in self.files if f.track == track), None)


# SRBench 2021: tag v2.0 (environment.yml pins scikit-learn 0.24.1; evaluate_model.py keeps 10,000
# training rows and standardises X and y; SRBench's README: 10 trials, 48 h per black-box run, 9 h per
# ground-truth run, the ground-truth runs use the tuned parameters and no scaling; read_file.py parses
# PMLB's files with pandas' python engine, pandas 1.x in 2021: tasks/loaders/pandas1.py)
_BB21 = Protocol(10, "per seed", 10_000, 48 * 3600.0, "search", "xy", "0.24.1", parse=PARSE_PANDAS1, sizes="complexity")
_GT21 = Protocol(10, "per seed", 10_000, 9 * 3600.0, "fixed", "none", "0.24.1")
# SRBench 2.0: docs/user_guide.md (30 trials, fit_time_limit 3600, -max_samples 40000, --scale_x
# --scale_y, optimize_model's grid search); base_environment.yml does not pin scikit-learn
_V2 = Protocol(30, "per seed", 40_000, 3600.0, "search", "xy", "")

SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "srbench2021",
            "SRBench 2021",
            "srbench2021",
            (
                PublishedFile(
                    "black-box",
                    "docs/csv/blackbox_results.csv",
                    "master",
                    "srbench2021-blackbox_results.csv",
                    "217de44d3a12631aeb60664b228b057af88bf3345792b34577e0ac5bf2c1d5b1",
                    268337,
                    per_run=False,
                    protocol=_BB21,
                ),
                PublishedFile(
                    "ground-truth",
                    "docs/csv/groundtruth.csv",
                    "master",
                    "srbench2021-groundtruth.csv",
                    "1f8e2baeeadaaeffe357d89479b136a4ab1bd86fbd65a7c78721f1029c8df909",
                    451917,
                    per_run=False,
                    protocol=_GT21,
                ),
            ),
        ),
        Source(
            "srbench2021-runs",
            "SRBench 2021 (per run)",
            "srbench2021",
            (
                PublishedFile(
                    "black-box",
                    "results/black-box_results.feather",
                    "master",
                    sha256="a8cffedab7a93799ec54625a782065a792ec2be24e309fec1a2e44d6f8295061",
                    size=22662162,
                    protocol=_BB21,
                ),
                PublishedFile(
                    "ground-truth",
                    "results/ground-truth_results.feather",
                    "master",
                    sha256="ec4d843c511d957d3f97f2497045d94b71da4095da486eab4d1cfad4ef0a73ad",
                    size=79038794,
                    protocol=_GT21,
                ),
            ),
        ),
        Source(
            "srbench2025",
            "SRBench 2.0",
            "srbench2025",
            (
                PublishedFile(
                    "black-box",
                    "results/black-box-tuning/results.feather",
                    "srbench_2025",
                    sha256="5b428264a346f6bbbeabded219f87454b9206afa70c19c012075c672533f342e",
                    size=5596634,
                    protocol=_V2,
                ),
                PublishedFile(
                    "first-principles",
                    "results/first-principles-tuning/results.feather",
                    "srbench_2025",
                    sha256="2f56ad1a4faa8115381c0a181e7173fb7bd85de54f4dbe0f9499b9e4ae808570",
                    size=2370514,
                    protocol=_V2,
                ),
                PublishedFile(
                    "energy",
                    "results/black-box-tuning/power_consumption.feather",
                    "srbench_2025",
                    sha256="c8a52f02b66bda8fa75f078da9ef0cb39769b894e00032ad7a55bcc5a2ed4d5f",
                    size=379378,
                    protocol=_V2,
                ),
            ),
        ),
    )
}

#: rule -> (the tracks it reads, in order of preference; the sources ``--published`` alone takes)
RULE_TRACKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "srbench2021": (("black-box",), ("srbench2021",)),
    "srbench-groundtruth": (("ground-truth",), ("srbench2021",)),
    "srbench2025": (("black-box", "first-principles"), ("srbench2025",)),
}
