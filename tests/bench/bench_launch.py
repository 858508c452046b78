"""Per-job cost of each kind of method, exec'd and forked, in one run of this script (prints
figures; not a timed test). Run: python tests/bench/bench_launch.py [--jobs N] [--parts ...] [--fork-only]

Every case is one `srtui run --jobs 2 --no-metrics` into a fresh workspace, on smoke-linear, N
seeds (one job each):
- built-in: `linear` (scikit-learn's LinearRegression, srtui's adapter);
- folder: SRBench 2.0's own `sklearn_linear` folder (the same estimator), from the shared data;
- environment: `sgd-sklearn024` in a stand-in environment (a venv with packages of its own: this
  interpreter's scikit-learn, numpy, psutil and their requirements linked into its site-packages;
  the route of a real one, sealed as one, without its build);
- search: SRBench 2021's protocol (`--protocol srbench2021`: halving search, a job per fold per
  candidate) of the `sklearn_ridge` folder, 1 seed (--search-exec: exec'd too, ~470 jobs of
  seconds each).
Each under `--launcher fork` and `--launcher exec` (and the folder under the default `auto`,
which must fork it). s/job is the run phase (first job's start to last job's end) over the jobs,
i.e. what a slot pair delivers; jobs/s its inverse. Then the phases of one forked job (medians
over a run, from SRTUI_PHASE_LOG: engine/process/phases.py; the last, "recorded (group
commit)", is the recorder thread's commit of the batch the job went in: engine/backends/recorder.py).
The machine's load average is printed with every figure: compare the ratios within one run.
Targets (issue 56, over 200 jobs: --jobs 200): built-in <= 0.02 s/job, folder within 1.5x of the
built-in (and <= 0.1 s/job), environment <= 0.2 s/job.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from conftest import shared_data_dir  # noqa: E402
from standin_env import link_environment  # noqa: E402


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SRTUI_WORKSPACE", None)
    env["PYTHONPATH"] = str(REPO)
    env.update(extra or {})
    return env


def run_case(
    tmp: Path, name: str, method: list[str], n: int, launcher: str, extra_env: dict[str, str] | None = None
) -> dict:
    """One `srtui run`; its jobs' run phase, wall and statuses."""
    ws = tmp / f"ws-{name}-{launcher}"
    suite = tmp / f"{name}.toml"
    suite.write_text(
        f'name = "bench-{name}"\ntasks = ["smoke-linear"]\nmethods = ["{method[0]}"]\nseeds = {list(range(1, n + 1))}\n'
    )
    command = _command(suite, method)
    t0, cpu0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(
        [*command, "--launcher", launcher, "--workspace", str(ws)],
        env=_env(extra_env),
        capture_output=True,
        text=True,
    )
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"{name} {launcher}: {proc.stderr.strip()[-2000:]}")
    return {"wall": wall, "cpu": cpu, **_jobs(ws), "out": proc.stdout}


def _command(suite: Path, method: list[str]) -> list[str]:
    return [sys.executable, "-m", "srtui", "run", str(suite), *method[1:], "--jobs", "2", "--no-metrics"]


def _children_cpu() -> float:
    """CPU seconds of every waited-for process under this one: the driver, its fork servers and
    (reaped by them) every job, the metrics aside (--no-metrics)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _jobs(ws: Path) -> dict:
    with sqlite3.connect(ws / "srtui.db") as conn:
        rows = conn.execute("SELECT started_at, ended_at, status, model, cpu_s FROM jobs").fetchall()
    starts = [datetime.fromisoformat(r[0]) for r in rows if r[0]]
    ends = [datetime.fromisoformat(r[1]) for r in rows if r[1]]
    phase = (max(ends) - min(starts)).total_seconds()
    return {
        "n": len(rows),
        "ok": sum(r[2] == "ok" for r in rows),
        "phase": phase,
        "per_job": phase / max(1, len(rows)),
        "models": sorted(str(r[3]) for r in rows),
        "job_cpu": statistics.median(r[4] for r in rows if r[4] is not None) if any(r[4] for r in rows) else 0.0,
    }


#: what the stand-in environment holds: scikit-learn and what srtui's worker and fork server
#: import besides the engine (as the real environment's pip steps install: engine/methods/env_specs.py)
STAND_IN_DISTRIBUTIONS = ("scikit-learn", "numpy", "psutil")


def stand_in_environment(envs: Path) -> None:
    """sgd-sklearn024's environment, without its build: a venv of this interpreter's base with
    packages of its own in its own site-packages, the installed files of this interpreter's
    scikit-learn, numpy and psutil and what they require (hard links where the disk allows, else
    copies). A sealed job sees only the environment's trees, as with a real one: no path back
    into this interpreter's site-packages (a .pth would be one the seal does not bind)."""
    folder = envs / "sklearn-0.24.1"
    if (folder / ".srtui-ready").exists():
        return
    link_environment(folder, STAND_IN_DISTRIBUTIONS)
    check = [str(folder / "bin" / "python"), "-I", "-c", "import numpy, psutil, sklearn.linear_model"]
    subprocess.run(check, check=True, timeout=300, capture_output=True)
    (folder / ".srtui-ready").write_text("ok")


WHOLE = "= whole job (claim to record)"


def phase_table(log: Path) -> list[tuple[str, float, float | None]]:
    """(phase, median wall seconds, median CPU seconds or None) in the order of a job's marks:
    each phase ends at its mark; its CPU time is known when its two marks are of one side (the
    driver's slot thread, or the worker)."""
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    order: list[str] = []
    for line in log.read_text().splitlines():
        marks = json.loads(line)["marks"]
        for (_, t0, c0, side0), (name, t1, c1, side1) in itertools.pairwise(marks):
            if name not in wall:
                order.append(name)
            wall[name].append(t1 - t0)
            if side0 == side1:
                cpu[name].append(c1 - c0)
        wall[WHOLE].append(marks[-1][1] - marks[0][1])
    order.append(WHOLE)
    return [(n, statistics.median(wall[n]), statistics.median(cpu[n]) if cpu[n] else None) for n in order]


def print_phases(
    tmp: Path, part: str, label: str, method: list[str], n: int, extra_env: dict[str, str] | None = None
) -> None:
    log = tmp / f"phases-{part}.jsonl"
    run_case(tmp, f"{part}-phases", method, n, "fork", {**(extra_env or {}), "SRTUI_PHASE_LOG": str(log)})
    print(f"  phases of one forked {label} job (median of {n}, {_load()}):")
    print(f"    {'phase (ends at)':<32} {'wall':>9} {'CPU':>9}")
    for phase, seconds, cpu in phase_table(log):
        cpu_text = f"{cpu * 1000:6.1f} ms" if cpu is not None else ""
        print(f"    {phase:<32} {seconds * 1000:6.1f} ms {cpu_text:>9}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=60, help="jobs per run")
    ap.add_argument("--parts", nargs="*", default=["builtin", "folder", "environment", "search", "phases"])
    ap.add_argument("--search-exec", action="store_true", help="the search exec'd too (hundreds of jobs: long)")
    ap.add_argument("--phases-of", nargs="*", default=["builtin", "folder", "environment"])
    ap.add_argument("--fork-only", action="store_true", help="no exec'd (nor auto) runs: the forked figures alone")
    args = ap.parse_args()
    shared = shared_data_dir()
    folders = shared / "srbench-methods" if shared else None
    if folders is None or not (folders / "sklearn_linear").is_dir():
        raise SystemExit("needs the shared SRBench method folders (../shared/data/srbench-methods)")
    n = args.jobs
    with tempfile.TemporaryDirectory(prefix="srtui-bench-launch-") as tmp_name:
        tmp = Path(tmp_name)
        envs = {"SRTUI_ENVS": str(tmp / "envs")}
        cases = {
            "builtin": ("built-in linear", ["linear"], {}, 0.02),
            "folder": (
                "folder sklearn_linear",
                ["sklearn_linear", "--method-dir", str(folders / "sklearn_linear")],
                {},
                0.1,
            ),
            "environment": ("environment sgd-sklearn024", ["sgd-sklearn024"], envs, 0.2),
        }
        if "environment" in args.parts or "phases" in args.parts:
            stand_in_environment(tmp / "envs")
        print(f"per-job cost, {n} jobs a run on smoke-linear, 2 slots, --no-metrics ({_load()} at the start)")
        forked: dict[str, float] = {}
        for part, (label, method, extra, goal) in cases.items():
            if part not in args.parts:
                continue
            fork = run_case(tmp, part, method, n, "fork", extra)
            exe = None if args.fork_only else run_case(tmp, part, method, max(8, n // 4), "exec", extra)
            print(_case_line(label, fork, exe, goal))
            forked[part] = fork["per_job"]
            if part == "folder" and "builtin" in forked:
                ratio = forked["folder"] / forked["builtin"]
                verdict = target("folder / built-in", ratio, "<=", 1.5, "x")
                print(f"    folder / built-in, forked: {ratio:.2f}x; {verdict}")
            if fork["ok"] != fork["n"] or (exe is not None and exe["ok"] != exe["n"]):
                print(f"    NOT ALL OK: fork {fork['ok']}/{fork['n']}, exec {exe and exe['ok']}/{exe and exe['n']}")
            if part == "folder" and not args.fork_only:
                auto = run_case(tmp, part, method, n, "auto", extra)
                print(f"    default launcher (auto): {auto['per_job']:.4f} s/job ({_load()})")
        if "search" in args.parts:
            ridge = [*_folder(folders, "sklearn_ridge"), "--protocol", "srbench2021"]
            for launcher in ("fork", "exec") if args.search_exec else ("fork",):
                got = _search(tmp, ridge, launcher)
                print(
                    f"  2021-protocol search of folder sklearn_ridge, 1 seed, --launcher {launcher}: {got['n']} jobs, "
                    f"{got['per_job']:.4f} s/job, run {got['wall']:.1f} s ({_load()})"
                )
        if "phases" in args.parts:
            for part, (label, method, extra, _goal) in cases.items():
                if part not in args.phases_of:
                    continue
                print_phases(tmp, part, label, method, n, extra)
    finish()


def _case_line(label: str, fork: dict, exe: dict | None, goal: float) -> str:
    """One method's line: forked (and exec'd) s/job, jobs/s, CPU per job, the target."""
    line = f"  {label}: fork {fork['per_job']:.4f} s/job ({1 / fork['per_job']:.1f} jobs/s), "
    if exe is not None:
        line += (
            f"exec {exe['per_job']:.4f} s/job ({1 / exe['per_job']:.1f} jobs/s), "
            f"exec/fork {exe['per_job'] / fork['per_job']:.1f}x; "
        )
    line += f"CPU of the whole command per job: fork {fork['cpu'] / fork['n']:.4f} s"
    line += f", exec {exe['cpu'] / exe['n']:.4f} s" if exe is not None else ""
    line += f" (start-ups included; a job's own, median: fork {fork['job_cpu']:.4f} s"
    line += f", exec {exe['job_cpu']:.4f} s" if exe is not None else ""
    return line + f"); {_load()}; {target(label + ' forked s/job', fork['per_job'], '<=', goal, ' s')}"


def _folder(folders: Path, name: str) -> list[str]:
    return [name, "--method-dir", str(folders / name)]


def _search(tmp: Path, method: list[str], launcher: str) -> dict:
    ws = tmp / f"ws-search-{launcher}"
    suite = tmp / "search.toml"
    suite.write_text(f'name = "bench-search"\ntasks = ["smoke-linear"]\nmethods = ["{method[0]}"]\nseeds = [1]\n')
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            str(suite),
            *method[1:],
            "--jobs",
            "2",
            "--no-metrics",
            "--launcher",
            launcher,
            "--workspace",
            str(ws),
        ],
        env=_env(),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"search {launcher}: {proc.stderr.strip()[-2000:]}")
    return {"wall": time.perf_counter() - t0, **_jobs(ws)}


if __name__ == "__main__":
    main()
