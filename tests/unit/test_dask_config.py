"""Dask cluster settings as data: what reaches LocalCluster / SSHCluster / SLURMCluster, and the
SLURM walltime refusal - without starting SSH or SLURM clusters."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from srtui.engine.backends.base import BackendError, BackendOptions
from srtui.engine.backends.dask import DaskBackend
from srtui.engine.backends.dask_config import (
    check_limits,
    load_cluster_config,
    local_kwargs,
    parse_walltime,
    slurm_kwargs,
    slurm_lifetime,
    ssh_kwargs,
)
from srtui.engine.spec import Limits

SSH = """
[ssh]
hosts = ["head", "node1", "node2"]
workers_per_host = 4
remote_python = "/opt/srtui/bin/python"
[ssh.connect_options]
username = "bench"
known_hosts = "/home/bench/.ssh/known_hosts"
[ssh.worker_options]
local_directory = "/scratch/srtui"
"""

SLURM = """
[slurm]
queue = "compute"
account = "sr-bench"
cores = 8
memory = "32GB"
walltime = "04:00:00"
jobs = 3
job_extra_directives = ["--qos=normal"]
job_script_prologue = ["source /opt/srtui/bin/activate"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    return path


def test_local_defaults_one_thread_per_worker() -> None:
    config = load_cluster_config("local", None)
    kwargs = local_kwargs(config, default_workers=3)
    assert kwargs["n_workers"] == 3 and kwargs["threads_per_worker"] == 1 and kwargs["processes"] is True
    from distributed import LocalCluster

    inspect.signature(LocalCluster).bind(**kwargs)


def test_ssh_kwargs(tmp_path: Path) -> None:
    config = load_cluster_config("ssh", write(tmp_path, SSH))
    kwargs = ssh_kwargs(config)
    assert kwargs["hosts"] == ["head", "node1", "node2"]
    assert kwargs["worker_options"] == {"local_directory": "/scratch/srtui", "n_workers": 4, "nthreads": 1}
    assert kwargs["connect_options"] == {"username": "bench", "known_hosts": "/home/bench/.ssh/known_hosts"}
    assert kwargs["scheduler_options"]["allowed_failures"] == 0 and kwargs["scheduler_options"]["port"] == 8786
    assert kwargs["remote_python"] == "/opt/srtui/bin/python"
    assert config.expected_slots() == 8
    from distributed import SSHCluster

    inspect.signature(SSHCluster).bind(**kwargs)


def test_ssh_refuses_threads_and_a_lone_host(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="one thread per worker"):
        load_cluster_config("ssh", write(tmp_path, SSH + "nthreads = 2\n"))
    with pytest.raises(BackendError, match="scheduler host then at least one worker"):
        load_cluster_config("ssh", write(tmp_path, '[ssh]\nhosts = ["head"]\n'))


def test_slurm_kwargs_lifetime_before_walltime(tmp_path: Path) -> None:
    config = load_cluster_config("slurm", write(tmp_path, SLURM))
    kwargs, scale = slurm_kwargs(config)
    assert scale == {"jobs": 3} and config.expected_slots() == 24
    assert kwargs["cores"] == kwargs["processes"] == 8  # one single-threaded worker per core
    assert kwargs["walltime"] == "04:00:00" and kwargs["queue"] == "compute" and kwargs["account"] == "sr-bench"
    lifetime, stagger = slurm_lifetime(4 * 3600)
    assert kwargs["worker_extra_args"] == ["--lifetime", f"{int(lifetime)}s", "--lifetime-stagger", f"{int(stagger)}s"]
    assert lifetime + stagger < 4 * 3600  # the latest a worker closes is still before SLURM kills it


def test_slurm_job_script(tmp_path: Path) -> None:
    """The kwargs are accepted by the real SLURMCluster and land in its batch script."""
    jobqueue = pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed")
    kwargs, _ = slurm_kwargs(load_cluster_config("slurm", write(tmp_path, SLURM)))
    with jobqueue.SLURMCluster(**kwargs, dashboard_address=None) as cluster:
        script = cluster.job_script()
    assert "#SBATCH -t 04:00:00" in script and "#SBATCH -p compute" in script and "#SBATCH --qos=normal" in script
    assert "--nthreads 1" in script and "--nworkers 8" in script and "--lifetime" in script


def test_slurm_refuses_jobs_longer_than_the_walltime(tmp_path: Path) -> None:
    path = write(tmp_path, SLURM.replace('"04:00:00"', '"01:00:00"'))
    config = load_cluster_config("slurm", path)
    check_limits(config, [Limits(time_s=1800, mem_mb=2000)])  # fits
    with pytest.raises(BackendError, match=r"raise walltime .* or lower --time-limit"):
        check_limits(config, [Limits(time_s=1800), Limits(time_s=3600, mem_mb=2000)])
    with pytest.raises(BackendError, match="raise memory or lower --mem-limit"):
        check_limits(config, [Limits(time_s=60, mem_mb=8000)])  # 32 GB / 8 workers = 4 GB each
    backend = DaskBackend(BackendOptions("dask", 1, cluster="slurm", cluster_config=path), Path("/nonexistent"))
    from srtui.engine.spec import JobSpec

    spec = JobSpec("s", "t", "probe-noop", 1, Limits(time_s=3600), "fp", "v")
    with pytest.raises(BackendError, match="raise walltime"):
        backend.prepare([spec])  # refused before any cluster is started
    assert backend.client is None and backend.cluster is None


def test_walltime_formats() -> None:
    assert parse_walltime("30") == 1800 and parse_walltime("30:15") == 1815
    assert parse_walltime("02:00:00") == 7200 and parse_walltime("1-02:30") == 95400
    with pytest.raises(BackendError, match="not a SLURM time"):
        parse_walltime("two hours")


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("[local]\nn_workrs = 2\n", "local", "unknown \\[local\\] key"),
        ("[local]\nn_workers = 0\n", "local", "positive integer"),
        ("[slurm]\nmemory = '4GB'\n", "local", "expected only a \\[local\\] table"),
        ("[slurm]\ncores = 2\n", "slurm", "needs memory"),
        ("[slurm]\nmemory = '4GB'\njobs = 2\nmaximum_jobs = 4\n", "slurm", "either jobs"),
        ("[slurm]\nmemory = '4GB'\n[slurm.options]\nprocesses = 4\n", "slurm", "may not set processes"),
        ("[local\n", "local", "not valid TOML"),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, text: str, kind: str, message: str) -> None:
    with pytest.raises(BackendError, match=message) as info:
        load_cluster_config(kind, write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_option_combinations() -> None:
    with pytest.raises(BackendError, match="needs --cluster-config"):
        load_cluster_config("slurm", None)
    with pytest.raises(BackendError, match="not both"):
        DaskBackend(BackendOptions("dask", 1, dask_scheduler="tcp://h:8786", cluster="local"), Path("."))
    with pytest.raises(BackendError, match="local, ssh or slurm"):
        DaskBackend(BackendOptions("dask", 1, cluster="kubernetes"), Path("."))
    with pytest.raises(BackendError, match="cannot read"):
        DaskBackend(BackendOptions("dask", 1, cluster="ssh", cluster_config=Path("/nonexistent.toml")), Path("."))


def test_config_names_its_cluster_and_the_backend_is_implied(tmp_path: Path) -> None:
    from srtui.engine.backends import backend_kind

    assert load_cluster_config(None, write(tmp_path, SSH)).kind == "ssh"
    assert load_cluster_config(None, None).kind == "local"
    assert backend_kind(None, None, "slurm", None) == backend_kind(None, "tcp://127.0.0.1:8786", None, None) == "dask"
    assert backend_kind(None, None, None, None) == "local"
    with pytest.raises(BackendError, match="need --backend dask"):
        backend_kind("local", None, None, write(tmp_path, SSH))


def test_memory_is_in_mib() -> None:
    from srtui.engine.backends.dask_config import parse_memory_mb

    assert parse_memory_mb("32GiB") / 8 == 4096 and round(parse_memory_mb("32GB") / 8) == 3815


def test_ssh_scheduler_listens_on_its_host_and_slurm_pins_hosts(tmp_path: Path) -> None:
    assert ssh_kwargs(load_cluster_config("ssh", write(tmp_path, SSH)))["scheduler_options"]["host"] == "head"
    local = SLURM + 'host = "127.0.0.1"\nworker_host = "127.0.0.1"\nscheduler_port = 18786\n'
    kwargs, _ = slurm_kwargs(load_cluster_config("slurm", write(tmp_path, local)))
    assert kwargs["scheduler_options"] == {"host": "127.0.0.1", "port": 18786, "dashboard_address": None}
    assert kwargs["worker_extra_args"][-2:] == ["--host", "127.0.0.1"] and kwargs["n_workers"] == 0


def test_interrupt_handler_survives_a_library_that_replaces_it() -> None:
    """dask_jobqueue sets SIGINT to sys.exit() on import; the run's handler must stay."""
    import subprocess
    import sys

    code = (
        "import signal, threading\n"
        "from srtui.cli.interrupts import install_interrupt_handlers\n"
        "cancel, force = threading.Event(), threading.Event()\n"
        "install_interrupt_handlers(cancel, force, print)\n"
        "ours = signal.getsignal(signal.SIGINT)\n"
        "signal.signal(signal.SIGINT, lambda *_: None)\n"
        "import dask_jobqueue\n"
        "assert signal.getsignal(signal.SIGINT) is ours and signal.getsignal(signal.SIGTERM) is ours\n"
        "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
        "assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN\n"
        "signal.raise_signal(signal.SIGINT)\n"
        "assert cancel.is_set()\n"
    )
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_dry_run_checks_the_cluster_config_and_shows_its_slots(tmp_path: Path) -> None:
    from conftest import srtui

    config = write(tmp_path, SLURM.replace('"32GB"', '"32GiB"'))
    ws = str(tmp_path / "ws")
    shown = srtui(
        "run",
        "smoke",
        "--cluster-config",
        str(config),
        "--time-limit",
        "600",
        "--mem-limit",
        "4096",
        "--dry-run",
        "--workspace",
        ws,
    )
    assert shown.returncode == 0, shown.stderr
    assert f"24 slots on a SLURM cluster ({config})" in shown.stdout
    refused = srtui(
        "run", "smoke", "--cluster-config", str(config), "--time-limit", "36000", "--dry-run", "--workspace", ws
    )
    assert (
        refused.returncode != 0 and "raise walltime" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    )
    local = srtui("run", "smoke", "--backend", "local", "--cluster", "local", "--dry-run", "--workspace", ws)
    assert local.returncode != 0 and "need --backend dask" in local.stderr
    assert not (tmp_path / "ws").exists()
