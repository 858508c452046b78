"""`srtui run`, `srtui status`, `srtui results`."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from srtui.cli.common import RAW_HELP, WorkspaceOption, _with_root_workspace, cell, console, fail
from srtui.engine.errors import did_you_mean
from srtui.results.store.columns import EXPORT_COLUMNS
from srtui.runs.options import RunOption, request_from

if TYPE_CHECKING:
    from srtui.results.store.store import Store
    from srtui.runs.options import RunRequest
    from srtui.runs.planning import RunPlan


def _parameter(opt: RunOption) -> inspect.Parameter:
    """``opt`` as typer reads a parameter: its type annotated with its typer.Option (or Argument)."""
    if opt.argument:
        info: Any = typer.Argument(help=opt.help, metavar=opt.metavar)
        return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[opt.type, info])
    # an option in its help panel, with a word for its value (typer would show `<float>`,
    # `<list[Path]>`, `<bool>`); a flag shows none
    shown: dict[str, Any] = {"rich_help_panel": opt.panel, "metavar": opt.metavar, "show_default": False}
    info = typer.Option(
        *opt.flags,
        help=opt.help,  # RunCommand lists the registries' names in it when the help is shown
        hidden=opt.hidden,
        callback=CALLBACKS.get(opt.name),
        **({} if opt.hidden else shown),
    )
    kind = opt.type if opt.default is not None else opt.type | None
    return inspect.Parameter(
        opt.name, inspect.Parameter.KEYWORD_ONLY, default=opt.default, annotation=Annotated[kind, info]
    )


class RunCommand(TyperCommand):
    """`srtui run`, whose options' help lists their registries' names (``{choices}``), read when
    the help is shown: `srtui status`, in the same module, does not import them."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from srtui.runs import options

        declared = {opt.name: opt for opt in options.RUN_OPTIONS}
        for param in self.params:
            if param.name in declared and isinstance(param, TyperOption | TyperArgument):
                param.help = declared[param.name].help_text()
        super().format_help(ctx, formatter)


#: what the command line does with an option's value as typer parses it
CALLBACKS: dict[str, Callable[..., Any]] = {"workspace": _with_root_workspace}


def run(**values: Any) -> None:
    """Run a suite's methods x tasks x seeds as isolated, hard-limited jobs (resumable)."""
    import threading

    from srtui.tasks.suites import builtin_suite_path

    suite = values["suite"]
    if not (suite.endswith(".toml") or Path(suite).is_file()):
        builtin_suite_path(suite)  # a misspelt suite is refused before the run machinery loads
    from srtui.engine.workspace import resolve
    from srtui.runs.execution import execute
    from srtui.runs.planning import plan_run

    if values.get("scheduler") is not None:
        if values.get("dask_scheduler") is not None:
            fail("--scheduler is the old name of --dask-scheduler: give only --dask-scheduler")
        print(
            "note: --scheduler is deprecated (it named the Dask scheduler's address): use --dask-scheduler",
            file=sys.stderr,
        )
        values["dask_scheduler"] = values["scheduler"]
    ws = resolve(values.get("workspace"))
    req = request_from(values)
    dry_run = bool(values.get("dry_run"))
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


def run_command() -> Callable[..., None]:
    """``run`` with the signature typer reads, made from RUN_OPTIONS as they are declared now."""
    from srtui.runs import options

    def command(**values: Any) -> None:
        run(**values)

    command.__doc__ = run.__doc__
    command.__signature__ = inspect.Signature([_parameter(o) for o in options.RUN_OPTIONS])  # type: ignore[attr-defined]
    return command


def _print_dry_run(plan: RunPlan, req: RunRequest) -> None:
    from srtui.engine.process.held import memory_line
    from srtui.runs.execution import jobs_to_run

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
    app.command("run", cls=RunCommand)(run_command())
    app.command()(status)
    app.command()(results)
