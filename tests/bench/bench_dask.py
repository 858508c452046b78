"""Dask backend overhead (prints figures; not a timed test). Run: python tests/bench/bench_dask.py

The same 100 probe-noop jobs through the real CLI, one invocation each, with 2 job slots:
`srtui run --jobs 2` (local backend), a 2-worker LocalCluster, an SSH cluster (own sshd on
127.0.0.1, two workers on this host) and a single-node SLURM (one job of 2 worker processes),
both brought up here by tests/clusters.py (skipped, with the reason, where they cannot start).
Two ratios to local: whole command (includes starting the cluster and, for SLURM, the batch
job), and the run phase (the store's run start to end: every job claimed, shipped, run, returned
and recorded). Target: run phase <= 1.5.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import clusters  # noqa: E402
from targets import finish, target  # noqa: E402

N_JOBS = 100


def _run(args: list[str], ws: Path, env_extra: dict | None = None) -> tuple[float, float]:
    env = dict(os.environ)
    env.pop("SRTUI_WORKSPACE", None)
    env["PYTHONPATH"] = str(REPO)
    env.update(env_extra or {})
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "run",
            *args,
            "--mem-limit",
            "500",
            "--time-limit",
            "60",
            "--workspace",
            str(ws),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    with sqlite3.connect(ws / "srtui.db") as conn:
        started, ended = conn.execute("SELECT started_at, ended_at FROM runs").fetchone()
        statuses = dict(conn.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
    if statuses != {"ok": N_JOBS}:
        raise SystemExit(f"not all jobs ok: {statuses}")
    phase = (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
    return total, phase


def _ssh_config(tmp: Path, sshd) -> Path:
    connect = "\n".join(f"{k} = {json.dumps(v)}" for k, v in sshd.connect_options().items())
    path = tmp / "cluster-ssh.toml"
    path.write_text(
        f'[ssh]\nhosts = ["127.0.0.1", "127.0.0.1"]\nworkers_per_host = 2\nremote_python = "{sys.executable}"\n'
        f'host = "127.0.0.1"\nscheduler_port = {clusters.free_port()}\n[ssh.connect_options]\n{connect}\n'
        '[ssh.worker_options]\nhost = "127.0.0.1"\n'
    )
    return path


def _slurm_config(tmp: Path) -> Path:
    path = tmp / "cluster-slurm.toml"
    path.write_text(
        f'[slurm]\ncores = 2\nmemory = "2GiB"\nwalltime = "00:30:00"\njobs = 1\npython = "{sys.executable}"\n'
        'host = "127.0.0.1"\nworker_host = "127.0.0.1"\n'
    )
    return path


def main() -> None:
    rows: list[tuple[str, float, float]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        suite = tmp / "noop.toml"
        suite.write_text(
            'name = "bench-noop"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\n'
            f"seeds = {list(range(1, N_JOBS + 1))}\n"
        )
        rows.append(("local backend (--jobs 2)", *_run([str(suite), "--jobs", "2"], tmp / "local")))
        rows.append(
            ("dask, 2-worker LocalCluster", *_run([str(suite), "--jobs", "2", "--cluster", "local"], tmp / "dask"))
        )
        for name, start in (("SSH", clusters.start_sshd), ("SLURM", clusters.start_slurm)):
            try:
                server = start()
            except clusters.Unavailable as exc:
                skipped.append(f"{name}: {exc}")
                continue
            try:
                if name == "SSH":
                    rows.append(
                        (
                            "dask, SSH (2 workers, 127.0.0.1)",
                            *_run([str(suite), "--cluster-config", str(_ssh_config(tmp, server))], tmp / "ssh"),
                        )
                    )
                else:
                    assert isinstance(server, clusters.Slurm)
                    rows.append(
                        (
                            "dask, SLURM (1 job x 2 workers)",
                            *_run([str(suite), "--cluster-config", str(_slurm_config(tmp))], tmp / "slurm", server.env),
                        )
                    )
            finally:
                server.stop()
    local_total, local_phase = rows[0][1], rows[0][2]
    print(f"{N_JOBS} probe-noop jobs, 2 slots")
    for label, total, phase in rows:
        goal = "" if label == rows[0][0] else f"; {target(label, phase / local_phase, '<=', 1.5, 'x local')}"
        print(
            f"  {label:<34} command {total:6.1f} s ({total / local_total:4.2f}x) "
            f"  run phase {phase:6.1f} s ({phase / local_phase:4.2f}x{goal})"
        )
    for line in skipped:
        print(f"  skipped {line}")
    finish()


if __name__ == "__main__":
    main()
