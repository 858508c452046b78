"""`srtui env`: the named Python environments built from pinned specs (engine/methods/env_specs.py),
in which `srtui run --env NAME` runs method folders and files."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from srtui.cli.common import FORCE_HELP, CommandGroup, already_built, fail, run_steps

env_app = typer.Typer(
    help="List and create named Python environments for method folders.", no_args_is_help=True, cls=CommandGroup
)


@env_app.command("list")
def list_envs(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """Each environment: ready or not, where, what it reproduces, what the source pinned and left unpinned."""
    from engine.methods.env_specs import SPECS

    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "ready": spec.environment.ready(),
            "folder": str(spec.environment.folder),
            "source": spec.source,
            "pinned": [" ".join(step) for step in spec.environment.steps],
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
        print(f"  reproduces {r['source']}")
        print(f"  pinned there: {', '.join(r['pinned_in_source']) or 'nothing'}")
        print(f"  unpinned there, pinned here: {', '.join(r['unpinned_in_source']) or 'nothing'}")


@env_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="An environment of `srtui env list`.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps; run nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Build the environment from its pinned spec (a venv; pip installs; a check)."""
    from engine.methods.env_specs import get
    from engine.methods.environments import MethodEnvironmentError

    try:
        env = get(name).environment
    except MethodEnvironmentError as exc:
        fail(str(exc))
    if already_built(name, env, force, dry_run):
        return
    run_steps(env.install_steps(), f"creating environment {name}", dry_run)
    if not dry_run:
        print(f"{name}: ready at {env.folder}")


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
