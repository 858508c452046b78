"""`srtui env`: the named Python environments built from pinned specs (engine/methods/env_specs.py),
in which `srtui run --env NAME` runs method folders and files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from srtui.cli.common import FORCE_HELP, CommandGroup, already_built, fail, run_steps

env_app = typer.Typer(
    help="List and create named Python environments for method folders.", no_args_is_help=True, cls=CommandGroup
)


@env_app.command("list")
def list_envs(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """Each environment: ready or not, where, what it reproduces, what the source pinned and left unpinned."""
    from srtui.engine.methods.env_specs import SPECS

    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "ready": spec.environment.ready(),
            "folder": str(spec.environment.folder),
            "source": spec.source,
            "pinned": [" ".join(step) for step in spec.environment.steps],
            "contract": list(spec.environment.contract),
            "contract_ready": spec.environment.ready() and spec.environment.contract_ready(),
            "pinned_in_source": list(spec.pinned_in_source),
            "unpinned_in_source": list(spec.unpinned),
        }
        for name, spec in SPECS.items()
    ]
    if as_json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return
    for r in rows:
        print(f"{r['name']}: {'ready' if r['ready'] else 'not created'} ({r['folder']})")
        if r["contract"]:
            how = "in" if r["contract_ready"] or not r["ready"] else f"missing: srtui env create {r['name']} adds it"
            print(f"  for SRBench's method contracts: {', '.join(r['contract'])} ({how})")
        print(f"  reproduces {r['source']}")
        print(f"  pinned there: {', '.join(r['pinned_in_source']) or 'nothing'}")
        print(f"  unpinned there, pinned here: {', '.join(r['unpinned_in_source']) or 'nothing'}")


WHEELHOUSE_HELP = (
    "A folder of wheels: installs offline from it when it holds this environment's wheels (from "
    "another --wheelhouse build or `srtui env export`), else builds them into it first."
)


@env_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="An environment of `srtui env list`.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps; run nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
    wheelhouse: Annotated[Path | None, typer.Option("--wheelhouse", metavar="DIR", help=WHEELHOUSE_HELP)] = None,
) -> None:
    """Build the environment from its pinned spec (a venv; pip installs; a check)."""
    env = _spec(name)
    if already_built(name, env, force, dry_run):
        return
    if wheelhouse is not None:
        wheelhouse = _wheel_folder(wheelhouse, dry_run)
        how = "offline from" if env.wheelhouse_filled(wheelhouse) else "building its wheels into"
        print(f"{name}: {how} {wheelhouse}")
    if env.extends(force):  # only the contract layer is missing: seconds, no rebuild
        print(f"{name}: built from this spec; adding what SRBench's method contracts use: {' '.join(env.contract)}")
        run_steps(env.contract_steps(wheelhouse), f"extending environment {name}", dry_run)
    else:
        run_steps(env.install_steps(wheelhouse), f"creating environment {name}", dry_run)
    if not dry_run:
        print(f"{name}: ready at {env.folder}")


@env_app.command("export")
def export(
    name: Annotated[str, typer.Argument(help="A created environment of `srtui env list`.")],
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="Where its wheels go (made if missing).")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps; run nothing.")] = False,
) -> None:
    """Write a created environment's wheels into DIR: `srtui env create NAME --wheelhouse DIR` then
    installs it offline, on this machine or another of the same platform and Python."""
    env = _spec(name)
    if not env.ready():
        fail(f"environment {name} is not created ({env.folder}): srtui env create {name}")
    folder = _wheel_folder(folder, dry_run)
    run_steps(env.export_steps(folder), f"exporting environment {name}", dry_run)
    if not dry_run:
        print(f"{name}: wheels in {folder} (srtui env create {name} --wheelhouse {folder})")


def _spec(name: str) -> Any:
    from srtui.engine.methods.env_specs import get
    from srtui.engine.methods.environments import MethodEnvironmentError

    try:
        return get(name).environment
    except MethodEnvironmentError as exc:
        fail(str(exc))


def _wheel_folder(folder: Path, dry_run: bool) -> Path:
    """The wheelhouse as an absolute path, made unless dry; a file there is refused in one line."""
    folder = folder.expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        fail(f"--wheelhouse {folder} is not a folder")
    if not dry_run:
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
