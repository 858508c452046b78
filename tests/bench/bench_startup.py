"""Start-up of the CLI: how long a command takes before it does anything, and against the start of
its libraries (print figures; not a timed test).

    python tests/bench/bench_startup.py [--repeat 5] [--methods DIR] [--only-check]

Each command runs ``--repeat`` times as ``python -m srtui ...`` in a folder of its own (after one
call that writes the bytecode caches, as an installed srtui has them), interleaved with
``python -c "import typer, rich"``, the floor any typer CLI pays. Printed per command: the median
wall time, the median CPU time (user + system, of the process and the children it waited for),
their ratio (about 1 on a quiet machine; a busy one stretches the wall time, not the CPU time),
the CPU time as a multiple of the floor's, and the heaviest top-level imports (``-X importtime``,
cumulative). Targets, on the multiple (issue #56; a load average stretches both alike):
``--help`` and a misspelt command <= 2.5x, ``status``, ``results`` and a ``--dry-run`` of a suite
with two SRBench method folders <= 5x, ``score`` <= 8x and ``plot`` <= 12x (of a workspace of 24
jobs, run first: ``linear`` and ``poly2`` on two smoke tasks, six seeds; ``plot`` both drawn, each
call another width, and kept, the same figure again: ``srtui.cli.figure_cache``; ``score`` both
kept, the answer of the same call over unchanged runs: ``srtui.cli.score_cache``, where the target
applies, and cold, each call on a fresh cache: pandas alone is 7.5x, printed with its figure); ``report`` of
that workspace is printed against the floor too; and on the CPU time (issue #46: a quiet machine's
wall time), ``--help`` and a misspelt command < 0.5 s, ``run smok`` < 0.7 s. ``methods check
linear`` (a throw-away workspace, a new one each call) is timed against the job's own wall time
it reports (its record's ``wall_s``: from the worker's start, a fork of its method's server, to its
exit seen): target its wall time <= the job's + 1 s, forked from the kept fork server an
earlier check left (srtui.engine.process.kept_servers; one call first starts it), and printed
beside it without one (``SRTUI_KEEP_SERVER_S=0``: the call starts its own); the spans beyond
the job are printed under it, from the job's phase marks (``SRTUI_PHASE_LOG``);
``--only-check`` prints those lines alone. The SRBench 2.0 folders
``sklearn_ridge`` and ``sklearn_linear`` are read in place from ``--methods`` (else
``$SRTUI_SRBENCH_METHODS``, else ``../shared/data/srbench-methods``); without them those lines
say so. A 2021-style method file whose grid is built in a loop (``gplearn.py``: a job reads it)
shows the grid cache: its first plan runs the job, the second reads the kept grid.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from targets import finish, target

REPO = Path(__file__).resolve().parents[2]
FLOOR = ("-c", "import typer, rich")
#: a 2021 method file's grid built in a loop (as SRBench 2021's gplearn.py builds it; never fitted)
LOOP_GRID = """from gplearn.genetic import SymbolicRegressor

hyper_params = []
for p, g in zip([1000, 500, 100], [500, 1000, 5000]):
    hyper_params.append({'population_size': [p], 'generations': [g]})

est = SymbolicRegressor(population_size=50, generations=2)

def model(est):
    return str(est._program)
"""


def _env() -> dict[str, str]:
    # bytecode caches written, as an installed srtui has them; no workspace from the caller
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "PYTHONDONTWRITEBYTECODE")}
    env["COLUMNS"] = "80"
    return env


def time_once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one ``python ARGV`` (its rusage from wait4, with its waited children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *argv], cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4
    return wall, usage.ru_utime + usage.ru_stime


def heaviest_imports(args: list[str], cwd: Path, n: int = 4) -> list[tuple[str, float]]:
    """The ``n`` top-level imports with the largest cumulative time (ms), from -X importtime."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "srtui", *args], cwd=cwd, env=_env(), capture_output=True, text=True
    ).stderr
    top = []
    for line in out.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)  # no indent: top level
        if m:
            top.append((m.group(2), int(m.group(1)) / 1000))
    return sorted(top, key=lambda t: -t[1])[:n]


#: the workspace `score`, `plot` and `report` read: 24 jobs (2 methods x 2 tasks x 6 seeds)
OUTPUT_SUITE = """name = "bench24"
tasks = ["smoke-linear", "smoke-interaction"]
methods = ["linear", "poly2"]
seeds = [1, 2, 3, 4, 5, 6]
scoring = "srbench2021"
"""


def methods_dir(given: str | None) -> Path | None:
    env = os.environ.get("SRTUI_SRBENCH_METHODS")
    for base in [given, env, str(REPO.parent / "shared" / "data" / "srbench-methods")]:
        if base and all((Path(base) / m / "regressor.py").is_file() for m in ("sklearn_ridge", "sklearn_linear")):
            return Path(base)
    return None


def commands(tmp: Path, methods: Path | None) -> list[tuple[str, list[str], float | None, float | None]]:
    """(label, srtui's arguments, target multiple of the floor, target CPU s) of each command."""
    ws = str(tmp / "ws")
    out: list[tuple[str, list[str], float | None, float | None]] = [
        ("--help", ["--help"], 2.5, 0.5),
        ("misspelt", ["rnu"], 2.5, 0.5),
        ("run smok", ["run", "smok"], None, 0.7),
        ("status", ["status", "-w", ws], 5.0, None),
        ("results", ["results", "-w", ws], 5.0, None),
        ("status, none", ["status"], None, None),  # a folder without a workspace: one line
    ]
    if methods is not None:
        dirs = ["--method-dir", str(methods / "sklearn_ridge"), "--method-dir", str(methods / "sklearn_linear")]
        plan = ["run", "smoke", "--protocol", "srbench2021", *dirs, "--dry-run", "-w", ws]
        out.append(("dry-run, 2 folders", plan, 5.0, None))
    ws24 = str(tmp / "ws24")
    out += [
        ("score, kept", ["score", "srbench2021", "-w", ws24], 8.0, None),
        ("plot, kept", ["plot", "pareto", "--out", str(tmp / "kept.svg"), "-w", ws24], 12.0, None),
        ("report", ["report", "--out", str(tmp / "report.html"), "-w", ws24], None, None),
    ]
    out += [(f"{name} --help", [name, "--help"], None, None) for name in ("run", "results", "score", "tasks", "review")]
    return out


def measure(label: str, argv: list[str], repeat: int, cwd: Path, floor: list[float]) -> tuple[float, float, float]:
    """(median wall, median CPU, multiple of the floor's median CPU), a floor call before each."""
    times = []
    for _ in range(repeat):
        floor.append(time_once(list(FLOOR), cwd)[1])
        times.append(time_once(argv, cwd))
    wall = statistics.median(t[0] for t in times)
    cpu = statistics.median(t[1] for t in times)
    return wall, cpu, cpu / statistics.median(floor)


def report(label: str, figures: tuple[float, float, float], ratio_goal: float | None, cpu_goal: float | None) -> None:
    wall, cpu, ratio = figures
    line = f"srtui {label:<20} wall {wall:6.3f} s  CPU {cpu:6.3f} s  wall/CPU {wall / cpu:4.1f}  {ratio:4.1f}x floor"
    if ratio_goal is not None:
        line += f"  {target('srtui ' + label, ratio, '<=', ratio_goal, 'x')}"
    if cpu_goal is not None:
        line += f"  CPU {target('srtui ' + label + ' CPU', cpu, '<', cpu_goal, ' s')}"
    print(line)


def grid_cache_lines(tmp: Path, repeat: int, floor: list[float]) -> None:
    """A loop-built grid: the first plan reads it in a job, the next ones read the kept grid."""
    firsts, seconds = [], []
    for i in range(repeat):
        file = tmp / f"grid{i}" / "gplearn.py"  # a new place: a new fingerprint, read by a job again
        file.parent.mkdir()
        file.write_text(LOOP_GRID)
        argv = ["-m", "srtui", "run", "smoke", "--protocol", "srbench2021", "--tasks", "smoke-interaction"]
        argv += ["--methods", "gplearn", "--method-dir", str(file), "--dry-run", "-w", str(tmp / "ws")]
        floor.append(time_once(list(FLOOR), tmp)[1])
        firsts.append(time_once(argv, tmp))
        seconds.append(time_once(argv, tmp))
    base = statistics.median(floor)
    for label, times in (("dry-run, grid by job", firsts), ("dry-run, grid kept", seconds)):
        wall, cpu = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
        report(label, (wall, cpu, cpu / base), 5.0 if times is seconds else None, None)


def drawn_lines(tmp: Path, repeat: int, floor: list[float]) -> None:
    """`plot` drawing its figure: each call another width, so none finds a kept figure."""
    times = []
    for i in range(repeat):
        floor.append(time_once(list(FLOOR), tmp)[1])
        width = f"{6.0 + i / 10:.1f}"  # a figure of its own (the kept one's key has the width)
        argv = ["-m", "srtui", "plot", "pareto", "--width", width, "--out", str(tmp / f"drawn{i}.svg")]
        times.append(time_once([*argv, "-w", str(tmp / "ws24")], tmp))
    wall, cpu = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
    report("plot, drawn", (wall, cpu, cpu / statistics.median(floor)), 12.0, None)


#: the spans of a `methods check` call, between the bench's own clock and its job's phase marks
#: (srtui.engine.process.phases): what the command's wall time beyond its job is made of
CHECK_SPANS = (
    ("start", "claim", "interpreter, imports, plan, store (the servers start at once, beside it)"),
    ("claim", "launcher ready", "the fork server's imports, past what overlapped the plan"),
    ("launcher ready", "exit seen", "the job: fork, sealed worker, fit, exit (its wall_s)"),
    ("exit seen", "recorded (group commit)", "model check (its own process), accuracy, record"),
    ("recorded (group commit)", "end", "output, shutdown, until its stdout closes"),
)


def check_once(tmp: Path, log: Path, kept: bool = True) -> tuple[float, float, float, dict[str, float]]:
    """One `methods check linear --json`: (wall to its stdout's end, CPU, the job's wall_s, the
    span of each CHECK_SPANS from its phase log); ``kept``: its fork server is this user's kept
    one (srtui.engine.process.kept_servers), else one of its own, started by the call."""
    env = {**_env(), "SRTUI_PHASE_LOG": str(log)}
    if not kept:
        env["SRTUI_KEEP_SERVER_S"] = "0"
    argv = [sys.executable, "-m", "srtui", "methods", "check", "linear", "--json"]
    at = {"start": time.time()}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped by wait4
    wall, at["end"] = time.perf_counter() - start, time.time()
    job = float(json.loads(text)["wall_s"]) if status == 0 else float("inf")
    for line in log.read_text().splitlines() if log.exists() else []:
        for name, when, _cpu, _side in json.loads(line)["marks"]:
            at.setdefault(name, when)
    spans = {a: at[b] - at[a] for a, b, _ in CHECK_SPANS if a in at and b in at}
    return wall, usage.ru_utime + usage.ru_stime, job, spans


def cold_score_lines(tmp: Path, repeat: int, floor: list[float]) -> None:
    """`score` computing its answer: each call on a fresh cache (none kept: ``srtui.cli.score_cache``),
    so it imports pandas and scores; printed beside the kept line, with no target of its own."""
    import shutil

    times, ws24 = [], tmp / "ws24"
    argv = ["-m", "srtui", "score", "srbench2021", "-w", str(ws24)]
    for _ in range(repeat):
        shutil.rmtree(ws24 / "cache" / "scores", ignore_errors=True)
        floor.append(time_once(list(FLOOR), tmp)[1])
        times.append(time_once(argv, tmp))
    wall, cpu = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
    report("score, cold", (wall, cpu, cpu / statistics.median(floor)), None, None)
    shutil.rmtree(ws24 / "cache" / "scores", ignore_errors=True)
    imports = ", ".join(f"{n} {ms:.0f} ms" for n, ms in heaviest_imports(argv[2:], tmp))
    print(f"    heaviest imports: {imports}")


def check_lines(tmp: Path, repeat: int, floor: list[float]) -> None:
    """`methods check linear` against its job's own wall time (``wall_s`` of its --json: from the
    worker's start, a fork of its server, to its exit seen), and what the rest is made of: warm
    (the kept fork server of an earlier check, started by one call first: the target) and cold
    (a server of its own, started by the call: printed beside it)."""
    check_once(tmp, tmp / "check-phases-first.log")  # the kept server is there after this
    for kept in (True, False):
        walls, jobs, cpus, spans = [], [], [], []
        for i in range(repeat):
            floor.append(time_once(list(FLOOR), tmp)[1])
            wall, cpu, job, span = check_once(tmp, tmp / f"check-phases-{kept}-{i}.log", kept)
            walls.append(wall)
            cpus.append(cpu)
            jobs.append(job)
            spans.append(span)
        wall, job, cpu = statistics.median(walls), statistics.median(jobs), statistics.median(cpus)
        ratio = cpu / statistics.median(floor)
        name = "srtui methods check linear" + ("" if kept else ", cold")
        line = f"{name:<33} wall {wall:6.3f} s  CPU {cpu:6.3f} s  {ratio:4.1f}x floor"
        line += f"  the job's own wall {job:5.3f} s, beyond it {wall - job:5.2f} s"
        if kept:
            line += "  " + target("srtui methods check linear beyond its job", wall - job, "<=", 1.0, " s")
        else:
            line += "  (no kept server: SRTUI_KEEP_SERVER_S=0)"
        print(line)
        # the CPU above: the driver's and its own fork server's (waited for); not a kept server's
        print("    its wall, span by span (medians):")
        for a, _b, what in CHECK_SPANS:
            values = [s[a] for s in spans if a in s]
            if values:
                print(f"      {statistics.median(values):6.3f} s  {what}")


def command_lines(tmp: Path, methods: Path | None, repeat: int, floor: list[float]) -> None:
    """Every command's line but `methods check`'s, in workspaces made first."""
    suite = tmp / "noop.toml"
    suite.write_text('name = "noop"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\nseeds = [1, 2]\n')
    subprocess.run([sys.executable, "-m", "srtui", "run", str(suite), "-w", str(tmp / "ws")], env=_env(), check=True)
    (tmp / "bench24.toml").write_text(OUTPUT_SUITE)
    subprocess.run(
        [sys.executable, "-m", "srtui", "run", str(tmp / "bench24.toml"), "-w", str(tmp / "ws24")],
        env=_env(),
        check=True,
        stderr=subprocess.DEVNULL,
    )
    for label, args, ratio_goal, cpu_goal in commands(tmp, methods):
        cwd = tmp / f"cwd-{len(floor)}"
        cwd.mkdir()
        time_once(["-m", "srtui", *args], cwd)  # bytecode written, grids kept: what every later call finds
        report(label, measure(label, ["-m", "srtui", *args], repeat, cwd, floor), ratio_goal, cpu_goal)
        imports = ", ".join(f"{n} {ms:.0f} ms" for n, ms in heaviest_imports(args, cwd))
        print(f"    heaviest imports: {imports}")
    if methods is None:
        print("dry-run, 2 folders: skipped (no sklearn_ridge and sklearn_linear folders: --methods DIR)")
    grid_cache_lines(tmp, max(1, repeat // 2), floor)
    drawn_lines(tmp, repeat, floor)
    cold_score_lines(tmp, repeat, floor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--methods", help="Folder of SRBench 2.0's method folders (sklearn_ridge, sklearn_linear).")
    parser.add_argument("--only-check", action="store_true", help="Only the `methods check linear` lines.")
    opts = parser.parse_args()
    load = os.getloadavg()
    print(f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} cores")
    methods = methods_dir(opts.methods)
    with tempfile.TemporaryDirectory(prefix="srtui-startup-") as name:
        tmp = Path(name)
        floor: list[float] = []
        if not opts.only_check:
            command_lines(tmp, methods, opts.repeat, floor)
        check_lines(tmp, opts.repeat if opts.only_check else max(1, opts.repeat // 2), floor)
        print(f"floor (python -c 'import typer, rich'): CPU {statistics.median(floor):.3f} s, {len(floor)} calls")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    finish()


if __name__ == "__main__":
    main()
