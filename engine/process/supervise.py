"""The job function: run one job as a hard-limited subprocess and return its outcome as data.

``run_job`` is backend-independent: the local scheduler calls it from a slot thread, the Dask
backend calls it inside a Dask worker on another machine. It reads nothing from and writes
nothing to the workspace store; the driver records the returned ``JobOutcome``.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from srtui.engine import untrusted
from srtui.engine.process import cgroups, held, launch, measure, phases, seal, tree, watch
from srtui.engine.process.worker_env import worker_environment
from srtui.engine.scaling import STAT_KEYS
from srtui.engine.spec import WATCHDOG_MARGIN_S, JobSpec, Limits
from srtui.engine.textsafe import encodable

LOG_CAP = 1 << 20  # bytes kept of each of stdout/stderr
TAIL_KEEP = 64 << 10  # of which the last bytes are always kept
STDERR_TAIL_CHARS = 2000


@dataclass
class JobPayload:
    """Everything a job needs (picklable: it may travel to a Dask worker)."""

    spec: JobSpec
    attempt: int
    workspace_token: str  # prefix of the job token: sweeps find this workspace's processes
    data_path: str | None = None  # local backend: the npz in the workspace cache
    data_bytes: bytes | None = None  # remote backends: the npz itself
    method_ref: str | None = None  # how to load the method if not by spec name (srbench folders)
    extra_env: dict[str, str] = field(default_factory=dict)
    launcher: str = "exec"  # "fork": forked by a pre-imported server (srtui.engine.process.launch); same limits
    #: the method's own environment's interpreter and its worker path (srtui.engine.methods.environments)
    python: str | None = None
    python_path: str | None = None
    allow_network: bool = False  # --allow-network METHOD: the job keeps the host's network

    @property
    def job_id(self) -> str:
        return self.spec.job_id


@dataclass
class JobOutcome:
    job_id: str
    attempt: int
    status: str
    host: str
    started_at: str
    ended_at: str
    wall_s: float
    cpu_s: float | None = None
    returncode: int | None = None
    signal: int | None = None
    peak_rss_mb: float | None = None
    limit_detail: str | None = None
    error: str | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    model: str | None = None
    dialect: str = "python"
    pareto: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    fit_s: float | None = (
        None  # the method's load, fit and predictions, timed by the driver (srtui.engine.process.measure)
    )
    energy_j: float | None = None  # joules over fit_s, measured by the driver (srtui.engine.process.energy)
    energy_method: str | None = None  # "rapl" or "estimate"
    train_pred: np.ndarray | None = None
    test_pred: np.ndarray | None = None
    leftover_pids: list[int] = field(default_factory=list)

    @property
    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL_CHARS * 2 :].decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]


class CappedReader(threading.Thread):
    """Drains a pipe, keeping the first LOG_CAP - TAIL_KEEP bytes and the last TAIL_KEEP bytes."""

    def __init__(self, pipe: IO[bytes], on_mark: Callable[[bytes], None] | None = None) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.on_mark = on_mark  # told each of the worker's marks it reads (srtui.engine.process.measure)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.dropped = 0

    def run(self) -> None:
        head_cap = LOG_CAP - TAIL_KEEP
        seen = b""
        while chunk := self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536):
            if self.on_mark is not None:
                for mark in measure.MARKS:
                    found, chunk = measure.find_mark(seen, chunk, mark)
                    if found:
                        self.on_mark(mark)
                seen = (seen + chunk)[-64:]
            room = head_cap - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail.append(chunk)
                self.tail_len += len(chunk)
                while self.tail_len - len(self.tail[0]) >= TAIL_KEEP:
                    self.dropped += len(self.tail[0])
                    self.tail_len -= len(self.tail.popleft())
        self.pipe.close()

    def value(self) -> bytes:
        tail = b"".join(self.tail)
        if len(tail) > TAIL_KEEP:
            self.dropped += len(tail) - TAIL_KEEP
            tail = tail[-TAIL_KEEP:]
        marker = f"\n[srtui: {self.dropped} bytes dropped]\n".encode() if self.dropped else b""
        return bytes(self.head) + marker + tail


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_CGROUP_BASE: tuple[Path, set[str]] | bool | None = False


def _cgroup_base() -> tuple[Path, set[str]] | None:
    """Where job cgroups go (srtui.engine.process.cgroups), looked up once per driver."""
    global _CGROUP_BASE
    if _CGROUP_BASE is False:
        _CGROUP_BASE = cgroups.base()
    return _CGROUP_BASE  # type: ignore[return-value]


def _job_cgroup(token: str, mem_bytes: int) -> cgroups.JobCgroup | None:
    base = _cgroup_base()
    if base is None:
        return None
    try:
        return cgroups.JobCgroup(base[0], "job-" + token.replace(":", "-")[-60:], base[1], mem_bytes)
    except OSError:
        return None


@dataclass
class Started:
    """A job whose worker runs: what the steps after its start share."""

    proc: Any  # a Popen (exec) or a launch.ForkedProcess (fork)
    cgroup: cgroups.JobCgroup | None
    tracker: tree.TreeTracker
    readers: list[CappedReader]
    clock: measure.FitClock
    host: str
    started_at: str
    t0: float  # monotonic, at the start
    record: Path | None


def run_job(
    payload: JobPayload,
    scratch: Path,
    *,
    core: int | None = None,
    cancel: threading.Event | None = None,
    force: threading.Event | None = None,
    on_start: Callable[[int], None] | None = None,
    poll_s: float = 0.25,
    record: Path | None = None,
) -> JobOutcome:
    """Run one job under its limits; always returns an outcome, never raises for job failures.
    ``record``: where the job's processes are written down while it runs (removed at its end), so
    a run after this driver died kills what the job left (srtui.engine.process.tree.sweep_records).
    The steps: its scratch and data, its configuration, its start, the wait for its exit
    (srtui.engine.process.watch), the sweep of what it left, its outcome."""
    limits = payload.spec.limits
    scratch = scratch.absolute()
    unwritten = _write_data(payload, scratch)
    if unwritten is not None:
        return unwritten
    sealing = seal.isolation()
    if sealing.mode != "namespaces":
        seal.protect_driver()
    job = _job_config(payload, sealing.mode)
    phases.mark("scratch and data")
    started = _start(payload, scratch, job, core, record)
    if isinstance(started, JobOutcome):
        return started
    end = watch.wait_for_exit(
        started.proc,
        started.tracker,
        started.cgroup,
        limits,
        scratch,
        started.t0,
        cancel=cancel,
        force=force,
        on_start=on_start,
        poll_s=poll_s,
    )
    phases.mark("exit seen")
    leftover = _sweep(started, end)
    outcome = _outcome(payload, scratch, started, end, leftover)
    outcome.notes = measure.provenance(outcome.notes, payload.python, sealing.mode, payload.allow_network)
    phases.mark("logs and result read")
    return outcome


def _error(payload: JobPayload, why: str, host: str | None = None, started_at: str | None = None) -> JobOutcome:
    """The outcome of a job that could not start (``why`` its one line)."""
    now = now_iso()
    return JobOutcome(
        payload.job_id, payload.attempt, "error", host or socket.gethostname(), started_at or now, now, 0.0, error=why
    )


def _write_data(payload: JobPayload, scratch: Path) -> JobOutcome | None:
    """A fresh scratch dir with the job's own copy of what its method may see (never y_test,
    the row numbers or the truth); the job's error outcome if the data cannot be written."""
    untrusted.real_dir(scratch.parent)  # a link planted in place of cache/ or cache/jobs is not followed
    untrusted.remove_tree(scratch)  # what an earlier attempt left (a link, a FIFO) goes
    untrusted.real_dir(scratch)
    try:
        untrusted.write_file(scratch / "data.npz", job_view(_task_bytes(payload)))
    except (OSError, ValueError, KeyError, untrusted.UntrustedFileError) as exc:
        return _error(payload, f"cannot write the job's data: {visible_one_line(exc)}")
    return None


def _job_config(payload: JobPayload, mode: str) -> dict[str, Any]:
    """What job.json tells the worker: its spec, data, method and seal."""
    ref = payload.method_ref or ""
    folders = [ref[len("srbench:") :]] if ref.startswith("srbench:") else []
    _limit_env, seal_limits = payload.spec.limits.crossing()  # the one derivation of what the job is told
    return {
        "spec": payload.spec.to_dict(),
        "data": "data.npz",
        "method_ref": payload.method_ref,
        "seal": seal.config(mode, seal_limits, payload.allow_network, folders),
    }


def _environment(payload: JobPayload, core: int | None) -> tuple[str, dict[str, str], cgroups.JobCgroup | None]:
    """The job's token, its worker's environment and its cgroup (None where there is none)."""
    tree.become_subreaper()
    token = f"{payload.workspace_token}:{payload.job_id}:{payload.attempt}:{uuid.uuid4().hex[:8]}"
    limit_env, _seal_limits = payload.spec.limits.crossing()
    env = worker_environment(payload.extra_env)
    env.update({tree.TOKEN_ENV: token, **limit_env})
    if core is not None:
        env["SRTUI_CORE"] = str(core)
    cgroup = _job_cgroup(token, int(payload.spec.limits.mem_mb * 2**20))
    phases.mark("environment and cgroup")
    if cgroup is not None:
        env[cgroups.ENV] = cgroup.procs_file  # the worker joins it before any method code runs
    if payload.python is not None:  # the method's own environment: srtui's engine, nothing else of ours
        env["PYTHONPATH"] = payload.python_path or ""
    return token, env, cgroup


def _start(
    payload: JobPayload, scratch: Path, job: dict[str, Any], core: int | None, record: Path | None
) -> Started | JobOutcome:
    """Start the worker (exec'd, or forked by its server: srtui.engine.process.launch), its readers
    and its pid record; the job's error outcome if it cannot start."""
    token, env, cgroup = _environment(payload, core)
    host = socket.gethostname()
    start = launch.starter(payload.launcher, payload.method_ref or payload.spec.method, env, payload.python)
    phases.mark("launcher ready")
    job["spawned_at"] = time.time()  # the worker takes its own start-up time out of the budget
    untrusted.write_file(scratch / "job.json", json.dumps(job).encode())
    started_at = now_iso()
    t0 = time.monotonic()
    try:
        proc = start(scratch)
        phases.mark("job.json, worker started")
    except OSError as exc:
        if cgroup is not None:
            cgroup.remove()
        return _error(payload, f"cannot start worker: {exc}", host, started_at)
    tree.claim_root(proc.pid)
    if cgroup is not None:
        # moved here too, at once: the move costs the kernel an RCU grace period, paid here on
        # the slot while the worker sets up; its own join (job_worker._harden) then mostly finds it in
        cgroup.add(proc.pid)
    trackers: list[tree.TreeTracker] = []  # (made below; the clock reads its pids from a reader thread)
    folder = (payload.method_ref or "").startswith("srbench:")  # untrusted code: its end mark is not
    clock = measure.FitClock(lambda: [p for t in trackers for p in list(t.seen) if p not in t.gone], folder)
    readers = [CappedReader(proc.stdout, clock.mark), CappedReader(proc.stderr)]
    for r in readers:
        r.start()
    phases.mark("readers started")
    if record is not None:
        try:
            tree.start_record(record)
        except (OSError, untrusted.UntrustedFileError):
            record = None  # the token sweep still finds what keeps its environment
    phases.mark("pid record")
    trackers.append(tree.TreeTracker(proc.pid, token, record))
    return Started(proc, cgroup, trackers[0], readers, clock, host, started_at, t0, record)


def _sweep(started: Started, end: watch.Exit) -> list[int]:
    """The root is gone; whatever of its tree is left (children, escapees) goes now: the whole
    cgroup at once where there is one (a fork loop outruns any kill by pid), then what is
    known. Returns the pids that outlived it all."""
    proc, cgroup = started.proc, started.cgroup
    proc.returncode = os.waitstatus_to_exitcode(end.status_word)  # keep Popen consistent
    tree.release_root(proc.pid)
    leftover = cgroup.end() if cgroup is not None else []
    leftover += started.tracker.kill_all()
    if started.record is not None and not leftover:
        untrusted.remove_tree(started.record)  # nothing of the job is left to find
    phases.mark("tree swept")
    for r in started.readers:
        r.join(timeout=2.0)
    return leftover


def _outcome(payload: JobPayload, scratch: Path, started: Started, end: watch.Exit, leftover: list[int]) -> JobOutcome:
    """The job's outcome: its figures, its status (a limit, a crash, the watchdog, a lost
    server) and, when ok, what its worker wrote."""
    limits, cgroup, rusage = payload.spec.limits, started.cgroup, end.rusage
    peak = max(started.tracker.peak_rss, end.peak_files, rusage.ru_maxrss * 1024, cgroup.peak_bytes() if cgroup else 0)
    reason, detail = _end_reason(end, limits, scratch, cgroup)
    rc = started.proc.returncode
    outcome = JobOutcome(
        job_id=payload.job_id,
        attempt=payload.attempt,
        status="ok",
        host=started.host,
        started_at=started.started_at,
        ended_at=now_iso(),
        wall_s=end.wall_s,
        cpu_s=rusage.ru_utime + rusage.ru_stime,
        returncode=rc,
        signal=-rc if rc < 0 else None,
        peak_rss_mb=peak / 2**20,
        limit_detail=detail,
        stdout=started.readers[0].value(),
        stderr=started.readers[1].value(),
        leftover_pids=leftover,
    )
    if reason is None and rc == -signal.SIGKILL and end.wall_s >= limits.time_s + limits.grace_s:
        # killed past the wall limit and the grace without the driver's word: the seal's watchdog
        # (srtui.engine.process.seal), which ends a job the driver could not (it was stopped, say)
        reason, detail = (
            "timeout",
            (
                f"killed by its watchdog at {end.wall_s:.2f} s (wall limit {limits.time_s:g} s + grace "
                f"{limits.grace_s:g} s + {WATCHDOG_MARGIN_S:g} s): the driver did not end it in time"
            ),
        )
        outcome.limit_detail = detail
    outcome.status = _classify(outcome, reason, limits.effective_cpu_s)
    if reason is None and getattr(
        started.proc, "lost", None
    ):  # fork: its server died under it (srtui.engine.process.launch)
        outcome.status, outcome.error = "lost", started.proc.lost
    if outcome.status == "ok":
        _read_result(scratch, outcome)
        # srtui's figures, measured here (srtui.engine.process.measure), never the job's own
        outcome.fit_s, outcome.energy_j, outcome.energy_method = started.clock.figures(
            started.t0 + end.wall_s, started.t0, outcome.cpu_s, outcome.peak_rss_mb
        )
    return outcome


def _end_reason(
    end: watch.Exit, limits: Limits, scratch: Path, cgroup: cgroups.JobCgroup | None
) -> tuple[str | None, str | None]:
    """Why srtui ended the job (None: it ended by itself), with what the end shows: a disk limit
    passed after the last check, the kernel's OOM killer; the job's cgroup goes."""
    reason, detail = end.reason, end.detail
    if reason is None:  # a job that wrote past its disk limit and ended before a poll saw it
        over = held.over_limits(0, 0, limits, scratch, end.wall_s)
        reason, detail = over if over is not None else (None, detail)
    if cgroup is not None:
        if reason is None and cgroup.oom_killed():
            reason, detail = (
                "oom",
                f"the kernel's cgroup OOM killer stopped the job (memory.max {limits.mem_mb:.0f} MB)",
            )
        cgroup.remove()
    return reason, detail


def _task_bytes(payload: JobPayload) -> bytes:
    if payload.data_bytes is not None:
        return payload.data_bytes
    if not payload.data_path:
        raise ValueError("the job has no data")
    return untrusted.read_file(Path(payload.data_path), TASK_DATA_CAP)


#: the largest task data file a job reads when its bytes were not handed over (a file of the
#: workspace cache this driver did not write in this run)
TASK_DATA_CAP = 1 << 36


#: the arrays of a task's data file that a job's method may see (the scaling statistics are
#: those of its training rows); y_test, the row numbers and anything else stay with the driver
JOB_ARRAYS = ("X_train", "y_train", "X_test", "feature_names", *STAT_KEYS)


@functools.lru_cache(maxsize=8)
def job_view(data: bytes) -> bytes:
    """A task's data file as a job gets it: only ``JOB_ARRAYS`` (the same bytes for the same
    task, computed once per task and driver)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        names = {n.removesuffix(".npy"): n for n in src.namelist()}
        for key in ("X_train", "y_train", "X_test", "feature_names"):
            if key not in names:
                raise KeyError(f"the task's data has no {key}")
        for key in JOB_ARRAYS:
            if key in names:
                info = zipfile.ZipInfo(names[key], date_time=(1980, 1, 1, 0, 0, 0))
                dst.writestr(info, src.read(names[key]))
    return out.getvalue()


def _classify(outcome: JobOutcome, reason: str | None, cpu_limit: int) -> str:
    if reason is not None:
        return reason
    if outcome.leftover_pids:  # never ok while a process the job created is alive
        outcome.error = (
            f"{len(outcome.leftover_pids)} process(es) of the job survived SIGKILL: {outcome.leftover_pids[:5]}"
        )
        return "error"
    rc = outcome.returncode or 0
    if rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and (outcome.cpu_s or 0) >= cpu_limit):
        outcome.limit_detail = f"CPU time {outcome.cpu_s:.1f} s reached limit {cpu_limit} s"
        return "cpu_timeout"
    if rc < 0:
        return "crashed"
    if rc > 0:
        outcome.error = _last_line(outcome.stderr) or f"worker exited with code {rc}"
        return "error"
    return "ok"


def _last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""


#: bytes of predictions.npz the driver reads at most (16M float64 rows per split)
PREDICTIONS_FILE_CAP = 256 << 20
#: objects/arrays and items of result.json the driver parses at most (the worker writes ~1000
#: Pareto points and a few notes): the file's byte cap alone would allow gigabytes of objects
MAX_JSON_CONTAINERS = 100_000
MAX_JSON_ITEMS = 4_000_000


def _read_result(scratch: Path, outcome: JobOutcome) -> None:
    """Read the worker's files as data, as untrusted files (srtui.engine.untrusted: no link followed,
    no FIFO waited on, nothing read past its cap). Anything else than the worker's two regular
    files within their caps makes the job an error, never a crash or a hang of the driver."""
    from srtui.engine.process.job_worker import PARETO_CAP, RESULT_FILE_CAP
    from srtui.engine.spec import MODEL_CAP

    try:
        dir_fd = untrusted.open_dir(scratch)
        try:
            raw = untrusted.read_capped(dir_fd, "result.json", RESULT_FILE_CAP)
            preds = untrusted.read_capped(dir_fd, "predictions.npz", PREDICTIONS_FILE_CAP)
        finally:
            os.close(dir_fd)
        if raw.count(b"{") + raw.count(b"[") > MAX_JSON_CONTAINERS or raw.count(b",") > MAX_JSON_ITEMS:
            # a few MB of "{}," would be gigabytes of Python objects in the driver
            raise untrusted.UntrustedFileError("result.json holds too many values")
        result = json.loads(raw)
        vectors = untrusted.load_vectors(preds, ("train_pred", "test_pred"), PREDICTIONS_FILE_CAP)
    except (OSError, ValueError, RecursionError, untrusted.UntrustedFileError) as exc:
        outcome.status, outcome.error = "error", f"worker result unreadable: {visible_one_line(exc)}"
        return
    outcome.train_pred, outcome.test_pred = vectors["train_pred"], vectors["test_pred"]
    if not isinstance(result, dict):
        outcome.status, outcome.error = "error", "worker result unreadable: not a JSON object"
        return
    result = encodable(result)  # JSON may carry lone surrogates, which the store cannot encode
    model = result.get("model")
    outcome.model = model[:MODEL_CAP] if isinstance(model, str) else None
    outcome.dialect = str(result.get("dialect") or "python")[:40]
    phases.add_worker(result.get("timing"))
    outcome.pareto = [p for p in result.get("pareto") or [] if isinstance(p, dict)][:PARETO_CAP]
    notes = result.get("notes")
    outcome.notes = notes if isinstance(notes, dict) else {}
    fit_s = result.get("fit_s")
    if isinstance(fit_s, (int, float)):  # the method's own timer: kept as its figure, read by no rule
        outcome.notes["reported_fit_s"] = float(fit_s)


def visible_one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message as one line of at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
