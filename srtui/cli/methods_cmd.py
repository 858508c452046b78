"""`srtui methods`: list, check and install methods.

``list`` never imports a method's package (availability is read from installed distribution
metadata), so a broken optional install cannot take the command down. ``check`` runs one tiny fit
through the real engine (suite ``smoke``, task ``smoke-interaction``) in a workspace of its own:
a throw-away one, or ``-w WS``'s ``WS/checks/NAME``, never among the researcher's runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from srtui.cli.common import (
    FORCE_HELP,
    CommandGroup,
    already_built,
    cell,
    console,
    fail,
    leave,
    run_steps,
    workspace_option,
)
from srtui.engine.errors import did_you_mean

if TYPE_CHECKING:
    from srtui.engine.methods.base import Method

methods_app = typer.Typer(
    help="List, check and install symbolic regression methods.", no_args_is_help=True, cls=CommandGroup
)


def _load(name: str) -> Method:
    from srtui.engine.methods import registry

    return registry.load(name)


def method_rows(include_probes: bool = False, method_dirs: list[Path] | None = None) -> list[dict[str, Any]]:
    """One row per registered method and per method folder: what `methods list` shows (also for
    the TUI). ``source`` says where each comes from; a folder's code is not imported here."""
    import importlib

    from srtui.engine.methods import registry
    from srtui.engine.methods.srbench_dir import method_name

    folders = {method_name(Path(d)): Path(d).resolve() for d in method_dirs or []}
    rows = []
    for name in registry.names(include_probes=include_probes):
        module_name, _, cls_name = registry.BUILTIN[name].partition(":")
        source = "optional (srtui methods install)" if name in registry.OPTIONAL else "built-in"
        if name in folders:
            source += f"; --methods {name} runs the folder instead"
        try:
            cls = getattr(importlib.import_module(module_name), cls_name)
        except ImportError as exc:  # our own adapter module is broken: show it, do not crash
            rows.append(
                {"name": name, "installed": False, "why_not": f"adapter fails to import: {exc}", "source": source}
            )
            continue
        rows.append(_row(name, cls(), source, optional=name in registry.OPTIONAL))
    for name, folder in folders.items():
        source = f"folder {folder}"
        if name in registry.BUILTIN:
            source += f" (runs only when named with --methods {name})"
        rows.append(_row(name, registry.load(registry.SRBENCH_PREFIX + str(folder)), source, optional=False))
    return rows


def _row(name: str, method: Any, source: str, optional: bool) -> dict[str, Any]:
    ok, why = method.availability()
    folder = source.startswith("folder")
    return {
        "name": name,
        "installed": ok,
        "why_not": "" if ok else why,
        "version": method.version() if ok else "",
        "family": "sr or blackbox" if folder else method.family,
        "licence": method.licence,
        # a folder's estimator is known only once its code runs (in the job's worker)
        "time_limit": "if est has one" if folder else bool(method.honours_time_limit),
        "optional": optional,
        "source": source,
    }


@methods_app.command("list")
def list_methods(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    probes: Annotated[bool, typer.Option("--probes", help="Also list the engine's probe methods.")] = False,
    method_dir: Annotated[
        list[Path] | None, typer.Option("--method-dir", help="Also list this SRBench method folder (repeatable).")
    ] = None,
) -> None:
    """Every method: installed or why not, version, family, licence, time-limit support, source
    (piped: one tab-separated line each, in that order)."""
    for folder in method_dir or []:
        from srtui.engine.methods.srbench_dir import NOT_A_METHOD, method_source

        if method_source(folder) is None:
            fail(f"--method-dir {folder}: {NOT_A_METHOD}")
    rows = method_rows(include_probes=probes, method_dirs=list(method_dir or []))
    if as_json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return
    _print_method_rows(rows)


#: the fields of `methods list` piped, one tab-separated line per method, in this order
TSV_FIELDS = ("name", "installed", "version", "family", "licence", "time_limit", "source", "why_not")


def _yes_no(value: object) -> str:
    return value if isinstance(value, str) else ("yes" if value else "no")


def _print_method_rows(rows: list[dict[str, Any]]) -> None:
    """A pipe gets one plain tab-separated line per method (TSV_FIELDS; the count on stderr), as
    `tasks list` does; a terminal a table of one line per method, names never cut (licence and
    source give way), and why each missing method is missing under it."""
    from rich.table import Table

    from srtui.engine.textsafe import visible

    out = console()
    if not out.is_terminal:
        for r in rows:
            fields = (_yes_no(r.get(f, "")) if f in ("installed", "time_limit") else r.get(f, "") for f in TSV_FIELDS)
            print("\t".join(visible(str(f), one_line=True).replace("\t", " ") for f in fields))
        print(f"{len(rows)} methods", file=sys.stderr)
        return
    heads = ("method", "installed", "family", "limit", "version", "licence, source")
    texts = [
        [
            cell(c)
            for c in (
                r["name"],
                _yes_no(r["installed"]),
                r.get("family", ""),
                _yes_no(r.get("time_limit")),
                r.get("version", ""),
                f"{r.get('licence', '')}; {'optional' if r.get('optional') else r['source']}",
            )
        ]
        for r in rows
    ]
    widths = [max([len(h), *(t[i].cell_len for t in texts)]) for i, h in enumerate(heads)]
    # the last column takes what the others leave of the terminal (one line per method)
    widths[-1] = max(8, out.width - sum(w + 2 for w in widths[:-1]))
    table = Table(box=None, pad_edge=False)
    for head, width in zip(heads, widths):
        table.add_column(head, no_wrap=True, overflow="ellipsis", width=width)
    for t in texts:
        table.add_row(*t)
    out.print(table)
    for r in rows:
        if not r["installed"]:
            out.print(cell(f"{r['name']}: not installed: {r['why_not']}"))
    out.print(f"{len(rows)} methods; every field: srtui methods list --json")


@methods_app.command("install")
def install(
    name: Annotated[str, typer.Argument(help="An optional method, e.g. hroch.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Accept licence notices without asking.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps; run nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Run the install steps of an optional method into this Python (uses pip), or build the
    method's own environment (a venv from pinned requirements)."""
    from srtui.engine.methods import registry

    if name not in registry.BUILTIN or name.startswith("probe-"):
        fail(f"unknown method {name!r} (see `srtui methods list`){did_you_mean(name, registry.names())}")
    method = _load(name)
    env = method.environment
    if env is not None and already_built(name, env, force, dry_run):
        return
    if env is not None:  # its own environment: built, or extended by its contract layer alone
        steps = env.contract_steps() if env.extends(force) else env.install_steps()
    else:
        steps = getattr(method, "install_steps", [])
    if not steps:
        ok, why = method.availability()
        if ok:
            print(f"{name} is installed with srtui; nothing to do")
            return
        fail(f"{name} has no install recipe: {why}")
    notice = getattr(method, "install_notice", "")
    if notice:
        print(f"Notice: {notice}")
        print(f"Licence: {method.licence}")
        if not (yes or dry_run) and not typer.confirm("Continue?", default=False):
            raise typer.Exit(1)
    run_steps(steps, f"installing {name}", dry_run)
    if dry_run:
        return
    # a fresh interpreter: this process has cached the old distribution metadata
    probe = f"from srtui.engine.methods import registry; m = registry.load({name!r}); print(m.availability())"
    out = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True)
    print(f"{name}: installed ({out.stdout.strip()})" if out.returncode == 0 else out.stderr.strip())


@methods_app.command("check")
def check(
    name: Annotated[str, typer.Argument(help="A method name, an SRBench method folder or a 2021 method file.")],
    time_s: Annotated[float, typer.Option("--time-limit", help="Wall-time limit, seconds.")] = 20.0,
    workspace: Annotated[
        Path | None,
        workspace_option("Keep the check's own workspace in WORKSPACE/checks/NAME (none of its jobs among yours)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    env: Annotated[
        str | None,
        typer.Option("--env", metavar="ENV", help="Fit a method folder or file in this environment (srtui env list)."),
    ] = None,
) -> None:
    """A tiny fit through the real engine: status, R2, expression and fidelity."""
    from srtui.runs.check import start_early

    start_early(name, env)  # the job's fork server imports while this driver plans (issue 56)
    from srtui.cli.steps import Steps
    from srtui.engine.workspace import resolve
    from srtui.runs.check import check_folder_name, check_method

    with Steps(f"methods check {name}") as steps:  # a second or more on a busy machine: say what runs
        if workspace is None:
            with tempfile.TemporaryDirectory(prefix="srtui-check-") as tmp:
                rows = check_method(name, resolve(Path(tmp)), time_s, env, steps.step)
        else:  # the check's job is no job of the researcher's runs: it gets a workspace of its own
            kept = resolve(workspace).root / "checks" / check_folder_name(name)
            rows = check_method(name, resolve(kept), time_s, env, steps.step)
    if workspace is not None:
        print(f"the check's workspace: {kept}", file=sys.stderr)
    if not rows:
        fail(f"method {name!r}: the check ran no job")
    row = rows[-1]
    keys = (
        "method",
        "status",
        "r2_train",
        "r2_test",
        "fidelity_r2",
        "max_abs_diff",
        "wall_s",
        "model",
        "model_error",
        "error",
        "limit_detail",
    )
    from srtui.engine.process.seal import isolation

    out = {k: row.get(k) for k in keys}
    out["isolation"] = isolation().summary  # the capability report: what the job could see
    if as_json:
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        for k in out:
            if out[k] not in (None, ""):
                print(f"{k:>13}: {out[k]}")
    leave(0 if row.get("status") == "ok" else 1)  # answered: no teardown of the imports after it


def register(app: typer.Typer) -> None:
    app.add_typer(methods_app, name="methods")
