"""SRBench 2021's black-box track: the manifest of its 122 PMLB datasets, its tasks and its suite."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, shared_data_dir

from srtui.tasks.loaders import pmlb_files
from srtui.tasks.loaders.pmlb_blackbox import BLACKBOX_2021, TRACK, task_name

SRBENCH_GIT = Path("/work/.mirror/cavalab+srbench/repo")
PMLB_GIT = Path("/work/.mirror/EpistasisLab+pmlb/repo")
#: the published table, as the results package ships it (else read from a mirror of SRBench)
SHIPPED_TABLE = REPO / "results" / "scoring" / "published" / "data" / "srbench2021-blackbox_results.csv"
SEEDS_2021 = [23654, 15795, 860, 5390, 29802, 21575, 11964, 11284, 22118, 6265]


def published_table() -> str:
    if SHIPPED_TABLE.is_file():
        return SHIPPED_TABLE.read_text()
    if not SRBENCH_GIT.is_dir():
        pytest.skip(f"no published black-box table: neither {SHIPPED_TABLE} nor a mirror at {SRBENCH_GIT}")
    return subprocess.run(
        ["git", "--git-dir", str(SRBENCH_GIT), "show", "master:docs/csv/blackbox_results.csv"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_the_122_names_are_the_datasets_of_srbench_s_published_black_box_table() -> None:
    datasets = {row["dataset"] for row in csv.DictReader(io.StringIO(published_table()))}
    assert len(BLACKBOX_2021) == 122 == len(set(BLACKBOX_2021))
    assert set(BLACKBOX_2021) == datasets


def test_every_file_is_pinned_with_pmlb_s_sha256_size_and_shape() -> None:
    for name in BLACKBOX_2021:
        meta = pmlb_files.info(name)
        assert re.fullmatch(r"[0-9a-f]{64}", meta["sha256"]) and re.fullmatch(r"[0-9a-f]{40}", meta["commit"])
        assert meta["size"] > 0 and meta["rows"] > 0 and meta["features"] > 0, name
        remote = pmlb_files.remote(name)
        assert remote.sha256 == meta["sha256"] and remote.size == meta["size"]
        assert meta["commit"] in remote.url and remote.url.endswith(f"/datasets/{name}/{name}.tsv.gz")
    # removed from PMLB's master in 80f7aaad: pinned to its parent, which has them
    for gone in ("195_auto_price", "207_autoPrice"):
        assert pmlb_files.info(gone)["commit"].startswith("c936c9e8")


def test_the_manifest_is_what_the_tool_makes_from_the_mirrors() -> None:
    if not (SRBENCH_GIT.is_dir() and PMLB_GIT.is_dir()):
        pytest.skip(f"needs git mirrors of SRBench and PMLB at {SRBENCH_GIT} and {PMLB_GIT}")
    from srtui.tasks.tools.pmlb_blackbox_manifest import build

    made = build(str(PMLB_GIT), str(SRBENCH_GIT))
    shipped = pmlb_files.manifest()
    assert made["files"] == shipped["files"] and made["srbench2021_blackbox"] == shipped["srbench2021_blackbox"]


def test_the_shared_pmlb_files_have_the_manifest_s_sha256() -> None:
    shared = shared_data_dir()
    folder = shared / "srbench2022" / "qualification" if shared else None
    if folder is None or not folder.is_dir():
        pytest.skip("needs the shared qualification files (../shared/data or $SRTUI_DATA_DIR)")
    files = sorted(folder.glob("*.tsv.gz"))
    assert len(files) == 20
    for path in files:
        name = path.name.removesuffix(".tsv.gz")
        assert name in BLACKBOX_2021
        assert hashlib.sha256(path.read_bytes()).hexdigest() == pmlb_files.info(name)["sha256"]


def test_tasks_track_and_suite() -> None:
    from srtui.tasks.catalogue import entries
    from srtui.tasks.suites import load_suite

    assert task_name("1028_SWD") == "srbench2021-bb-1028-swd"
    mine = [e for e in entries() if e.track == TRACK]
    assert sorted(e.name for e in mine) == sorted(task_name(n) for n in BLACKBOX_2021)
    assert all(not e.offline and len(e.files) == 1 for e in mine)
    suite = load_suite("srbench2021-blackbox")
    assert len(suite.tasks) == 122 and suite.protocol == "srbench2021" and suite.seeds == SEEDS_2021
    assert suite.methods[0] == "sgd"  # the published "Linear" row


def test_a_task_reads_the_shared_file_in_place_with_its_provenance(tmp_path: Path) -> None:
    from srtui.tasks.catalogue import TaskContext, get_task

    shared = shared_data_dir()
    if shared is None or not (shared / "srbench2022" / "qualification").is_dir():
        pytest.skip("needs the shared qualification files (../shared/data or $SRTUI_DATA_DIR)")
    task = get_task(task_name("579_fri_c0_250_5"), TaskContext(cache_dir=tmp_path, data_dir=shared))
    meta = pmlb_files.info("579_fri_c0_250_5")
    assert len(task.y_train) + len(task.y_test) == meta["rows"] and task.n_features == meta["features"]
    prov = task.provenance
    assert prov["pmlb"] == "579_fri_c0_250_5" and prov["sha256"] == meta["sha256"]
    assert prov["pmlb_commit"] == meta["commit"] and prov["checksum"] == "sha256 shipped with srtui"


def test_every_pmlb_task_reads_a_pinned_checksummed_file_by_the_same_route() -> None:
    """The ground-truth, qualification, SRBench 2.0 and first-principles PMLB tasks too."""
    from srtui.tasks.catalogue import entries

    pmlb = [e for e in entries() if any(f.rel.startswith("pmlb/") for f in e.files)]
    groundtruth = [e for e in pmlb if e.track == "srbench-groundtruth-pmlb"]
    assert len(groundtruth) == 133 and len(pmlb) == 122 + 133 + 12 + 8
    for e in pmlb:
        (remote,) = e.files
        name = remote.rel.removeprefix("pmlb/").removesuffix(".tsv.gz")
        assert remote.sha256 == pmlb_files.info(name)["sha256"], e.name
        assert f"datasets/{name}/{name}.tsv.gz" in remote.layouts and f"{name}/{name}.tsv.gz" in remote.layouts
