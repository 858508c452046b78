"""`srtui run`, `srtui status`, `srtui results`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from results.columns import EXPORT_COLUMNS
from srtui.cli.common import RAW_HELP, DataDirOption, WorkspaceOption, fail

if TYPE_CHECKING:
    from results.store import Store
    from runs.run import RunPlan, RunRequest


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
    mem_limit: Annotated[
        float | None, typer.Option("--mem-limit", help="Memory limit of a job's process tree, MB.")
    ] = None,
    cpu_limit: Annotated[float | None, typer.Option("--cpu-limit", help="CPU-time limit per process, seconds.")] = None,
    grace: Annotated[float | None, typer.Option("--grace", help="Seconds between SIGTERM and SIGKILL.")] = None,
    method_dir: Annotated[
        list[Path] | None, typer.Option("--method-dir", help="SRBench method folder (repeatable).")
    ] = None,
    tuned: Annotated[
        bool | None,
        typer.Option(
            "--tuned/--untuned", help="Method folders: use their _params.py (SRBench's --tuned; default: the suite's)."
        ),
    ] = None,
    srbench_test: Annotated[
        bool | None,
        typer.Option(
            "--srbench-test/--no-srbench-test",
            help="Method folders: apply their eval_kwargs test_params (SRBench's -test).",
        ),
    ] = None,
    srbench_scaling: Annotated[
        str | None,
        typer.Option(
            "--srbench-scaling",
            help="Method folders: reference (scale X and y, as SRBench 2.0 ran), folder (their eval_kwargs) or none.",
        ),
    ] = None,
    oversubscribe: Annotated[
        bool, typer.Option("--oversubscribe", help="Allow --jobs above the usable cores.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would run; write nothing.")] = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run error/timeout/cpu_timeout/oom/crashed jobs.")
    ] = False,
    backend: Annotated[
        str | None, typer.Option(help="local (subprocesses here) or dask (implied by the cluster options).")
    ] = None,
    dask_scheduler: Annotated[
        str | None, typer.Option("--dask-scheduler", help="dask: address of a running scheduler, tcp://HOST:8786.")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", hidden=True, help="Deprecated: --dask-scheduler.")
    ] = None,
    cluster: Annotated[str | None, typer.Option(help="dask: start a cluster: local, ssh or slurm.")] = None,
    cluster_config: Annotated[
        Path | None,
        typer.Option("--cluster-config", help="dask: cluster settings (TOML; its table names the cluster)."),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            help="none, srbench2021 (halving grid search CV) or srbench2025 (grid search CV); default: the suite's."
        ),
    ] = None,
    launcher: Annotated[
        str | None,
        typer.Option(help="auto (fork where the method is fork-safe), fork or exec (default: the suite's, else auto)."),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Run a suite's methods x tasks x seeds as isolated, hard-limited jobs (resumable)."""
    import threading

    from engine.workspace import resolve
    from runs.run import RunRequest, execute, plan_run
    from srtui.cli.interrupts import install_interrupt_handlers
    from srtui.cli.progress import RunProgress

    if scheduler is not None:
        if dask_scheduler is not None:
            fail("--scheduler is the old name of --dask-scheduler: give only --dask-scheduler")
        print(
            "note: --scheduler is deprecated (it named the Dask scheduler's address): use --dask-scheduler",
            file=sys.stderr,
        )
        dask_scheduler = scheduler
    ws = resolve(workspace)
    req = RunRequest(
        suite=suite,
        methods=_split(methods),
        tasks=_split(tasks),
        seeds=seeds,
        time_limit=time_limit,
        mem_limit=mem_limit,
        cpu_limit=cpu_limit,
        grace=grace,
        jobs=jobs,
        retry_failed=retry_failed,
        method_dirs=list(method_dir or []),
        srbench={"tuned": tuned, "test": srbench_test, "scaling": srbench_scaling},
        backend=backend,
        dask_scheduler=dask_scheduler,
        cluster=cluster,
        cluster_config=cluster_config,
        oversubscribe=oversubscribe,
        protocol=protocol,
        launcher=launcher,
        data_dir=data_dir,
    )
    if not dry_run:
        ws.ensure()  # an unwritable place fails here, before anything else
    plan = plan_run(ws, req, write_data=not dry_run)
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    if dry_run:
        _print_dry_run(plan, req)
        return
    cancel, force = threading.Event(), threading.Event()
    progress = RunProgress(plan)
    install_interrupt_handlers(cancel, force, progress.notify)
    with progress:
        result = execute(plan, req, cancel=cancel, force=force, on_state=progress.update, on_metrics=progress.notify)
    progress.summary(result)
    if result.interrupted:
        raise typer.Exit(130)


def _print_dry_run(plan: RunPlan, req: RunRequest) -> None:
    from runs.run import jobs_to_run

    would = jobs_to_run(plan, req.retry_failed)
    limits = plan.specs[0].limits if plan.specs else None
    print(
        f"suite {plan.suite.name}: {len(plan.specs)} jobs, {len(would)} to run, "
        f"{len(plan.specs) - len(would)} already done"
    )
    if limits:
        print(
            f"limits: wall {limits.time_s:g} s, memory {limits.mem_mb:g} MB, CPU "
            f"{limits.effective_cpu_s} s, grace {limits.grace_s:g} s; {plan.slots_text}"
        )
        forked = sorted(m for m, how in plan.launchers.items() if how == "fork")
        print(f"launcher: fork for {', '.join(forked) or 'none'}; exec for the others")
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
    from results.queries import running_jobs
    from runs.sink import workers_key

    counts = store.status_counts(suite)
    running = running_jobs(store)
    workers = {r.run_id: store.meta(workers_key(r.run_id)) for r in running if r.run_id}
    store.close()
    queued = sum(r.queued for r in running)
    if queued:
        counts["running"] = counts.get("running", 0) - queued
        counts = {k: v for k, v in counts.items() if v} | {"queued": queued}
    if as_json:
        out = {
            "workspace": str(ws.root),
            "total": sum(counts.values()),
            "counts": counts,
            "running": [
                {
                    "job_id": r.job_id,
                    "suite": r.suite,
                    "task": r.task,
                    "method": r.method,
                    "seed": r.seed,
                    "attempt": r.attempt,
                    "started_at": r.started_at,
                    "driver_alive": r.driver_alive,
                    "state": "queued" if r.queued else "running",
                    "workers": workers.get(r.run_id or ""),
                    "time_limit_s": r.time_limit_s,
                }
                for r in running
            ],
        }
        print(json.dumps(out, indent=2))
        return
    total = sum(counts.values())
    print(f"workspace {ws.root}: {total} jobs")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<14} {n}")
    for r in running:  # a dead driver's jobs are not running: the next `srtui run` retries them
        gone = "" if r.driver_alive else "; its driver is gone: `srtui run` again retries it"
        waiting, live_workers = "", workers.get(r.run_id or "")
        if r.queued and live_workers:
            live = live_workers.split("/")[0]
            waiting = f"; waiting for workers {live_workers}" if live == "0" else f"; workers {live_workers}"
        state = "queued" if r.queued else "running"
        print(f"  {state}: {r.label} (attempt {r.attempt}, since {r.started_at}{gone}{waiting})")


#: the job record as `srtui results` prints it (results.columns)
RESULT_COLUMNS = EXPORT_COLUMNS


def results(
    workspace: WorkspaceOption = None,
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
    raw: Annotated[bool, typer.Option("--raw", help=RAW_HELP)] = False,
    summary: Annotated[
        bool, typer.Option("--summary", help="One row per method: median energy and training time of a run.")
    ] = False,
    tuning: Annotated[
        bool,
        typer.Option(
            "--tuning",
            help="Add a 'tuning' column: each final job's chosen configuration and the tuning scores behind it.",
        ),
    ] = False,
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
    if tuning:
        _add_tuning(store, rows, fmt)
        columns.append("tuning")
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


def _add_tuning(store: Store, rows: list[dict[str, Any]], fmt: str) -> None:
    """Each tuned final job's summary (an object in JSON, one line in CSV); empty for the others."""
    from results.tuning import summaries, summary_text

    found = summaries(store.conn)
    for row in rows:
        summary = found.get(row["job_id"])
        row["tuning"] = summary if fmt == "json" or summary is None else summary_text(summary)


def _print_summary(store: Store, suite: str | None, fmt: str, raw: bool = False) -> None:
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
