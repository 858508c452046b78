"""Dask cluster settings as data: the ``--cluster-config`` TOML, checked and turned into kwargs.

Nothing here starts a cluster, so every rule (allowed keys, one thread per worker, the SLURM
walltime against the jobs' limits) is testable without SSH hosts or a SLURM installation.

One table, named after ``--cluster``::

    [local]  n_workers, max_in_flight, start_timeout
    [ssh]    hosts, workers_per_host, remote_python, host, scheduler_port, max_in_flight,
             start_timeout, [ssh.connect_options] (asyncssh.connect), [ssh.worker_options],
             [ssh.scheduler_options]
    [slurm]  queue, account, cores, memory, walltime, jobs | minimum_jobs + maximum_jobs,
             job_extra_directives, job_script_prologue, python, interface, local_directory,
             log_directory, job_name, max_in_flight, host, worker_host, scheduler_port,
             start_timeout, worker_timeout, [slurm.options] (more SLURMCluster kwargs)
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srtui.engine.backends.base import BackendError
from srtui.engine.spec import Limits

#: scheduler settings srtui needs: a worker death fails the task at once (KilledWorker, so the
#: driver records a lost attempt instead of Dask silently re-running it), and tasks wait on the
#: scheduler rather than in a worker's queue, so a dying worker takes only the job it runs
SCHEDULER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
}
#: what a job needs beyond its wall limit and grace: interpreter and imports, data, result read
JOB_OVERHEAD_S = 60.0
#: a SLURM worker closes this long before its walltime, so SLURM never kills it mid-close
CLOSE_MARGIN_S = 120.0
#: seconds a cluster may take to start (scheduler and first workers) unless start_timeout says
START_TIMEOUT_S = 120.0
#: seconds srtui waits for a first SLURM worker (queues can be busy) unless worker_timeout says
SLURM_WORKER_TIMEOUT_S = 3600.0

#: [slurm] keys handed to dask-jobqueue's SLURMCluster as they are
_SLURM_PASSED = (
    "queue",
    "account",
    "job_extra_directives",
    "job_script_prologue",
    "python",
    "interface",
    "local_directory",
    "log_directory",
    "job_name",
)
_KEYS = {
    "local": {"n_workers", "max_in_flight", "start_timeout"},
    "ssh": {
        "hosts",
        "workers_per_host",
        "remote_python",
        "host",
        "scheduler_port",
        "max_in_flight",
        "start_timeout",
        "connect_options",
        "worker_options",
        "scheduler_options",
    },
    "slurm": {
        *_SLURM_PASSED,
        "cores",
        "memory",
        "walltime",
        "jobs",
        "minimum_jobs",
        "maximum_jobs",
        "max_in_flight",
        "host",
        "worker_host",
        "scheduler_port",
        "start_timeout",
        "worker_timeout",
        "options",
    },
}
#: the clusters --cluster starts (a [local], [ssh] or [slurm] table of --cluster-config)
CLUSTER_KINDS = tuple(_KEYS)
# kwargs srtui sets itself: a user value would break one-job-per-thread or the lifetime rule
_RESERVED_SLURM = {"processes", "walltime", "worker_extra_args", "cores", "memory", "n_workers", "scheduler_options"}
_RESERVED_WORKER = {"nthreads", "n_workers", "nprocs"}


@dataclass
class ClusterConfig:
    kind: str  # local | ssh | slurm
    settings: dict[str, Any] = field(default_factory=dict)
    source: str = "defaults"

    @property
    def max_in_flight(self) -> int | None:
        value = self.settings.get("max_in_flight")
        return None if value is None else _positive_int(self, "max_in_flight", value)

    @property
    def start_timeout(self) -> float:
        return _positive_seconds(self, "start_timeout", START_TIMEOUT_S)

    @property
    def worker_timeout(self) -> float:
        return _positive_seconds(
            self, "worker_timeout", SLURM_WORKER_TIMEOUT_S if self.kind == "slurm" else self.start_timeout
        )

    @property
    def walltime_s(self) -> float | None:
        if self.kind != "slurm":
            return None
        return parse_walltime(self.settings.get("walltime", "01:00:00"), self.source)

    def expected_slots(self) -> int:
        """Job slots the cluster will have once up (its workers x one thread)."""
        s = self.settings
        if self.kind == "local":
            return int(s.get("n_workers") or 1)
        if self.kind == "ssh":
            return max(1, len(s["hosts"]) - 1) * int(s.get("workers_per_host", 1))
        jobs = s.get("jobs", s.get("maximum_jobs", 1))
        return int(jobs) * int(s.get("cores", 1))


def load_cluster_config(kind: str | None, path: Path | None) -> ClusterConfig:
    """Read and check the settings for ``--cluster KIND`` (None: the file's one table, else
    local); BackendError names what is wrong."""
    if kind is not None and kind not in _KEYS:
        raise BackendError(f"--cluster must be local, ssh or slurm, got {kind!r}")
    if path is None:
        if kind not in (None, "local"):
            raise BackendError(
                f'--cluster {kind} needs --cluster-config FILE.toml (see docs/dask.md, "Scaling out with Dask")'
            )
        return ClusterConfig("local")
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise BackendError(f"cannot read --cluster-config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BackendError(f"--cluster-config {path} is not valid TOML: {exc}") from None
    if kind is None:
        tables = [k for k in data if k in _KEYS]
        if len(tables) != 1:
            raise BackendError(
                f"--cluster-config {path}: expected one [local], [ssh] or [slurm] table (or give --cluster)"
            )
        kind = tables[0]
    others = sorted(k for k in data if k != kind)
    if others:
        raise BackendError(f"--cluster-config {path}: expected only a [{kind}] table, found {', '.join(others)}")
    settings = data.get(kind, {})
    if not isinstance(settings, dict):
        raise BackendError(f"--cluster-config {path}: [{kind}] must be a table")
    unknown = sorted(set(settings) - _KEYS[kind])
    if unknown:
        raise BackendError(
            f"--cluster-config {path}: unknown [{kind}] key(s) "
            f"{', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS[kind]))}"
        )
    config = ClusterConfig(kind, dict(settings), str(path))
    _check(config)
    return config


def _positive_int(config: ClusterConfig, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BackendError(f"--cluster-config {config.source}: {key} must be a positive integer, got {value!r}")
    return value


def _positive_seconds(config: ClusterConfig, key: str, default: float) -> float:
    value = config.settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise BackendError(
            f"--cluster-config {config.source}: {key} must be a positive number of seconds, got {value!r}"
        )
    return float(value)


def _check(config: ClusterConfig) -> None:
    s = config.settings
    config.start_timeout, config.worker_timeout  # noqa: B018 - checked here, used at start
    for key in ("host", "worker_host", "remote_python"):
        if key in s and not (isinstance(s[key], str) and s[key]):
            raise BackendError(f"--cluster-config {config.source}: {key} must be a non-empty string")
    for key in (
        "n_workers",
        "workers_per_host",
        "cores",
        "jobs",
        "minimum_jobs",
        "maximum_jobs",
        "max_in_flight",
        "scheduler_port",
    ):
        if key in s:
            _positive_int(config, key, s[key])
    for key in ("connect_options", "worker_options", "scheduler_options", "options"):
        if key in s and not isinstance(s[key], dict):
            raise BackendError(f"--cluster-config {config.source}: [{config.kind}.{key}] must be a table")
    if config.kind == "ssh":
        hosts = s.get("hosts")
        if not isinstance(hosts, list) or len(hosts) < 2 or not all(isinstance(h, str) and h for h in hosts):
            raise BackendError(
                f"--cluster-config {config.source}: ssh hosts must list "
                "the scheduler host then at least one worker host"
            )
        clash = sorted(_RESERVED_WORKER & set(s.get("worker_options", {})))
        if clash:
            raise BackendError(
                f"--cluster-config {config.source}: set workers_per_host, not "
                f"worker_options {', '.join(clash)} (one thread per worker)"
            )
    if config.kind == "slurm":
        if "jobs" in s and ("minimum_jobs" in s or "maximum_jobs" in s):
            raise BackendError(
                f"--cluster-config {config.source}: give either jobs (fixed) or minimum_jobs/maximum_jobs (adaptive)"
            )
        if ("minimum_jobs" in s) != ("maximum_jobs" in s) or s.get("minimum_jobs", 0) > s.get("maximum_jobs", 0):
            raise BackendError(f"--cluster-config {config.source}: adaptive scaling needs minimum_jobs <= maximum_jobs")
        if "memory" not in s:
            raise BackendError(f'--cluster-config {config.source}: slurm needs memory (per SLURM job, e.g. "16GiB")')
        clash = sorted(_RESERVED_SLURM & set(s.get("options", {})))
        if clash:
            raise BackendError(
                f"--cluster-config {config.source}: [slurm.options] may not set {', '.join(clash)} (srtui sets them)"
            )
        parse_walltime(s.get("walltime", "01:00:00"), config.source)
        parse_memory_mb(s["memory"], config.source)


_WALLTIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_walltime(text: Any, source: str = "") -> float:
    """SLURM time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Returns seconds."""
    match = _WALLTIME.match(str(text).strip())
    if not match:
        raise BackendError(f'--cluster-config {source}: walltime {text!r} is not a SLURM time (e.g. "04:00:00")')
    days, a, b, c = match.groups()
    if days is not None:  # D-H[:M[:S]]
        total = int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
    elif c is not None:  # H:M:S
        total = int(a) * 3600 + int(b) * 60 + int(c)
    else:  # M[:S]
        total = int(a) * 60 + int(b or 0)
    if total <= 0:
        raise BackendError(f"--cluster-config {source}: walltime must be positive, got {text!r}")
    return float(total)


def parse_memory_mb(text: Any, source: str = "") -> float:
    """MiB (the unit of --mem-limit) in a size: "16GiB" is 16384, "16GB" (decimal) 15259."""
    from dask.utils import parse_bytes

    try:
        return parse_bytes(str(text)) / 2**20
    except ValueError:
        raise BackendError(f'--cluster-config {source}: memory {text!r} is not a size (e.g. "16GiB")') from None


def job_span_s(limits: Limits) -> float:
    """The longest a job can occupy a worker: wall limit, grace before SIGKILL, overhead."""
    return limits.time_s + limits.grace_s + JOB_OVERHEAD_S


def slurm_lifetime(walltime_s: float) -> tuple[float, float]:
    """(lifetime, stagger) of a SLURM worker: it closes before SLURM's walltime kill."""
    stagger = min(300.0, 0.05 * walltime_s)
    return max(0.0, walltime_s - CLOSE_MARGIN_S - stagger), stagger


def check_limits(config: ClusterConfig, limits: list[Limits]) -> None:
    """Refuse, before anything runs, jobs that cannot fit on one worker of this cluster."""
    if config.kind != "slurm" or not limits:
        return
    walltime = config.walltime_s or 0.0
    lifetime, stagger = slurm_lifetime(walltime)
    shortest_life = lifetime - stagger
    longest = max(limits, key=job_span_s)
    if job_span_s(longest) > shortest_life:
        raise BackendError(
            f"jobs may take {job_span_s(longest):.0f} s (time limit "
            f"{longest.time_s:g} s + grace {longest.grace_s:g} s + "
            f"{JOB_OVERHEAD_S:.0f} s start-up) but a SLURM worker with "
            f"walltime {config.settings.get('walltime', '01:00:00')} "
            f"runs jobs for only {max(shortest_life, 0):.0f} s: raise walltime in {config.source} or lower --time-limit"
        )
    per_worker_mb = parse_memory_mb(config.settings["memory"], config.source) / int(config.settings.get("cores", 1))
    biggest = max(lim.mem_mb for lim in limits)
    if biggest > per_worker_mb:
        raise BackendError(
            f"jobs may use {biggest:g} MiB but each SLURM worker gets {per_worker_mb:.0f} MiB (memory / cores in "
            f"{config.source}; GB are decimal, GiB binary): raise memory or lower --mem-limit"
        )


def local_kwargs(config: ClusterConfig, default_workers: int) -> dict[str, Any]:
    return {
        "n_workers": int(config.settings.get("n_workers") or default_workers),
        "threads_per_worker": 1,  # one job slot per worker process
        "processes": True,
        "memory_limit": 0,  # jobs are limited by the engine; the worker process itself is small
        "dashboard_address": None,
    }


def ssh_kwargs(config: ClusterConfig) -> dict[str, Any]:
    s = config.settings
    # the scheduler listens on (and advertises) the address it was reached by, not the host's
    # default-route address
    scheduler_options = {
        "port": s.get("scheduler_port", 8786),
        "dashboard_address": None,
        "host": s.get("host", s["hosts"][0]),
        **s.get("scheduler_options", {}),
    }
    scheduler_options["allowed_failures"] = 0  # see SCHEDULER_CONFIG
    kwargs: dict[str, Any] = {
        "hosts": list(s["hosts"]),
        "connect_options": dict(s.get("connect_options", {})),
        "worker_options": {
            **s.get("worker_options", {}),
            "n_workers": int(s.get("workers_per_host", 1)),
            "nthreads": 1,
        },
        "scheduler_options": scheduler_options,
    }
    if "remote_python" in s:
        kwargs["remote_python"] = s["remote_python"]
    return kwargs


def slurm_kwargs(config: ClusterConfig) -> tuple[dict[str, Any], dict[str, int]]:
    """SLURMCluster kwargs and how to scale it ({"jobs": n} or {"minimum_jobs", "maximum_jobs"})."""
    s = config.settings
    cores = int(s.get("cores", 1))
    walltime_s = config.walltime_s or 0.0
    lifetime, stagger = slurm_lifetime(walltime_s)
    worker_args = ["--lifetime", f"{int(lifetime)}s", "--lifetime-stagger", f"{int(stagger)}s"]
    if "worker_host" in s:
        worker_args += ["--host", s["worker_host"]]
    scheduler_options: dict[str, Any] = {"dashboard_address": None, "port": int(s.get("scheduler_port", 0))}
    if "host" in s:
        scheduler_options["host"] = s["host"]
    kwargs: dict[str, Any] = {
        **s.get("options", {}),
        "cores": cores,
        "processes": cores,  # one single-threaded worker per core: one job slot each
        "memory": s["memory"],
        "walltime": s.get("walltime", "01:00:00"),
        "worker_extra_args": worker_args,
        "scheduler_options": scheduler_options,
        "n_workers": 0,  # srtui submits the SLURM jobs itself (srtui.engine.backends.slurm_jobs)
    }
    for key in _SLURM_PASSED:
        if key in s:
            kwargs[key] = s[key]
    if "minimum_jobs" in s:
        scale = {"minimum_jobs": int(s["minimum_jobs"]), "maximum_jobs": int(s["maximum_jobs"])}
    else:
        scale = {"jobs": int(s.get("jobs", 1))}
    return kwargs, scale
