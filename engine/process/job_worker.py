"""The job worker: runs one method fit in a fresh interpreter
(``python -m srtui.engine.process.job_worker JOBDIR``).

Everything the method could break stays in this process tree. The limits that only the process
itself can set without ``preexec_fn`` are applied first, before numpy (or anything that starts
threads) is imported: parent-death signal, CPU-time rlimit, one-core affinity. Thread-count
variables arrive already set in the environment.

Output contract (read by srtui.engine.process.job_files as data, never unpickled):
    JOBDIR/predictions.npz   train_pred, test_pred (float64)
    JOBDIR/result.json       written last and atomically: its presence means the fit completed
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

#: written to stdout before the method loads: the driver's fit clock (srtui.engine.process.measure)
FIT_MARK = b"\x1e[srtui: the method loads]\n"
FIT_END = b"\x1e[srtui: the result is written]\n"  # (srtui's own adapters: see srtui.engine.process.measure)
#: ceilings of what a method's result may carry (characters / entries; the model's: MODEL_CAP, in
#: srtui.engine.spec), and the driver reads every result
PARETO_EXPRESSION_CAP = 20_000
PARETO_CAP = 1000
RESULT_FILE_CAP = 64 << 20  # bytes of result.json the driver reads at most
#: (phase, unix time, CPU seconds of the process, pid) marks of this worker, written to
#: result.json as ``timing`` (read by the driver only when it profiles phases:
#: srtui.engine.process.phases; a sealed job's phases span processes, whose CPU clocks differ)
TIMING: list[tuple[str, float, float, int]] = []


def mark(name: str) -> None:
    import time

    TIMING.append((name, time.time(), time.process_time(), os.getpid()))


def _harden() -> None:
    import ctypes
    import resource

    from srtui.engine.process import cgroups
    from srtui.engine.spec import CPU_ENV

    cgroups.join()  # first: nothing of the method's may start outside the job's cgroup
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the launching thread
    # PR_SET_CHILD_SUBREAPER: whatever the method starts and orphans (double fork, setsid, a
    # cleared environment) is re-parented to this worker, so it stays in the job's tree
    libc.prctl(36, 1, 0, 0, 0)
    parent = os.environ.get("SRTUI_PARENT_PID")
    # (PID 2 of a namespace its fork server made, srtui.engine.process.job_inits, sees no parent: 0)
    if parent and os.getppid() not in (int(parent), 0):
        sys.exit(70)  # the driver died before we armed the death signal
    cpu = int(os.environ.get(CPU_ENV, "0"))
    if cpu > 0:
        # soft limit -> SIGXCPU (recorded as cpu_timeout), hard limit a little later -> SIGKILL
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    core = os.environ.get("SRTUI_CORE")
    if core:
        try:
            os.sched_setaffinity(0, {int(core)})
        except OSError:
            pass  # the core left our allowed set (cpuset change): run unpinned, the driver notes it


def enter(jobdir: str, in_own_pid_ns: bool = False) -> str:
    """The worker's limits, then the job's seal (srtui.engine.process.seal): before any of the
    method's code, under either launcher. Returns the job's folder as the job sees it."""
    _harden()
    from srtui.engine.process import seal

    where = seal.enter(jobdir, in_own_pid_ns)
    mark("sealed")
    return where


def _write_atomic(path: Path, data: bytes) -> None:
    # no fsync: the driver reads the file on this host as soon as the worker exits (the page
    # cache serves it); after a host crash the job is re-run, never read from here
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _cpu_seconds() -> float:
    """CPU seconds of this process (all its threads) and of its waited-for children."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_rss_mb() -> float:
    import resource

    return (
        max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        / 1024
    )


def run(jobdir_arg: str) -> int:
    import io
    import json
    import time
    from pathlib import Path

    import numpy as np

    from srtui.engine import scaling
    from srtui.engine.methods import registry
    from srtui.engine.process import energy
    from srtui.engine.spec import MODEL_CAP, JobSpec

    mark("imports")
    jobdir = Path(jobdir_arg)
    job = json.loads((jobdir / "job.json").read_text())
    spec = JobSpec.from_dict(job["spec"])
    params = dict(spec.params)
    option = scaling.pop_option(params)  # a protocol's scaling, not a method parameter
    with np.load(jobdir / job["data"], allow_pickle=False) as data:
        X_train, y_train, X_test = data["X_train"], data["y_train"], data["X_test"]
        feature_names = [str(n) for n in data["feature_names"]]
        scaler = scaling.Scaling.for_job(option, scaling.data_arrays(data))

    mark("data")
    # the driver's fit clock starts when it reads FIT_MARK (srtui.engine.process.measure): before any
    # code of a method folder (untrusted: loading it runs it, and nothing it does later can move
    # the driver's reading earlier); for srtui's own adapters, once their libraries are imported
    folder = str(job.get("method_ref") or "").startswith(registry.SRBENCH_PREFIX)
    if folder:
        os.write(1, FIT_MARK)
    method = registry.load(job.get("method_ref") or spec.method)
    params = {**method.default_params, **params}
    method.preload()  # fit_s times the fit alone, not the first import of the method's library
    mark("method loaded")
    if not folder:
        os.write(1, FIT_MARK)
    # interpreter start-up and imports count against the wall limit: on a loaded machine they
    # take seconds, so the method gets what is left of its budget, not the nominal figure
    fit_budget = spec.limits.fit_budget.after(time.time() - float(job.get("spawned_at", time.time())))
    # SRBench 2.0 brackets `fit` alone with its timer and its eco2AI tracker: so do we, reading
    # the energy counters once before and once after (no sampling thread)
    X_fit, y_fit = (X_train, y_train) if scaler is None else (scaler.transform_x(X_train), scaler.transform_y(y_train))
    meter, cpu0 = energy.start(), _cpu_seconds()
    t0 = time.perf_counter()
    fitted = method.fit(X_fit, y_fit, feature_names, spec.seed, fit_budget, params)
    fit_s = time.perf_counter() - t0
    energy_j, energy_method = energy.finish(meter, _cpu_seconds() - cpu0, fit_s, _peak_rss_mb())
    mark("fit")

    def predict(X: np.ndarray) -> np.ndarray:
        out = np.asarray(fitted.predict(X if scaler is None else scaler.transform_x(X)), dtype=np.float64).reshape(-1)
        out = out if scaler is None else scaler.inverse_y(out)
        if out.shape[0] != X.shape[0]:
            raise ValueError(f"predict returned {out.shape[0]} values for {X.shape[0]} rows")
        return out

    train_pred, test_pred = predict(X_train), predict(X_test)
    mark("predictions")
    buf = io.BytesIO()
    np.savez(buf, train_pred=train_pred, test_pred=test_pred)
    _write_atomic(jobdir / "predictions.npz", buf.getvalue())
    notes = dict(fitted.notes or {})
    model = fitted.expression
    if isinstance(model, str) and len(model) > MODEL_CAP:
        notes["model_truncated_from"] = len(model)  # shown as too large; the driver stays small
        model = model[:MODEL_CAP]
    pareto = []
    for p in list(fitted.pareto or [])[:PARETO_CAP]:
        text = str(p.expression)
        point = {"expression": text[:PARETO_EXPRESSION_CAP], "complexity": float(p.complexity), "loss": float(p.loss)}
        if len(text) > PARETO_EXPRESSION_CAP:
            point["too_large"] = len(text)
        pareto.append(point)
    if len(fitted.pareto or []) > PARETO_CAP:
        notes["pareto_truncated_from"] = len(fitted.pareto)
    result = {
        "model": model,
        "dialect": fitted.dialect,
        "pareto": pareto,
        "notes": notes,
        "fit_s": fit_s,
        "energy_j": energy_j,
        "energy_method": energy_method,
        "method_version": method.version(),
        "timing": [*TIMING, ("result files", time.time(), time.process_time(), os.getpid())],
    }
    _write_atomic(jobdir / "result.json", json.dumps(result, default=str).encode())
    if not folder:  # srtui's own adapter: the fit clock stops here, not at the interpreter's exit
        os.write(1, FIT_END)
    return 0


def _kill_descendants(wait_s: float = 2.0) -> None:
    """SIGKILL every process still in this worker's tree (as subreaper, that is every process
    the method started, escaped or not), and reap them: nothing outlives the fit."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        pids = _descendants(os.getpid())
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:  # reap whatever has exited (ours, adopted or not)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not pids or time.monotonic() > deadline:
            return
        time.sleep(0.02)


def _descendants(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        parent = stack.pop()
        try:
            for tid in os.listdir(f"/proc/{parent}/task"):
                with open(f"/proc/{parent}/task/{tid}/children") as fh:
                    children = [int(p) for p in fh.read().split()]
                out.extend(children)
                stack.extend(children)
        except (OSError, ValueError):
            continue
    return out


def main() -> None:

    mark("started")
    if len(sys.argv) != 2:
        print("usage: python -m srtui.engine.process.job_worker JOBDIR", file=sys.stderr)
        sys.exit(64)
    jobdir = enter(sys.argv[1])
    if jobdir != sys.argv[1] and sys.path and not sys.flags.safe_path:  # srtui starts it with -P
        sys.path[0] = jobdir  # `python -m` put the folder's outside name first
    try:
        code = run(jobdir)
    finally:
        _kill_descendants()
    sys.exit(code)


if __name__ == "__main__":
    main()
