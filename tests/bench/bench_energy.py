"""Energy sampling cost (prints figures; not a timed test). Run: python tests/bench/bench_energy.py

The worker reads the counters twice per job (srtui.engine.process.energy.start just before `fit`, finish just
after): no polling. Each job is a fresh process, so what one job pays is a *cold* pair: measured
here in fresh interpreters that have imported what a worker imports, as each launcher starts a
worker: `exec` (nothing cached: the pair finds the counters and counts the sockets) and `fork`
(forked from a server that has called srtui.engine.process.energy.warm, as the fork server does). Each is the
median of COLD processes, on this machine's /sys/class/powercap (absent here: /proc/stat only)
and on a powercap tree of two packages with dram domains (the read cost of a RAPL server). The
jobs are real: 20 `linear` fits on smoke-linear through `srtui run` with each launcher, in the
same run of this script; the share is the worst sampling cost over the median CPU time of a job
of that launcher (the shortest real jobs: any other method's share is smaller). The warm cost of
a pair (mean of PAIRS in one process) is printed beside. Target: share < 1 %.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from targets import finish, target  # noqa: E402  (tests/bench/targets.py, beside this script)

from srtui.engine.process import energy  # noqa: E402

PAIRS = 2000
COLD = 15
#: one start + finish pair in a fresh worker-like process: the CPU seconds it took, printed;
#: argv: the powercap root, "fork" (sampled in a child forked after warm) or "exec", an npz.
#: Before it samples, the process does what a worker does first (reads its data, loads and
#: preloads the method): a forked child's first touches of shared pages are paid there, as in a
#: real worker, not charged to the sampling.
COLD_PAIR = """
import os, sys, time
from pathlib import Path
import numpy as np
import srtui.engine.process.job_worker  # what a worker has imported before it samples (energy among it)
from srtui.engine.process import energy
from srtui.engine.methods import registry
root = Path(sys.argv[1])
if sys.argv[2] == "fork":
    energy.warm(root)
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        sys.exit(0)
with np.load(sys.argv[3], allow_pickle=False) as data:
    X, y = data["X"], data["y"]
registry.load("linear").preload()
t0 = time.process_time()
begin = energy.start(root)
energy.finish(begin, 1.0, 1.0, 100.0, root)
print(time.process_time() - t0, flush=True)
"""


def sampling_cpu_s(root: Path) -> float:
    """CPU seconds of one start + finish pair (mean of PAIRS)."""
    energy._domains.cache_clear()
    t0 = time.process_time()
    for _ in range(PAIRS):
        begin = energy.start(root)
        energy.finish(begin, 1.0, 1.0, 100.0, root)
    return (time.process_time() - t0) / PAIRS


def cold_cpu_s(root: Path, launcher: str, tmp: Path) -> float:
    """Median CPU seconds of one start + finish pair as a fresh worker of ``launcher`` pays it."""
    import numpy as np

    env = dict(os.environ, PYTHONPATH=str(REPO))
    npz = tmp / "data.npz"
    np.savez(npz, X=np.ones((100, 3)), y=np.ones(100))
    command = [sys.executable, "-c", COLD_PAIR, str(root), launcher, str(npz)]
    runs = [
        float(subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout) for _ in range(COLD)
    ]
    return statistics.median(runs)


def fake_rapl(tmp: Path) -> Path:
    root = tmp / "powercap"
    for pkg in range(2):
        for path, name in (
            (root / f"intel-rapl:{pkg}", f"package-{pkg}"),
            (root / f"intel-rapl:{pkg}" / f"intel-rapl:{pkg}:0", "dram"),
        ):
            path.mkdir(parents=True)
            (path / "name").write_text(name + "\n")
            (path / "energy_uj").write_text("123456789\n")
            (path / "max_energy_range_uj").write_text(f"{2**32}\n")
    return root


def job_cpu_s(tmp: Path, launcher: str) -> float:
    """Median CPU seconds of a real `linear` job started by ``launcher``."""
    suite = tmp / "energy.toml"
    suite.write_text(
        f'name = "bench-energy"\ntasks = ["smoke-linear"]\nmethods = ["linear"]\nseeds = {list(range(1, 21))}\n'
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / f"ws-{launcher}"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            str(suite),
            "--jobs",
            "2",
            "--launcher",
            launcher,
            "--workspace",
            str(ws),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [sys.executable, "-m", "srtui", "results", "--format", "json", "--workspace", str(ws)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    rows = [r for r in json.loads(out.stdout) if r["status"] == "ok"]
    methods = {r["energy_method"] for r in rows}
    print(
        f"{launcher}: {len(rows)} linear jobs, energy method(s): {sorted(methods)}, "
        f"median fit energy {statistics.median(r['energy_j'] for r in rows):.4f} "
        f"J, median fit_s {statistics.median(r['fit_s'] for r in rows):.4f} s"
    )
    return statistics.median(r["cpu_s"] for r in rows)


def main() -> None:
    shares = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        roots = {"this machine": energy.POWERCAP, "2-package RAPL tree": fake_rapl(tmp)}
        for where, root in roots.items():
            print(f"sampling CPU per pair, {where}: {sampling_cpu_s(root) * 1e6:.0f} us warm (one process)")
        for launcher in ("fork", "exec"):
            cold = {where: cold_cpu_s(root, launcher, tmp) for where, root in roots.items()}
            job = job_cpu_s(tmp, launcher)
            worst = max(cold.values())
            shares.append(100 * worst / job)
            costs = ", ".join(f"{where} {s * 1e6:.0f} us" for where, s in cold.items())
            print(
                f"{launcher}: sampling CPU per job {costs}; median CPU of a linear job {job:.3f} s; "
                f"share {shares[-1]:.3f} %"
            )
    print(
        f"energy sampling CPU share: {max(shares):.3f} % of the shortest job's CPU time, worst launcher "
        f"({target('energy sampling CPU share', max(shares), '<', 1, ' %')})"
    )
    finish()


if __name__ == "__main__":
    main()
