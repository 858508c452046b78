"""`srtui tasks`: list, show, export, fetch and add tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from srtui.cli.common import CliError, CommandGroup, DataDirOption, WorkspaceOption, cell, console
from srtui.engine.workspace import resolve

if TYPE_CHECKING:
    from srtui.tasks.catalogue import TaskContext, TaskEntry
    from srtui.tasks.model import Task


def _context(workspace: Path | None, data_dir: Path | None) -> TaskContext:
    from srtui.tasks.catalogue import TaskContext

    return TaskContext.for_workspace(resolve(workspace).root, data_dir=data_dir)


def _task(name: str, workspace: Path | None, data_dir: Path | None) -> Task:
    from srtui.tasks.catalogue import get_task

    return get_task(name, _context(workspace, data_dir))


def _print_task_rows(rows: list[TaskEntry], notes: list[str]) -> None:
    """A terminal gets a table whose names are never cut (descriptions give way); a pipe gets
    one plain tab-separated row per task (name, track, data, description), the count on stderr."""
    import sys

    from rich.table import Table

    from srtui.engine.textsafe import visible

    def first_line(e: TaskEntry) -> str:
        text = e.description.strip()
        return text.splitlines()[0] if text else ""

    out = console()
    if not out.is_terminal:
        for e in rows:
            fields = (e.name, e.track, "offline" if e.offline else "download", first_line(e))
            print("\t".join(visible(f, one_line=True).replace("\t", " ") for f in fields))
        print(f"{len(rows)} tasks", file=sys.stderr)
        for note in notes:
            print(visible(f"note: {note}", one_line=True), file=sys.stderr)
        return
    longest = max((len(visible(e.name, one_line=True)) for e in rows), default=4)
    table = Table(box=None, pad_edge=False)
    table.add_column("task", no_wrap=True, min_width=longest)
    table.add_column("track", no_wrap=True)
    table.add_column("data", no_wrap=True)
    table.add_column("description", no_wrap=True, overflow="ellipsis")
    for e in rows:
        table.add_row(cell(e.name), cell(e.track), "offline" if e.offline else "download", cell(first_line(e)))
    out.print(table)
    out.print(f"{len(rows)} tasks")
    for note in notes:
        out.print(cell(f"note: {note}"))


def register(app: typer.Typer) -> None:
    tasks_app = typer.Typer(
        help="The task catalogue: list, show, export and add tasks.", no_args_is_help=True, cls=CommandGroup
    )
    app.add_typer(tasks_app, name="tasks")

    @tasks_app.command("list")
    def list_(
        workspace: WorkspaceOption = None,
        track: Annotated[str | None, typer.Option("--track", help="Only tasks of this track.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
        by_module: Annotated[
            bool, typer.Option("--modules", help="The modules that register the built-in tasks, a line each.")
        ] = False,
    ) -> None:
        """Every task srtui knows (built in, and the workspace's own)."""
        from srtui.tasks.catalogue import entries, modules, notes

        if by_module:
            for module, found in modules().items():
                data = "/".join(sorted({"offline" if e.offline else "download" for e in found}, reverse=True))
                tracks = ", ".join(sorted({e.track for e in found}))
                typer.echo(f"{module}\t{len(found)} tasks\t{data}\t{tracks}")
            return

        rows = [e for e in entries(_context(workspace, None)) if track is None or e.track == track]
        if as_json:
            typer.echo(
                json.dumps(
                    [
                        {"name": e.name, "track": e.track, "offline": e.offline, "description": e.description.strip()}
                        for e in rows
                    ],
                    indent=1,
                )
            )
            return
        _print_task_rows(rows, notes())

    @tasks_app.command("show")
    def show(
        name: str,
        workspace: WorkspaceOption = None,
        data_dir: DataDirOption = None,
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Shape, features, ground truth, properties and provenance of one task."""
        task = _task(name, workspace, data_dir)
        info = task.summary()
        info["fingerprint"] = task.fingerprint()
        if task.dates_train is not None and task.dates_test is not None:
            dates = sorted([*task.dates_train, *task.dates_test])
            info["dates"] = [dates[0], dates[-1]]
        if as_json:
            typer.echo(json.dumps(info, indent=1, default=str))
            return
        # plain prints: feature names and descriptions come from users' files (no rich markup)
        print(f"{task.name}  ({task.track}, {task.difficulty or '-'})")
        print(f"rows: {info['n_train']} train / {info['n_test']} test; split: {task.split}")
        print(f"features ({task.n_features}): {', '.join(task.feature_names)}")
        print(f"target: {task.target_name}")
        print(f"ground truth: {task.ground_truth or 'unknown'}")
        print(f"property scored: {task.property}; noise: {task.noise:g}")
        for label, chosen in (("irrelevant", task.irrelevant_features), ("shortcut", task.shortcut_features)):
            if chosen:  # in the table's column order (x2, x4, ..., x20, not x10, x12, ...)
                print(f"{label} features: {', '.join(f for f in task.feature_names if f in chosen)}")
        if "dates" in info:
            print(f"dates: {info['dates'][0]} .. {info['dates'][1]}")
        print(f"fingerprint: {info['fingerprint']}")
        print("provenance: " + json.dumps(task.provenance, default=str))
        if task.description:
            print(task.description)

    @tasks_app.command("export")
    def export(
        name: str,
        out: Annotated[Path, typer.Option("--out", help="Folder for train.csv, test.csv and task.json.")],
        workspace: WorkspaceOption = None,
        data_dir: DataDirOption = None,
    ) -> None:
        """Write a task as CSV files (features then target; a date column for time series)."""
        from srtui.tasks.export import export_task

        task = _task(name, workspace, data_dir)
        try:
            paths = export_task(task, out)
        except OSError as exc:
            raise CliError(f"cannot write to {out}: {exc}") from None
        typer.echo("wrote " + ", ".join(str(p) for p in paths))

    @tasks_app.command("fetch")
    def fetch(
        names: Annotated[list[str], typer.Argument(help="Suites, tasks or task patterns whose data to fetch.")],
        to: Annotated[
            Path | None,
            typer.Option("--to", help="Write every file into this folder (use it as --data-dir on another machine)."),
        ] = None,
        jobs: Annotated[int, typer.Option("--jobs", "-j", help="Parallel downloads.")] = 4,
        workspace: WorkspaceOption = None,
        data_dir: DataDirOption = None,
    ) -> None:
        """Download (resumably, in parallel, sha256-checked) the data files the tasks read."""
        from srtui.cli.fetch_cmd import fetch as run_fetch

        run_fetch(names, _context(workspace, data_dir), to, jobs)

    @tasks_app.command("add")
    def add(
        name: str,
        csv: Path,
        target: Annotated[str, typer.Option("--target", help="Name of the target column.")],
        test: Annotated[Path | None, typer.Option("--test", help="A separate test CSV (else a 75/25 split).")] = None,
        truth: Annotated[
            str | None, typer.Option("--truth", help="Known ground-truth formula over the features.")
        ] = None,
        prop: Annotated[
            str | None,
            typer.Option(
                "--property",
                help="Property scored beside accuracy: exact_rediscovery, feature_absence, extrapolation, "
                "noise or accuracy (default: feature_absence with --irrelevant/--shortcut, "
                "exact_rediscovery with --truth, else accuracy).",
            ),
        ] = None,
        irrelevant: Annotated[
            str | None, typer.Option("--irrelevant", help="Comma-separated irrelevant feature columns.")
        ] = None,
        shortcut: Annotated[
            str | None, typer.Option("--shortcut", help="Comma-separated shortcut (deceptive) feature columns.")
        ] = None,
        noiseless_task: Annotated[
            str | None,
            typer.Option(
                "--noiseless-task",
                help="For --property noise: the noiseless twin task whose test R2 it is compared with.",
            ),
        ] = None,
        workspace: WorkspaceOption = None,
    ) -> None:
        """Add a CSV file as a task of this workspace (validated before anything is written)."""
        from srtui.tasks.catalogue import add_user_task
        from srtui.tasks.loaders.user import Declared

        declared = Declared(
            truth=truth,
            property=prop,
            irrelevant=_names(irrelevant),
            shortcut=_names(shortcut),
            noiseless_task=noiseless_task,
        )
        task = add_user_task(resolve(workspace).root, name, csv, target, test, declared)
        typer.echo(
            f"added task {task.name}: {len(task.y_train)} train / {len(task.y_test)} test rows, "
            f"{task.n_features} features; property {task.property}"
        )
        renamed = task.provenance.get("renamed_columns") or {}
        if renamed:
            typer.echo("renamed columns: " + ", ".join(f"{old!r} -> {new}" for old, new in renamed.items()))


def _names(text: str | None) -> tuple[str, ...]:
    """``"a, b"`` -> ``("a", "b")``: a comma-separated option."""
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())
