"""SRBench 2021's KernelRidge and MLP (and AdaBoost, RandomForest) rows regenerated end to end:
SRBench 2021's own method files (commit 5667c85, read from a git mirror of cavalab/srbench into a
temporary folder, never into the repository), run unmodified by ``srtui run --method-dir FILE
--env sklearn-0.24.1 --protocol srbench2021`` on the shared PMLB files with 2021's seeds; the
median test R2 per dataset against the published black-box table.

Prints one row per (dataset, method): seeds run, srtui's median, the published median, the
difference, and the median model size beside the published one (2021's ``model_size``: the file's
complexity(), or its number of features); then the largest difference per method. Target:
KernelRidge and MLP within 1e-6 on all ten seeds (a median of fewer seeds is not the published
figure: the table says how many ran).

    python tests/bench/bench_srbench2021_baselines.py --datasets 579_fri_c0_250_5 --seeds 2

Needs ``srtui env create sklearn-0.24.1``, the shared data (``$SRTUI_DATA_DIR`` or
``../shared/data``) and the mirror (``$SRTUI_SRBENCH_GIT``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRBENCH_GIT = Path(os.environ.get("SRTUI_SRBENCH_GIT", "/work/.mirror/cavalab+srbench/repo"))
COMMIT = "5667c85"
#: published algorithm name -> SRBench 2021's method file
FILES = {
    "KernelRidge": "KernelRidge",
    "MLP": "MLPRegressor",
    "AdaBoost": "AdaBoostRegressor",
    "RandomForest": "RandomForestRegressor",
    "Linear": "SGDRegressor",  # collate_blackbox_results.py renamed SGD "Linear"
    "*FFX": "FFXRegressor",  # needs ffx 2.0.2 (2021's environment.yml) in the environment
}
SEEDS = [23654, 15795, 860, 5390, 29802, 21575, 11964, 11284, 22118, 6265]
SMALLEST = ("579_fri_c0_250_5", "666_rmftsa_ladata", "654_fri_c0_500_10")
#: PMLB datasets that hold the same data under two names; SRBench 2021 ran and published both, so
#: one method's two published medians are the publication's own run-to-run spread. 197/573: the
#: decompressed files are byte-identical; 227/562: same rows, columns and compressed size (PMLB's
#: LFS pointers; 562 is not in the shared data).
PMLB_COPIES = {"197_cpu_act": "573_cpu_act", "227_cpu_small": "562_cpu_small"}
PMLB_COPIES |= {b: a for a, b in PMLB_COPIES.items()}


def _git(path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(SRBENCH_GIT), "show", f"{COMMIT}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def _published_rows() -> list[dict[str, str]]:
    table = REPO / "results" / "scoring" / "published" / "data" / "srbench2021-blackbox_results.csv"
    return list(csv.DictReader(io.StringIO(table.read_text())))


def _published() -> dict[tuple[str, str], float]:
    """The published median test R2 per (dataset, algorithm) (the table srtui ships)."""
    return {(r["dataset"], r["algorithm"]): float(r["r2_test"]) for r in _published_rows()}


def _published_sizes() -> dict[tuple[str, str], float]:
    """The published median model size per (dataset, algorithm): 2021's evaluate_model.py's
    ``model_size`` (a file's complexity(), or its number of features)."""
    return {(r["dataset"], r["algorithm"]): float(r["model_size"]) for r in _published_rows()}


def _sizes(ws: Path) -> dict[tuple[str, str], float]:
    """srtui's median ``srbench2021.size`` per (task, method file): the run's metrics computed
    (``srtui rescore``), then srbench2021's per_task table."""
    run = [sys.executable, "-m", "srtui"]
    subprocess.run([*run, "rescore", "--suite", "srbench2021-blackbox", "-w", str(ws)], check=True, capture_output=True)
    out = subprocess.run(
        [*run, "score", "srbench2021", "--suite", "srbench2021-blackbox", "--format", "json", "-w", str(ws)],
        check=True,
        capture_output=True,
        text=True,
    )
    per_task = json.loads(out.stdout)["tables"]["per_task"]
    return {(r["task"], r["method"]): r.get("srbench2021.size") for r in per_task}


Row = tuple[str, str, int, float, float, float, float, float]


def _print_table(rows: list[Row], methods: list[str]) -> None:
    """The per-dataset table (test R2 and model size, srtui's median beside the published one),
    then per method the largest difference and the publication's own spread where PMLB holds the
    dataset twice (|published - published on the copy|)."""
    head = f"{'dataset':<24} {'method':<12} {'seeds':>5} {'srtui median':>14} {'published':>12} {'difference':>11}"
    print(f"{head} {'copy spread':>11} {'srtui size':>10} {'published size':>14}")
    for d, m, n, mine, pub, copy, size, pub_size in rows:
        spread = f"{abs(pub - copy):>11.3g}" if not math.isnan(copy) else f"{'':>11}"
        sizes = f"{size:>10g} {pub_size:>14g}"
        print(f"{d:<24} {m:<12} {n:>5} {mine:>14.9f} {pub:>12.9f} {abs(mine - pub):>11.3g} {spread} {sizes}")
    for m in methods:
        diffs = [abs(mine - pub) for _, mm, n, mine, pub, *_ in rows if mm == m and n == 10]
        text = f"{max(diffs):.3g} over {len(diffs)} dataset(s) with ten seeds" if diffs else "no dataset ran ten seeds"
        spreads = [abs(pub - copy) for _, mm, _, _, pub, copy, *_ in rows if mm == m and not math.isnan(copy)]
        if spreads:
            text += f"; the publication's own spread on PMLB's duplicated data: up to {max(spreads):.3g}"
        print(f"max |srtui - published| {m}: {text}")


def _run(
    args: argparse.Namespace, data: Path, datasets: list[str], methods: list[str], tmp: Path
) -> tuple[list, dict[tuple[str, str], float], float]:
    """``srtui run`` of the 2021 files in a workspace under ``tmp`` (resumed if one is there);
    the stored runs of the suite, their median sizes and the wall time."""
    from srtui.tasks.loaders.pmlb_blackbox import task_name

    folder = tmp / "methods"
    folder.mkdir(exist_ok=True)
    for m in methods:
        (folder / f"{FILES[m]}.py").write_text(_git(f"experiment/methods/{FILES[m]}.py"))
    ws = tmp / "ws"
    cmd = [sys.executable, "-m", "srtui", "run", "srbench2021-blackbox", "--protocol", "srbench2021"]
    cmd += ["--env", args.env, "--workspace", str(ws), "--data-dir", str(data), "--jobs", str(args.jobs)]
    cmd += ["--launcher", args.launcher, "--no-metrics"]
    cmd += ["--tasks", ",".join(task_name(d) for d in datasets), "--seeds", str(args.seeds)]
    cmd += ["--methods", ",".join(FILES[m] for m in methods)]
    for m in methods:
        cmd += ["--method-dir", str(folder / f"{FILES[m]}.py")]
    started = time.monotonic()
    subprocess.run(cmd, check=True)
    wall = time.monotonic() - started
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "-w", str(ws)],
        check=True,
        capture_output=True,
        text=True,
    )
    return [r for r in json.loads(out.stdout) if r["suite"] == "srbench2021-blackbox"], _sizes(ws), wall


def _num(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(SMALLEST), help="comma-separated, or 'all' (the 20 shared)")
    ap.add_argument("--seeds", type=int, default=10, help="the first N of 2021's ten seeds")
    ap.add_argument("--methods", default="KernelRidge,MLP", help=f"of {', '.join(FILES)}")
    ap.add_argument("--env", default="sklearn-0.24.1")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--launcher", default="fork", help="fork (from the environment's own server) or exec")
    ap.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the workspace in DIR: a later call resumes it (one dataset at a time, then "
        "--datasets all prints the whole table without running again what is stored)",
    )
    args = ap.parse_args()
    from srtui.tasks.loaders.pmlb import QUALIFICATION
    from srtui.tasks.loaders.pmlb_blackbox import task_name

    data = Path(os.environ.get("SRTUI_DATA_DIR") or REPO.parent / "shared" / "data")
    datasets = list(QUALIFICATION) if args.datasets == "all" else args.datasets.split(",")
    methods = args.methods.split(",")
    published, published_sizes = _published(), _published_sizes()
    rows: list[Row] = []
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        runs, sizes, wall = _run(args, data, datasets, methods, Path(args.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="srtui-bench-2021-") as tmp:
            runs, sizes, wall = _run(args, data, datasets, methods, Path(tmp))
    for d in datasets:
        for m in methods:
            mine_runs = sorted(
                (r["seed"], r["r2_test"]) for r in runs if r["task"] == task_name(d) and r["method"] == FILES[m]
            )
            print(f"{d} {m}: test R2 per seed {', '.join(f'{s}: {v!r}' for s, v in mine_runs)}")
            ok = [v for _, v in mine_runs if v is not None]
            mine = statistics.median(ok) if ok else float("nan")
            copy = published.get((PMLB_COPIES.get(d, ""), m), float("nan"))
            size = sizes.get((task_name(d), FILES[m]))
            pub_size = published_sizes.get((d, m), float("nan"))
            rows.append((d, m, len(ok), mine, published.get((d, m), float("nan")), copy, _num(size), pub_size))
    _print_table(rows, methods)
    print(f"wall: {wall:.0f} s for {len(datasets)} dataset(s) x {args.seeds} seed(s) x {len(methods)} method(s)")
    complete = [abs(mine - pub) for _, m, n, mine, pub, *_ in rows if n == 10 and m in ("KernelRidge", "MLP")]
    return 1 if complete and max(complete) > 1e-6 else 0


if __name__ == "__main__":
    sys.exit(main())
