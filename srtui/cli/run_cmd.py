"""`srtui run`, `srtui status`, `srtui results`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from srtui.cli.common import RAW_HELP, WorkspaceOption, _with_root_workspace, cell, console, fail
from srtui.engine.errors import did_you_mean
from srtui.results.store.columns import EXPORT_COLUMNS

if TYPE_CHECKING:
    from srtui.results.store.store import Store
    from srtui.runs.run import RunPlan, RunRequest


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        fail("an empty list of names was given")
    return names


RUN_PANEL, LIMITS_PANEL, PROTOCOL_PANEL, CLUSTER_PANEL, OUTPUT_PANEL = (
    "What to run",
    "Limits per job",
    "Protocol and SRBench method folders",
    "Cluster (Dask)",
    "Workspace and output",
)


def _opt(*names: str, panel: str, metavar: str = "", **kwargs: Any) -> Any:
    """An option of `srtui run` in its help panel, with a word for its value (typer would show
    `<float>`, `<list[Path]>`, `<bool>`); a flag shows none."""
    return typer.Option(*names, rich_help_panel=panel, metavar=metavar, show_default=False, **kwargs)


def run(
    suite: Annotated[str, typer.Argument(help="A built-in suite or a suite .toml file.", metavar="SUITE")],
    workspace: Annotated[
        Path | None,
        _opt(
            "--workspace",
            "-w",
            panel=OUTPUT_PANEL,
            metavar="DIR",
            help="Default: $SRTUI_WORKSPACE, else ./srtui-workspace.",
            callback=_with_root_workspace,
        ),
    ] = None,
    jobs: Annotated[
        int | None, _opt("--jobs", "-j", panel=RUN_PANEL, metavar="N", help="Parallel jobs (default: cores).")
    ] = None,
    methods: Annotated[
        str | None, _opt("--methods", panel=RUN_PANEL, metavar="A,B", help="Methods (default: the suite's).")
    ] = None,
    tasks: Annotated[
        str | None, _opt("--tasks", panel=RUN_PANEL, metavar="A,B", help="Tasks (default: the suite's).")
    ] = None,
    seeds: Annotated[
        int | None, _opt("--seeds", panel=RUN_PANEL, metavar="N", help="Seeds (default: the suite's).")
    ] = None,
    oversubscribe: Annotated[
        bool, _opt("--oversubscribe", panel=RUN_PANEL, help="Allow --jobs above the cores.")
    ] = False,
    retry_failed: Annotated[
        bool, _opt("--retry-failed", panel=RUN_PANEL, help="Re-run failed jobs (error, timeout, oom, ...).")
    ] = False,
    time_s: Annotated[float | None, _opt("--time-limit", panel=LIMITS_PANEL, metavar="S", help="Wall time.")] = None,
    mem_mb: Annotated[
        float | None, _opt("--mem-limit", panel=LIMITS_PANEL, metavar="MB", help="Memory of the process tree.")
    ] = None,
    cpu_s: Annotated[
        float | None, _opt("--cpu-limit", panel=LIMITS_PANEL, metavar="S", help="CPU time per process.")
    ] = None,
    grace_s: Annotated[
        float | None, _opt("--grace", panel=LIMITS_PANEL, metavar="S", help="From SIGTERM to SIGKILL.")
    ] = None,
    launcher: Annotated[
        str | None,
        _opt(
            "--launcher",
            panel=LIMITS_PANEL,
            metavar="HOW",
            help="auto, fork or exec (default: the suite's).",
        ),
    ] = None,
    allow_network: Annotated[
        list[str] | None,
        _opt(
            "--allow-network",
            panel=LIMITS_PANEL,
            metavar="METHOD",
            help="This method's jobs keep the network (default: none has any); repeatable.",
        ),
    ] = None,
    protocol: Annotated[
        str | None,
        _opt(
            "--protocol",
            panel=PROTOCOL_PANEL,
            metavar="NAME",
            help="none, srbench2021 (halving grid) or srbench2025 (grid); default: the suite's.",
        ),
    ] = None,
    method_dir: Annotated[
        list[Path] | None,
        _opt(
            "--method-dir",
            panel=PROTOCOL_PANEL,
            metavar="DIR",
            help="An SRBench method folder or 2021 NAME.py (repeatable).",
        ),
    ] = None,
    env: Annotated[
        str | None,
        _opt(
            "--env",
            panel=PROTOCOL_PANEL,
            metavar="NAME",
            help="Run the --method-dir methods in this environment (srtui env list).",
        ),
    ] = None,
    tuned: Annotated[
        bool | None,
        _opt("--tuned/--untuned", panel=PROTOCOL_PANEL, help="Folders: their _params.py."),
    ] = None,
    srbench_test: Annotated[
        bool | None,
        _opt("--srbench-test/--no-srbench-test", panel=PROTOCOL_PANEL, help="Folders: test_params."),
    ] = None,
    srbench_scaling: Annotated[
        str | None,
        _opt(
            "--srbench-scaling",
            panel=PROTOCOL_PANEL,
            metavar="HOW",
            help="Folders: reference (as 2.0 ran), folder, none.",
        ),
    ] = None,
    backend: Annotated[
        str | None,
        _opt("--backend", panel=CLUSTER_PANEL, metavar="NAME", help="local, or dask (implied by the options below)."),
    ] = None,
    dask_scheduler: Annotated[
        str | None,
        _opt("--dask-scheduler", panel=CLUSTER_PANEL, metavar="ADDR", help="A running scheduler, tcp://HOST:8786."),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", hidden=True, help="Deprecated: --dask-scheduler.")
    ] = None,
    cluster: Annotated[
        str | None, _opt("--cluster", panel=CLUSTER_PANEL, metavar="KIND", help="Start one: local, ssh or slurm.")
    ] = None,
    cluster_config: Annotated[
        Path | None,
        _opt("--cluster-config", panel=CLUSTER_PANEL, metavar="TOML", help="Cluster settings (its table names it)."),
    ] = None,
    dry_run: Annotated[bool, _opt("--dry-run", panel=OUTPUT_PANEL, help="Show what would run; write nothing.")] = False,
    no_metrics: Annotated[
        bool, _opt("--no-metrics", panel=OUTPUT_PANEL, help="Leave them to `srtui rescore`.")
    ] = False,
    data_dir: Annotated[
        Path | None,
        _opt(
            "--data-dir",
            panel=RUN_PANEL,
            metavar="DIR",
            help="Data files: srtui's layout, a PMLB checkout or cache (else $SRTUI_DATA_DIR).",
        ),
    ] = None,
) -> None:
    """Run a suite's methods x tasks x seeds as isolated, hard-limited jobs (resumable)."""
    import threading

    from srtui.tasks.suites import builtin_suite_path

    if not (suite.endswith(".toml") or Path(suite).is_file()):
        builtin_suite_path(suite)  # a misspelt suite is refused before the run machinery loads
    from srtui.engine.workspace import resolve
    from srtui.runs.run import RunRequest, execute, plan_run

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
        time_s=time_s,
        mem_mb=mem_mb,
        cpu_s=cpu_s,
        grace_s=grace_s,
        jobs=jobs,
        retry_failed=retry_failed,
        method_dirs=list(method_dir or []),
        env=env,
        srbench={"tuned": tuned, "test": srbench_test, "scaling": srbench_scaling},
        backend=backend,
        dask_scheduler=dask_scheduler,
        cluster=cluster,
        cluster_config=cluster_config,
        oversubscribe=oversubscribe,
        protocol=protocol,
        launcher=launcher,
        data_dir=data_dir,
        allow_network=list(allow_network or []),
        metrics=not no_metrics,
    )
    if not dry_run:
        ws.ensure()  # an unwritable place fails here, before anything else
    plan = plan_run(ws, req, write_data=not dry_run)
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    if dry_run:
        _print_dry_run(plan, req)
        return
    from srtui.cli.interrupts import install_interrupt_handlers
    from srtui.cli.progress import RunProgress  # rich's live display: not for a dry run

    cancel, force = threading.Event(), threading.Event()
    progress = RunProgress(plan)
    install_interrupt_handlers(cancel, force, progress.notify)
    with progress:
        result = execute(plan, req, cancel=cancel, force=force, on_state=progress.update, on_metrics=progress.notify)
    progress.summary(result)
    if result.interrupted:
        raise typer.Exit(130)


def _print_dry_run(plan: RunPlan, req: RunRequest) -> None:
    from srtui.engine.process.supervise import memory_line
    from srtui.runs.run import jobs_to_run

    would = jobs_to_run(plan, req.retry_failed)
    limits = plan.specs[0].limits if plan.specs else None
    later = plan.later_jobs()  # counted as the run counts them: its total must match this line's
    print(
        f"suite {plan.suite.name}: {len(plan.specs) + later} jobs, {len(would) + later} to run, "
        f"{len(plan.specs) - len(would)} already done"
        + (f" ({later} of them planned as tuning goes: halving iterations and final fits)" if later else "")
    )
    if limits:
        print(
            f"limits: wall {limits.time_s:g} s, memory {limits.mem_mb:g} MB, CPU "
            f"{limits.effective_cpu_s} s, grace {limits.grace_s:g} s, disk {limits.disk_mb:g} MB; {plan.slots_text}"
        )
        print(memory_line())
        forked = sorted(m for m, how in plan.launchers.items() if how == "fork")
        print(f"launcher: fork for {', '.join(forked) or 'none'}; exec for the others")
    print(plan.isolation)
    for line in plan.protocol_lines():
        print(line)
    if plan.without_data:
        print(
            f"not planned, their data files are missing ({len(plan.without_data)} task(s); the note says how to fetch):"
        )
        for line in plan.without_data:
            print(f"  {line}")
    for search in plan.searches:
        print(search.describe())
    for spec in would:
        print(f"  {spec.job_id}  {spec.method:<14} {spec.task:<32} seed {spec.seed}")


def status(
    workspace: WorkspaceOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
) -> None:
    """Counts per status and running jobs; safe to call from another shell during a run."""
    from srtui.engine.workspace import resolve
    from srtui.results.store.store import Store, StoreError

    ws = resolve(workspace)
    try:
        store = Store(ws, readonly=True)
    except StoreError as exc:
        fail(str(exc))
    from srtui.results.store.queries import metrics_progress, open_runs, running_jobs
    from srtui.runs.keys import workers_key

    counts = store.status_counts(suite)
    running = running_jobs(store)
    metrics = metrics_progress(store, [r for r in open_runs(store) if r.driver_alive])
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
                    "time_s": r.time_s,
                }
                for r in running
            ],
            "metrics": [
                {"run_id": m.run_id, "suite": m.suite, "done": m.done, "total": m.total, "eta_s": m.eta_s}
                for m in metrics
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
    for m in metrics:  # a run computes its jobs' metrics in its slots, behind the jobs
        eta = f", ETA {m.eta_s:.0f} s" if m.eta_s is not None else ""
        print(f"  metrics: {m.suite} {m.done}/{m.total} jobs{eta}")


#: the job record as `srtui results` prints it (srtui.results.store.columns)
RESULT_COLUMNS = EXPORT_COLUMNS


def results(
    workspace: WorkspaceOption = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", help="table (the default on a terminal), csv (the default piped) or json.", show_default=False
        ),
    ] = None,
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
    raw: Annotated[bool, typer.Option("--raw", help=RAW_HELP)] = False,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary", help="One row per suite and method: jobs, median R2, median energy and training time of a run."
        ),
    ] = False,
    tuning: Annotated[
        bool,
        typer.Option(
            "--tuning",
            help="Add a 'tuning' column: each final job's chosen configuration and the tuning scores behind it.",
        ),
    ] = False,
) -> None:
    """One row per job, with its status, resources and accuracy (--summary: per suite and method)."""
    import csv

    from srtui.engine.textsafe import csv_row
    from srtui.engine.workspace import resolve
    from srtui.results.metrics import pivot
    from srtui.results.store.store import Store, StoreError

    fmt = fmt or ("table" if console().is_terminal else "csv")
    if fmt not in RESULT_FORMATS:
        fail(f"--format must be table, csv or json, got {fmt!r}{did_you_mean(fmt, RESULT_FORMATS)}")
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
    # every declared accuracy metric, the metrics table's too (srtui.results.metrics.pivot)
    stored = pivot.select_items() if pivot.has_metrics_table(store) else []
    rows = store.iter_jobs(suite, columns=", ".join(columns + stored))  # streamed: constant memory
    columns += pivot.in_metrics_table() if stored else []
    if fmt == "table":
        listed = list(rows)
        store.close()
        _print_table(listed, [c for c in TABLE_COLUMNS if c in present])
        return
    if tuning:
        rows = _with_tuning(store, rows, fmt)
        columns.append("tuning")
    if fmt == "json":
        _print_json_rows(rows)
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(csv_row(row, raw=raw))
    store.close()


def _print_json_rows(rows: Iterable[dict[str, Any]]) -> None:
    """A JSON array written a row at a time (what json.dump(list, indent=1) prints)."""
    import math

    from srtui.results.store.typed import stored_json, warn

    sys.stdout.write("[")
    any_row = False
    for row in rows:
        job = row.get("job_id")
        row["params"] = stored_json(row["params"], "jobs", job, "params", {})
        if row.get("method_notes"):
            row["method_notes"] = stored_json(row["method_notes"], "jobs", job, "method_notes")
        for key, value in row.items():  # a blob where text belongs: shown as nothing
            if isinstance(value, bytes):
                row[key] = None
                warn("jobs", job, key, "a blob where a value belongs")
        for key, value in row.items():  # JSON has no Infinity or NaN: they become null
            if isinstance(value, float) and not math.isfinite(value):
                row[key] = None
        text = json.dumps(row, indent=1, allow_nan=False).replace("\n", "\n ")
        sys.stdout.write(("," if any_row else "") + "\n " + text)
        any_row = True
    sys.stdout.write("\n]\n" if any_row else "]\n")


#: what a terminal shows of each job (`--format csv` or `json` has every column)
TABLE_COLUMNS = ("task", "method", "seed", "status", "r2_test", "fit_s", "peak_rss_mb", "model")
RESULT_FORMATS = ("table", "csv", "json")


def _number(value: object, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}" if isinstance(value, float) else str(value)


#: the short headers a terminal table shows
HEADERS = {
    "peak_rss_mb": "MB",
    "fit_s": "fit s",
    "median_r2_test": "median R2",
    "median_energy_kwh": "kWh",
    "median_energy_j": "J",
    "median_fit_s": "fit s",
    "energy_method": "energy by",
}
#: columns a narrow terminal leaves out, first to last (the others are never cut)
DROP_ORDER = ("peak_rss_mb", "energy_method", "median_energy_kwh", "fit_s", "jobs", "median_energy_j")
MIN_MODEL = 16


def _fitting(columns: list[str], widths: dict[str, int], total: int) -> list[str]:
    """The columns shown in ``total`` characters: every value whole (a column too wide is left
    out, DROP_ORDER first, rather than cut); the model, if shown, takes what the others leave."""
    shown = list(columns)

    def need(cols: list[str]) -> int:
        fixed = sum(widths[c] + 2 for c in cols if c != "model")
        return fixed + (MIN_MODEL + 2 if "model" in cols else 0) - 2

    for name in DROP_ORDER:
        if need(shown) <= total:
            break
        if name in shown:
            shown.remove(name)
    if need(shown) > total and "model" in shown:
        shown.remove("model")
    return shown


def _print_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """The jobs as a table of the columns a reader looks at first. No value is cut: columns that do
    not fit the terminal are left out (the last line names them), and the model takes what the
    others leave (the whole string is in `--format csv`)."""
    from rich.table import Table

    from srtui.styles import STATUS_STYLE

    out = console()
    texts = {c: [cell(_number(row.get(c))) for row in rows] for c in columns}
    widths = {c: max([len(HEADERS.get(c, c)), *(t.cell_len for t in texts[c])]) for c in columns}
    shown = _fitting(columns, widths, out.width)
    if "model" in shown:  # the model takes what the other columns leave of the terminal
        widths["model"] = max(MIN_MODEL, out.width - sum(widths[c] + 2 for c in shown if c != "model"))
        for t in texts["model"]:
            t.truncate(widths["model"], overflow="ellipsis")
    table = Table(box=None, pad_edge=False, collapse_padding=False)
    for name in shown:
        numeric = any(isinstance(row.get(name), int | float) for row in rows[:50])
        table.add_column(
            HEADERS.get(name, name), justify="right" if numeric else "left", no_wrap=True, width=widths[name]
        )
    if "status" in shown:
        for row, text in zip(rows, texts["status"], strict=True):
            text.stylize(STATUS_STYLE.get(row.get("status") or "", ""))
    for i in range(len(rows)):
        table.add_row(*(texts[c][i] for c in shown))
    out.print(table)
    left_out = [HEADERS.get(c, c) for c in columns if c not in shown]
    where = f"; left out at {out.width} columns: {', '.join(left_out)}" if left_out else ""
    if "job_id" not in columns and "status" in columns:  # the per-job table (not --summary)
        out.print(f"{len(rows)} jobs; every column: srtui results --format csv (or json){where}")
    elif left_out:
        out.print(f"left out at {out.width} columns: {', '.join(left_out)}; every column: --format csv (or json)")


def _with_tuning(store: Store, rows: Iterable[dict[str, Any]], fmt: str) -> Iterator[dict[str, Any]]:
    """Each tuned final job's summary (an object in JSON, one line in CSV); empty for the others."""
    from srtui.results.store.tuning import summaries, summary_text

    found = summaries(store.conn)
    for row in rows:
        summary = found.get(row["job_id"])
        row["tuning"] = summary if fmt == "json" or summary is None else summary_text(summary)
        yield row


def _print_summary(store: Store, suite: str | None, fmt: str, raw: bool = False) -> None:
    from srtui.engine.textsafe import csv_cell
    from srtui.results.scoring.resources import suite_summary
    from srtui.results.scoring.tables import runs_frame

    table = suite_summary(runs_frame(store, suite))
    store.close()
    if fmt == "table":
        records = table.astype(object).where(table.notna(), None).to_dict("records")
        _print_table([{str(k): v for k, v in r.items()} for r in records], [str(c) for c in table.columns])
        return
    if fmt == "json":  # exact floats; JSON's own escaping keeps method names inert; NaN -> null
        records = table.astype(object).where(table.notna(), None).to_dict("records")
        print(json.dumps(records, indent=1, default=float, allow_nan=False))
    else:  # method names are untrusted: shown visibly and guarded against spreadsheet formulas
        for col in ("suite", "method"):
            table[col] = table[col].map(lambda m: csv_cell(m, raw=raw))
        table.to_csv(sys.stdout, index=False, lineterminator="\n", float_format="%.6g")


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(status)
    app.command()(results)
