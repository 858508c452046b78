"""Make the manifest of the PMLB files srtui reads (SRBench 2021's black-box datasets first) from
git mirrors of PMLB and SRBench.

Run by hand when the manifest must change::

    python -m srtui.tasks.tools.pmlb_blackbox_manifest PMLB_GIT_DIR SRBENCH_GIT_DIR

SRBench 2021's black-box names are the ``dataset`` column of SRBench's published
``docs/csv/blackbox_results.csv``; the other files are those srtui's PMLB tasks read
(``srtui.tasks.loaders.pmlb``: the qualification, SRBench 2.0 and ground-truth datasets). Each file
is pinned to a PMLB commit that holds it: PMLB's ``HEAD`` if the file is there, else the parent
of the commit that removed it (PMLB removed ``195_auto_price`` and ``207_autoPrice``
in 80f7aaad). Its sha256 and size are those of the Git LFS pointer at that commit; rows and
features come from PMLB's ``summary_stats.tsv`` beside it. It writes
``tasks/data/pmlb_files.json``; at run time srtui reads only that JSON.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "pmlb_files.json"
TABLE = "docs/csv/blackbox_results.csv"


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def published_names(srbench: str, ref: str = "master") -> list[str]:
    rows = csv.DictReader(io.StringIO(git(srbench, "show", f"{ref}:{TABLE}")))
    return sorted({row["dataset"] for row in rows})


def pinned_commit(pmlb: str, path: str) -> str:
    head = git(pmlb, "rev-parse", "HEAD").strip()
    if git(pmlb, "ls-tree", head, path).strip():
        return head
    removed = git(pmlb, "log", "-1", "--format=%H", head, "--", path).strip()
    if not removed:
        raise SystemExit(f"{path} is in no commit of {pmlb}")
    return git(pmlb, "rev-parse", f"{removed}^").strip()


def lfs_pointer(text: str, path: str) -> tuple[str, int]:
    fields = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
    if not fields.get("oid", "").startswith("sha256:"):
        raise SystemExit(f"{path} is not a Git LFS pointer")
    return fields["oid"].removeprefix("sha256:"), int(fields["size"])


def entry(pmlb: str, name: str) -> dict[str, Any]:
    path = f"datasets/{name}/{name}.tsv.gz"
    commit = pinned_commit(pmlb, path)
    sha256, size = lfs_pointer(git(pmlb, "show", f"{commit}:{path}"), path)
    out: dict[str, Any] = {"commit": commit, "sha256": sha256, "size": size}
    try:
        stats = next(
            csv.DictReader(
                io.StringIO(git(pmlb, "show", f"{commit}:datasets/{name}/summary_stats.tsv")), delimiter="\t"
            )
        )
        out["rows"], out["features"] = int(stats["n_instances"]), int(stats["n_features"])
    except (subprocess.CalledProcessError, StopIteration, KeyError, ValueError):
        pass  # rows/features unknown: the manifest says so by leaving them out
    return out


def other_names() -> list[str]:
    """The PMLB files srtui's other tasks read."""
    from srtui.tasks.generators.groundtruth import problems
    from srtui.tasks.loaders.pmlb import BLACKBOX, FIRST_PRINCIPLES_REAL, QUALIFICATION

    return [*QUALIFICATION, *BLACKBOX, *(f"first_principles_{d}" for d in FIRST_PRINCIPLES_REAL), *problems()]


def build(pmlb: str, srbench: str) -> dict[str, Any]:
    """The manifest from the two mirrors (bare git directories)."""
    blackbox = published_names(srbench)
    return {
        "source": {
            "names": f"cavalab/srbench@{git(srbench, 'rev-parse', 'master').strip()} {TABLE} (column dataset)",
            "files": "EpistasisLab/pmlb datasets/NAME/NAME.tsv.gz (Git LFS pointer: sha256, size)",
        },
        "srbench2021_blackbox": blackbox,
        "files": {name: entry(pmlb, name) for name in sorted({*blackbox, *other_names()})},
    }


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: python -m srtui.tasks.tools.pmlb_blackbox_manifest PMLB_GIT_DIR SRBENCH_GIT_DIR")
    manifest = build(*argv)
    blackbox = manifest["srbench2021_blackbox"]
    OUT.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(manifest['files'])} files ({len(blackbox)} of SRBench 2021's black-box track) to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
