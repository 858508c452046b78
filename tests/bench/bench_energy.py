"""Energy sampling cost (prints figures; not a timed test). Run: python tests/bench/bench_energy.py

The worker reads the counters twice per job (engine.energy.start just before `fit`, finish just
after): no polling. This prints the CPU time of one start+finish pair,
on this machine's /sys/class/powercap (absent here: /proc/stat only) and on a powercap tree of
two packages with dram domains (the read cost of a RAPL server), against the CPU time of the
shortest real job (`linear` on smoke-linear through `srtui run`). Target: share < 1 %.
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

from engine import energy  # noqa: E402

PAIRS = 2000


def sampling_cpu_s(root: Path) -> float:
    """CPU seconds of one start + finish pair (mean of PAIRS)."""
    energy._domains.cache_clear()
    t0 = time.process_time()
    for _ in range(PAIRS):
        begin = energy.start(root)
        energy.finish(begin, 1.0, 1.0, 100.0, root)
    return (time.process_time() - t0) / PAIRS


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


def job_cpu_s(tmp: Path) -> float:
    suite = tmp / "energy.toml"
    suite.write_text(
        f'name = "bench-energy"\ntasks = ["smoke-linear"]\nmethods = ["linear"]\nseeds = {list(range(1, 21))}\n'
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SRTUI_WORKSPACE", None)
    ws = tmp / "ws"
    subprocess.run(
        [sys.executable, "-m", "srtui", "run", str(suite), "--jobs", "2", "--workspace", str(ws)],
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
        f"{len(rows)} linear jobs, energy method(s): {sorted(methods)}, "
        f"median fit energy {statistics.median(r['energy_j'] for r in rows):.4f} "
        f"J, median fit_s {statistics.median(r['fit_s'] for r in rows):.4f} s"
    )
    return statistics.median(r["cpu_s"] for r in rows)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        here = sampling_cpu_s(energy.POWERCAP)
        rapl = sampling_cpu_s(fake_rapl(tmp))
        job = job_cpu_s(tmp)
    print(f"sampling CPU per job: {here * 1e6:.0f} us (this machine), {rapl * 1e6:.0f} us (2-package RAPL tree)")
    print(f"median CPU of a linear job: {job:.3f} s")
    worst = max(here, rapl)
    print(f"energy sampling CPU share: {100 * worst / job:.4f} % of the shortest job's CPU time (target < 1 %)")


if __name__ == "__main__":
    main()
