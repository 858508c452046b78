"""Start-up of the CLI: how long a command takes before it does anything (print figures; not a
timed test).

    python tests/bench/bench_startup.py [--repeat 5]

Each command runs ``--repeat`` times as ``python -m srtui ...`` in an empty folder; printed per
command: the median wall time, the median CPU time (user + system, of the process), their ratio
(about 1 on a quiet machine; a busy one stretches the wall time, not the CPU time) and the
heaviest top-level imports (``python -X importtime``, cumulative). The targets (issue #46: on a
quiet machine `srtui --help` and a misspelt command < 0.5 s, `srtui run smok` < 0.7 s) are checked
on the CPU time, which is what a quiet machine's wall time is; the load average is printed
before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from targets import finish, target

#: (command, target in seconds or None)
COMMANDS: list[tuple[tuple[str, ...], float | None]] = [
    (("--help",), 0.5),
    (("rnu",), 0.5),  # a misspelt command
    (("run", "smok"), 0.7),  # a misspelt suite
    (("run", "--help"), None),
    (("status",), None),  # a folder without a workspace: one line
    (("results", "--help"), None),
    (("score", "--help"), None),
    (("export", "--help"), None),
    (("plot", "--help"), None),
    (("tasks", "--help"), None),
    (("methods", "--help"), None),
    (("review", "--help"), None),
    (("tui", "--help"), None),
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    env["COLUMNS"] = "80"
    return env


def time_once(args: tuple[str, ...], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one ``python -m srtui ARGS`` (its own rusage, from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "srtui", *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4
    return wall, usage.ru_utime + usage.ru_stime


def heaviest_imports(args: tuple[str, ...], cwd: Path, n: int = 4) -> list[tuple[str, float]]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    load_before = os.getloadavg()
    print(
        f"load average before: {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}; {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory(prefix="srtui-startup-") as tmp:
        cwd = Path(tmp)
        for args, goal in COMMANDS:
            times = [time_once(args, cwd) for _ in range(opts.repeat)]
            wall = statistics.median(t[0] for t in times)
            cpu = statistics.median(t[1] for t in times)
            imports = ", ".join(f"{name} {ms:.0f} ms" for name, ms in heaviest_imports(args, cwd))
            line = f"srtui {' '.join(args):<16} wall {wall:6.3f} s  CPU {cpu:6.3f} s  wall/CPU {wall / cpu:5.1f}"
            if goal is not None:
                line += f"  {target('srtui ' + ' '.join(args), cpu, '<', goal, ' s')} (CPU time)"
            print(line)
            print(f"    heaviest imports: {imports}")
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}")
    finish()


if __name__ == "__main__":
    main()
