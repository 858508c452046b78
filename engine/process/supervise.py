"""The job function: run one job as a hard-limited subprocess and return its outcome as data.

``run_job`` is backend-independent: the local scheduler calls it from a slot thread, the Dask
backend calls it inside a Dask worker on another machine. It reads nothing from and writes
nothing to the workspace store; the driver records the returned ``JobOutcome``.
"""

from __future__ import annotations

import functools
import json
import os
import select
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
from srtui.engine.process import cgroups, held, launch, measure, phases, seal, tree
from srtui.engine.process.worker_env import worker_environment
from srtui.engine.scaling import STAT_KEYS
from srtui.engine.spec import WATCHDOG_MARGIN_S, JobSpec
from srtui.engine.textsafe import encodable

LOG_CAP = 1 << 20  # bytes kept of each of stdout/stderr
#: a job's pid is told (``on_start``: the store's ``worker_pid``, shown by `srtui status`) once it
#: has run this long: a job of a few milliseconds costs no write. What a dead driver's jobs left
#: is found by their pid record and token (srtui.engine.process.tree), written before this
PID_AFTER_S = 0.05
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
    a run after this driver died kills what the job left (srtui.engine.process.tree.sweep_records)."""
    spec = payload.spec
    limits = spec.limits
    scratch = scratch.absolute()
    untrusted.real_dir(scratch.parent)  # a link planted in place of cache/ or cache/jobs is not followed
    untrusted.remove_tree(scratch)  # what an earlier attempt left (a link, a FIFO) goes
    untrusted.real_dir(scratch)
    # the job's own copy of what its method may see: never y_test, the row numbers or the truth
    try:
        untrusted.write_file(scratch / "data.npz", job_view(_task_bytes(payload)))
    except (OSError, ValueError, KeyError, untrusted.UntrustedFileError) as exc:
        return JobOutcome(
            payload.job_id,
            payload.attempt,
            "error",
            socket.gethostname(),
            now_iso(),
            now_iso(),
            0.0,
            error=f"cannot write the job's data: {visible_one_line(exc)}",
        )
    sealing = seal.isolation()
    if sealing.mode != "namespaces":
        seal.protect_driver()
    ref = payload.method_ref or ""
    folders = [ref[len("srbench:") :]] if ref.startswith("srbench:") else []
    limit_env, seal_limits = limits.crossing()  # the one derivation of what the job is told
    job: dict[str, Any] = {
        "spec": spec.to_dict(),
        "data": "data.npz",
        "method_ref": payload.method_ref,
        "seal": seal.config(sealing.mode, seal_limits, payload.allow_network, folders),
    }
    phases.mark("scratch and data")

    tree.become_subreaper()
    token = f"{payload.workspace_token}:{payload.job_id}:{payload.attempt}:{uuid.uuid4().hex[:8]}"
    env = worker_environment(payload.extra_env)
    env.update({tree.TOKEN_ENV: token, **limit_env})
    if core is not None:
        env["SRTUI_CORE"] = str(core)
    cgroup = _job_cgroup(token, int(limits.mem_mb * 2**20))
    phases.mark("environment and cgroup")
    if cgroup is not None:
        env[cgroups.ENV] = cgroup.procs_file  # the worker joins it before any method code runs
    host = socket.gethostname()
    # --- launcher hook (srtui.engine.process.launch): exec a fresh worker, or fork it from a server ---
    if payload.python is not None:  # the method's own environment: srtui's engine, nothing else of ours
        env["PYTHONPATH"] = payload.python_path or ""
    start = launch.starter(payload.launcher, payload.method_ref or spec.method, env, payload.python)
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
        return JobOutcome(
            payload.job_id,
            payload.attempt,
            "error",
            host,
            started_at,
            now_iso(),
            0.0,
            error=f"cannot start worker: {exc}",
        )
    tree.claim_root(proc.pid)
    if cgroup is not None:
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
    tracker = tree.TreeTracker(proc.pid, token, record)
    trackers.append(tracker)
    reason: str | None = None  # why we stopped it: timeout / oom / interrupted
    detail: str | None = None
    kill_at: float | None = None
    waiter = launch.ExitWaiter(proc)  # pidfd + wait4 (exec), the server's report (fork)
    poller = select.poll()
    if waiter.fd is not None:
        poller.register(waiter.fd, select.POLLIN)
    status_word = rusage = None
    peak_files = 0
    try:
        while True:
            # wake at once when the worker exits (pidfd), else every poll_s to check limits
            # (the first wake comes sooner: the pid is told once the job has run PID_AFTER_S)
            wait_s = poll_s if on_start is None else min(poll_s, PID_AFTER_S)
            if waiter.fd is not None:
                poller.poll(int(wait_s * 1000))
            else:
                time.sleep(min(wait_s, 0.05))
            pid, status_word, rusage = waiter.poll()
            if pid == proc.pid:
                break
            status_word = rusage = None
            elapsed = time.monotonic() - t0
            if on_start is not None and elapsed >= PID_AFTER_S:
                on_start(proc.pid)  # informational (the store's worker_pid): the record is the safety
                on_start = None
            rss = tracker.poll()
            files = held.memory_files(p for p in tracker.seen if p not in tracker.gone)  # tmpfs, memfds: in no PSS
            peak_files = max(peak_files, rss + files)
            if reason is None:
                over = held.over_limits(rss, files, limits, scratch, elapsed)
                if over is not None:
                    reason, detail = over
                    kill_at = time.monotonic()  # memory and disk blow-ups are stopped at once
                elif elapsed > limits.time_s:
                    reason, detail = "timeout", f"wall time {elapsed:.2f} s > limit {limits.time_s:g} s"
                    kill_at = time.monotonic() + limits.grace_s
                    tracker.signal_all(signal.SIGTERM)
                elif cancel is not None and cancel.is_set():
                    reason, detail = "interrupted", "stopped by the driver (Ctrl-C)"
                    kill_at = time.monotonic() + limits.grace_s
                    tracker.signal_all(signal.SIGTERM)
            if force is not None and force.is_set() and kill_at is not None:
                kill_at = time.monotonic()
            if kill_at is not None and time.monotonic() >= kill_at:
                if cgroup is not None:
                    cgroup.kill()
                tracker.freeze()
                tracker.signal_all(signal.SIGKILL)
    finally:
        waiter.close()
    wall_s = time.monotonic() - t0
    phases.mark("exit seen")
    proc.returncode = os.waitstatus_to_exitcode(status_word)  # keep Popen consistent
    tree.release_root(proc.pid)
    # the root is gone; whatever of its tree is left (children, escapees) goes now: the whole
    # cgroup at once where there is one (a fork loop outruns any kill by pid), then what is known
    leftover = cgroup.end() if cgroup is not None else []
    leftover += tracker.kill_all()
    if record is not None and not leftover:
        untrusted.remove_tree(record)  # nothing of the job is left to find
    phases.mark("tree swept")
    for r in readers:
        r.join(timeout=2.0)
    peak = max(tracker.peak_rss, peak_files, rusage.ru_maxrss * 1024, cgroup.peak_bytes() if cgroup else 0)
    if reason is None:  # a job that wrote past its disk limit and ended before a poll saw it
        over = held.over_limits(0, 0, limits, scratch, wall_s)
        reason, detail = over if over is not None else (None, detail)
    if cgroup is not None:
        if reason is None and cgroup.oom_killed():
            reason, detail = (
                "oom",
                f"the kernel's cgroup OOM killer stopped the job (memory.max {limits.mem_mb:.0f} MB)",
            )
        cgroup.remove()
    rc = proc.returncode
    outcome = JobOutcome(
        job_id=payload.job_id,
        attempt=payload.attempt,
        status="ok",
        host=host,
        started_at=started_at,
        ended_at=now_iso(),
        wall_s=wall_s,
        cpu_s=rusage.ru_utime + rusage.ru_stime,
        returncode=rc,
        signal=-rc if rc < 0 else None,
        peak_rss_mb=peak / 2**20,
        limit_detail=detail,
        stdout=readers[0].value(),
        stderr=readers[1].value(),
        leftover_pids=leftover,
    )
    if reason is None and rc == -signal.SIGKILL and wall_s >= limits.time_s + limits.grace_s:
        # killed past the wall limit and the grace without the driver's word: the seal's watchdog
        # (srtui.engine.process.seal), which ends a job the driver could not (it was stopped, say)
        reason, detail = (
            "timeout",
            (
                f"killed by its watchdog at {wall_s:.2f} s (wall limit {limits.time_s:g} s + grace {limits.grace_s:g} s"
                f" + {WATCHDOG_MARGIN_S:g} s): the driver did not end it in time"
            ),
        )
        outcome.limit_detail = detail
    outcome.status = _classify(outcome, reason, limits.effective_cpu_s)
    if reason is None and getattr(proc, "lost", None):  # fork: its server died under it (srtui.engine.process.launch)
        outcome.status, outcome.error = "lost", proc.lost
    if outcome.status == "ok":
        _read_result(scratch, outcome)
        # srtui's figures, measured here (srtui.engine.process.measure), never the job's own
        outcome.fit_s, outcome.energy_j, outcome.energy_method = clock.figures(
            t0 + wall_s, t0, outcome.cpu_s, outcome.peak_rss_mb
        )
    outcome.notes = measure.provenance(outcome.notes, payload.python, sealing.mode, payload.allow_network)
    phases.mark("logs and result read")
    return outcome


def memory_line() -> str:
    """The capability report's line on memory: which accounting is in force here."""
    base = _cgroup_base()
    return held.memory_line(base is not None and "memory" in base[1])


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
