"""`srtui run`, `srtui status`, `srtui results`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from srtui.cli.common import RAW_HELP, WorkspaceOption, fail


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        fail("an empty list of names was given")
    return names


def run(
    suite: Annotated[str, typer.Argument(help="Built-in suite name or path to a suite .toml file.")],
    workspace: WorkspaceOption = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Parallel jobs (default: usable cores).")] = None,
    methods: Annotated[str | None, typer.Option(help="Comma-separated methods (default: the suite's).")] = None,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated tasks (default: the suite's).")] = None,
    seeds: Annotated[int | None, typer.Option(help="Number of seeds (default: the suite's).")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Wall-time limit per job, seconds.")] = None,
    mem_limit: Annotated[float | None, typer.Option("--mem-limit", help="Memory limit of a job's process tree, MB.")] = None,
    cpu_limit: Annotated[float | None, typer.Option("--cpu-limit", help="CPU-time limit per process, seconds.")] = None,
    grace: Annotated[float | None, typer.Option("--grace", help="Seconds between SIGTERM and SIGKILL.")] = None,
    method_dir: Annotated[list[Path] | None, typer.Option("--method-dir", help="SRBench method folder (repeatable).")] = None,
    tuned: Annotated[bool | None, typer.Option("--tuned/--untuned", help="Method folders: use their _params.py (SRBench's --tuned; default: the suite's).")] = None,
    srbench_test: Annotated[bool | None, typer.Option("--srbench-test/--no-srbench-test", help="Method folders: apply their eval_kwargs test_params (SRBench's -test).")] = None,
    srbench_scaling: Annotated[str | None, typer.Option("--srbench-scaling", help="Method folders: reference (scale X and y, as SRBench 2.0 ran), folder (their eval_kwargs) or none.")] = None,
    oversubscribe: Annotated[bool, typer.Option("--oversubscribe", help="Allow --jobs above the usable cores.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would run; write nothing.")] = False,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Re-run error/timeout/cpu_timeout/oom/crashed jobs.")] = False,
    backend: Annotated[str | None, typer.Option(help="local (subprocesses here) or dask (implied by the cluster options).")] = None,
    scheduler: Annotated[str | None, typer.Option(help="dask: address of a running scheduler, tcp://HOST:8786.")] = None,
    cluster: Annotated[str | None, typer.Option(help="dask: start a cluster: local, ssh or slurm.")] = None,
    cluster_config: Annotated[Path | None, typer.Option("--cluster-config", help="dask: cluster settings (TOML; its table names the cluster).")] = None,
    protocol: Annotated[str | None, typer.Option(help="none or srbench2025 (tuning by grid search CV; default: the suite's).")] = None,
) -> None:
    """Run a suite's methods x tasks x seeds as isolated, hard-limited jobs (resumable)."""
    import threading

    from engine.workspace import WorkspaceError, resolve
    from srtui import runner
    from srtui.cli.progress import RunProgress

    ws = resolve(workspace)
    req = runner.RunRequest(
        suite=suite, methods=_split(methods), tasks=_split(tasks), seeds=seeds, time_limit=time_limit,
        mem_limit=mem_limit, cpu_limit=cpu_limit, grace=grace, jobs=jobs, retry_failed=retry_failed,
        method_dirs=list(method_dir or []), srbench={"tuned": tuned, "test": srbench_test, "scaling": srbench_scaling},
        backend=backend, scheduler=scheduler, cluster=cluster,
        cluster_config=cluster_config, oversubscribe=oversubscribe, protocol=protocol,
    )
    try:
        if not dry_run:
            ws.ensure()  # an unwritable place fails here, before anything else
        plan = runner.plan_run(ws, req, write_data=not dry_run)
    except (runner.RunError, WorkspaceError) as exc:
        fail(str(exc))
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    if dry_run:
        _print_dry_run(plan, req)
        return
    cancel, force = threading.Event(), threading.Event()
    progress = RunProgress(plan)
    runner.install_interrupt_handlers(cancel, force, progress.notify)
    try:
        with progress:
            result = runner.execute(plan, req, cancel=cancel, force=force, on_state=progress.update, on_metrics=progress.notify)
    except runner.RunInterrupted as exc:
        print(f"srtui: {exc}", file=sys.stderr)
        raise typer.Exit(130) from None
    except runner.RunError as exc:
        fail(str(exc))
    progress.summary(result)
    if result.interrupted:
        raise typer.Exit(130)


def _print_dry_run(plan, req) -> None:
    from results.store import Store, StoreError, needs_run

    states: dict[str, tuple[str, int]] = {}
    if plan.workspace.exists():
        try:
            store = Store(plan.workspace, readonly=True)
            states = store.states([s.job_id for s in plan.specs])
            store.close()
        except StoreError as exc:
            fail(str(exc))
    would = [s for s in plan.specs if needs_run(*states.get(s.job_id, ("pending", 0)), req.retry_failed)]
    limits = plan.specs[0].limits if plan.specs else None
    print(f"suite {plan.suite.name}: {len(plan.specs)} jobs, {len(would)} " f"to run, {len(plan.specs) - len(would)} already done")
    if limits:
        print(f"limits: wall {limits.time_s:g} s, memory {limits.mem_mb:g} MB, CPU " f"{limits.effective_cpu_s} s, grace {limits.grace_s:g} s; {plan.slots_text}")
    for spec in would:
        print(f"  {spec.job_id}  {spec.method:<14} {spec.task:<32} seed {spec.seed}")


def status(
    workspace: WorkspaceOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
) -> None:
    """Counts per status and running jobs; safe to call from another shell during a run."""
    from engine.workspace import resolve
    from results.store import Store, StoreError

    ws = resolve(workspace)
    try:
        store = Store(ws, readonly=True)
    except StoreError as exc:
        fail(str(exc))
    from engine.proctree import identity_alive
    from srtui.runner import workers_key

    counts = store.status_counts(suite)
    running = store.running_jobs()
    workers = {r["run_id"]: store.meta(workers_key(r["run_id"])) for r in running if r.get("run_id")}
    store.close()
    for r in running:  # a dead driver's jobs are not running: the next `srtui run` retries them
        r["driver_alive"] = identity_alive(r.get("driver") or "")
        # claimed by a live driver but not started on a worker yet (a cluster still starting)
        r["state"] = "queued" if r["driver_alive"] and r.get("worker_pid") is None else "running"
        r["workers"] = workers.get(r.get("run_id"))
    queued = sum(r["state"] == "queued" for r in running)
    if queued:
        counts["running"] = counts.get("running", 0) - queued
        counts = {k: v for k, v in counts.items() if v} | {"queued": queued}
    if as_json:
        out = {
            "workspace": str(ws.root),
            "total": sum(counts.values()),
            "counts": counts,
            "running": [
                {k: r[k] for k in ("job_id", "suite", "task", "method", "seed", "attempt", "started_at", "driver_alive", "state", "workers")}
                | {"time_limit_s": json.loads(r["limits"]).get("time_s")}
                for r in running
            ],
        }
        print(json.dumps(out, indent=2))
        return
    total = sum(counts.values())
    print(f"workspace {ws.root}: {total} jobs")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<14} {n}")
    for r in running:
        gone = "" if r["driver_alive"] else "; its driver is gone: `srtui run` again retries it"
        waiting = ""
        if r["state"] == "queued" and r["workers"]:
            live = r["workers"].split("/")[0]
            waiting = f"; waiting for workers {r['workers']}" if live == "0" else f"; workers {r['workers']}"
        print(f"  {r['state']}: {r['method']} / {r['task']} / seed {r['seed']} " f"(attempt {r['attempt']}, since {r['started_at']}{gone}{waiting})")


RESULT_COLUMNS = (
    "job_id", "suite", "task", "method", "params", "seed", "status", "attempt", "returncode", "signal",
    "wall_s", "fit_s", "cpu_s", "peak_rss_mb", "energy_j", "energy_method", "host", "started_at", "ended_at", "model", "r2_train", "r2_test",
    "mse_train", "mse_test", "mae_train", "mae_test", "r2_test_expr", "fidelity_r2", "max_abs_diff",
    "expression_mismatch", "model_error", "error", "limit_detail", "stderr_tail", "data_fingerprint",
    "method_version", "method_notes",
)


def results(
    workspace: WorkspaceOption = None,
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
    raw: Annotated[bool, typer.Option("--raw", help=RAW_HELP)] = False,
    summary: Annotated[bool, typer.Option("--summary", help="One row per method: median energy and training time of a run.")] = False,
) -> None:
    """One row per job, with its status, resources and accuracy (--summary: per method)."""
    import csv
    import math

    from engine.textsafe import csv_row
    from engine.workspace import resolve
    from results.store import Store, StoreError

    if fmt not in ("csv", "json"):
        fail(f"--format must be csv or json, got {fmt!r}")
    try:
        store = Store(resolve(workspace), readonly=True)
    except StoreError as exc:
        fail(str(exc))
    if summary:
        _print_summary(store, suite, fmt, raw)
        return
    # a workspace of an older schema (opened read-only, so not migrated) lacks the newer columns
    present = {row[1] for row in store.conn.execute("PRAGMA table_info(jobs)")}
    columns = [c for c in RESULT_COLUMNS if c in present]
    rows = store.jobs(suite, columns=", ".join(columns))
    store.close()
    if fmt == "json":
        for row in rows:
            row["params"] = json.loads(row["params"])
            if row.get("method_notes"):
                row["method_notes"] = json.loads(row["method_notes"])
            for key, value in row.items():  # JSON has no Infinity or NaN: they become null
                if isinstance(value, float) and not math.isfinite(value):
                    row[key] = None
        json.dump(rows, sys.stdout, indent=1, allow_nan=False)
        print()
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(csv_row(row, raw=raw) for row in rows)


def _print_summary(store, suite: str | None, fmt: str, raw: bool = False) -> None:
    from engine.textsafe import csv_cell
    from results.resources import method_medians
    from results.tables import runs_frame

    table = method_medians(runs_frame(store, suite))
    store.close()
    if fmt == "json":  # exact floats; JSON's own escaping keeps method names inert; NaN -> null
        records = table.astype(object).where(table.notna(), None).to_dict("records")
        print(json.dumps(records, indent=1, default=float, allow_nan=False))
    else:  # method names are untrusted: shown visibly and guarded against spreadsheet formulas
        table["method"] = table["method"].map(lambda m: csv_cell(m, raw=raw))
        table.to_csv(sys.stdout, index=False, lineterminator="\n", float_format="%.6g")


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(status)
    app.command()(results)
