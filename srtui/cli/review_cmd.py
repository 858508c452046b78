"""`srtui review ...`: blinded expert trust-scoring sessions (organiser commands and the expert's `open`).

`review open` is what an expert's SSH key is forced to run: its help and its errors never name a
method, and it only reaches that expert's own assignments.
"""

from __future__ import annotations

import getpass
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer

from srtui.cli.common import CommandGroup, WorkspaceOption, fail, require_terminal

if TYPE_CHECKING:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

P = ParamSpec("P")
R = TypeVar("R")

review_app = typer.Typer(
    help="Blinded expert trust ratings of models (SRBench 2022 real-world "
    "track): create, open, status, close, unblind, report.",
    no_args_is_help=True,
    cls=CommandGroup,
)

SessionArg = Annotated[str, typer.Argument(help="Review session name.", show_default=False)]


def _workspace(workspace: Path | None) -> Workspace:
    from srtui.engine.workspace import resolve

    return resolve(workspace)


def _store(workspace: Path | None) -> Store:
    from srtui.results.store.store import Store

    return Store(_workspace(workspace))


def _actor() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _run(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    return fn(*args, **kwargs)


@review_app.command("create")
def create(
    name: SessionArg,
    suite: Annotated[
        str | None, typer.Option(help="Review this suite's runs (default: every run of the workspace).")
    ] = None,
    tasks: Annotated[str | None, typer.Option(help="Comma-separated tasks (default: every task with runs).")] = None,
    select: Annotated[
        str,
        typer.Option(
            help="Representative run per (task, method): median (closest to the "
            "median test R2, the competition's rule) or best (the paper's)."
        ),
    ] = "median",
    experts: Annotated[
        str, typer.Option(help="Comma-separated expert names, each gets an own random order.")
    ] = "expert",
    repeats: Annotated[
        int, typer.Option(help="Hidden repeat items per expert (self-consistency; left out of scores).")
    ] = 0,
    include_baseline: Annotated[
        bool,
        typer.Option(
            "--include-baseline",
            help="Also review baseline methods' models (disguised like the "
            "rest, as SRBench 2022 did with its linear baseline).",
        ),
    ] = False,
    seed: Annotated[int | None, typer.Option(help="Seed of the experts' orders (default: random, stored).")] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Create a session: one representative model per (task, method), frozen, with opaque ids."""
    from srtui.reviews import create_session
    from srtui.reviews.items import build_items

    store = _store(workspace)
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    task_list = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    items = _run(build_items, store, suite, task_list, select, include_baseline, say)
    from srtui.reviews.blinding import item_tells, warnings

    for line in warnings(item_tells(items)):  # before any expert sees an item
        print(line, file=sys.stderr)
    expert_list = [e.strip() for e in experts.split(",") if e.strip()]
    info = _run(
        create_session,
        store,
        name,
        items,
        expert_list,
        repeats=repeats,
        seed=seed,
        suite=suite,
        settings={"select": select, "include_baseline": include_baseline, "tasks": task_list},
        actor=_actor(),
    )
    print(
        f"review {name}: {info['items']} items, {len(info['experts'])} expert(s) ({', '.join(info['experts'])}), "
        f"{info['repeats']} hidden repeat(s) each, order seed {info['seed']}"
    )
    print(f"experts rate with: srtui review open {name} --expert NAME --workspace {store.workspace.root}")


@review_app.command("open")
def open_(
    name: SessionArg,
    expert: Annotated[str, typer.Option(help="Your expert name, as given by the organiser.", show_default=False)],
    workspace: WorkspaceOption = None,
) -> None:
    """Rate the models of a review session (1 = strongly distrust ... 5 = strongly trust)."""
    import os

    from srtui.engine.workspace import WorkspaceError
    from srtui.results.store.store import Store, StoreError
    from srtui.reviews import ExpertSession

    ws = _workspace(workspace)
    try:
        session = ExpertSession.open(Store(ws), name, expert)
    except (StoreError, WorkspaceError) as exc:  # the expert cannot fix it: say whom to tell
        fail(f"this review cannot be opened ({exc}); please tell the organiser")
    # checked after the (quick, read-only) open, so a wrong name is reported as such
    if os.environ.get("SSH_ORIGINAL_COMMAND"):  # sshd ran this key's forced command instead of the client's
        fail("this key only opens your review: connect with plain `ssh HOST` (no command, no -T)")
    require_terminal("the rating screen needs one: connect with plain `ssh HOST` from a terminal window")
    from srtui.app.review.expert import run_expert

    code = run_expert(session)
    if code:
        raise typer.Exit(code)


@review_app.command("list")
def list_(workspace: WorkspaceOption = None) -> None:
    """The review sessions of the workspace."""
    from srtui.reviews import sessions

    rows = sessions(_store(workspace))
    if not rows:
        print("no review sessions (create one with `srtui review create NAME --suite SUITE`)")
    for r in rows:
        blind = "unblinded" if r["unblinded_at"] else "blinded"
        print(
            f"{r['name']}  {r['status']}, {blind}  suite {r['suite'] or '-'}  {r['items']} items  "
            f"{r['experts']} experts  {r['rated']}/{r['assigned']} rated"
        )


@review_app.command("status")
def status_(
    name: SessionArg,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Progress per expert."""
    from srtui.reviews import session_row, status

    store = _store(workspace)
    row = _run(session_row, store, name)
    rows = _run(status, store, name)
    if as_json:
        print(
            json.dumps(
                {"session": name, "status": row["status"], "unblinded_at": row["unblinded_at"], "experts": rows},
                indent=1,
            )
        )
        return
    from srtui.reviews.storage import short_time

    blind = f"unblinded {short_time(row['unblinded_at'])} UTC" if row["unblinded_at"] else "blinded"
    print(f"review {name}: {row['status']!s}, {blind}")
    width = max([8, *(len(r["expert"]) for r in rows)])
    for r in rows:  # 80 columns for names of up to 8 characters
        med = f"{r['median_s_per_item']:.0f} s/item" if r["median_s_per_item"] is not None else "- s/item"
        print(
            f"  {r['expert']:<{width}} {r['rated']:>3}/{r['assigned']:<3} rated {r['skipped']:>3} skipped "
            f"{r['remaining']:>3} left  {med:>8}  last {short_time(r['last_rating'], year=False)}"
        )


@review_app.command("add-expert")
def add_expert_(
    name: SessionArg,
    expert: Annotated[str, typer.Argument(help="The new expert's name.", show_default=False)],
    workspace: WorkspaceOption = None,
) -> None:
    """Add an expert to an open session: an own seeded order over the same frozen items."""
    from srtui.reviews import add_expert

    store = _store(workspace)
    info = _run(add_expert, store, name, expert, _actor())
    print(f"review {name}: {expert} added with {info['assigned']} item(s) to rate")
    print(f"they rate with: srtui review open {name} --expert {expert} --workspace {store.workspace.root}")


@review_app.command("close")
def close_(name: SessionArg, workspace: WorkspaceOption = None) -> None:
    """Close a session: no more ratings (kept as they are)."""
    from srtui.reviews import close

    _run(close, _store(workspace), name, _actor())
    print(f"review {name} closed")


@review_app.command("unblind")
def unblind_(name: SessionArg, workspace: WorkspaceOption = None) -> None:
    """Reveal the methods behind the items (only after close; logged)."""
    from srtui.reviews import unblind

    _run(unblind, _store(workspace), name, _actor())
    print(f"review {name} unblinded (logged); see `srtui review report {name}`")


@review_app.command("report")
def report_(
    name: SessionArg,
    fmt: Annotated[str, typer.Option("--format", help="table, csv, md, latex or json.")] = "table",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write to this file instead of stdout (CSV: one plain table per file, NAME.meta.json)."
        ),
    ] = None,
    table: Annotated[
        str | None, typer.Option("--table", help="Only this table (CSV: the plain table, no comment lines).")
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Scores per expert and pooled, agreement, self-consistency, time per item, leaderboard."""
    from srtui.engine.names import file_in
    from srtui.reviews import report

    store = _store(workspace)
    if fmt == "csv" and out is not None:  # plain CSV files, as `srtui export` writes them
        stem = out.name[: -len(".csv")] if out.name.endswith(".csv") else out.name
        files = _run(report.csv_report_files, store, name, stem, table)
        for i, (file, text) in enumerate(files.items()):
            _write(out if i == 0 else file_in(out.parent, file), text)
        return
    text = _run(report.render, store, name, fmt, table)
    if out is None:
        sys.stdout.write(text)
        return
    _write(out, text)


def _write(out: Path, text: str) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    print(f"wrote {out}", file=sys.stderr)


@review_app.command("ssh-setup")
def ssh_setup(
    name: SessionArg,
    expert: Annotated[str, typer.Option(help="The expert this key belongs to.", show_default=False)],
    key: Annotated[
        str, typer.Option(help='The expert\'s public key, e.g. "ssh-ed25519 AAAA... alice@laptop".', show_default=False)
    ],
    account: Annotated[
        str | None,
        typer.Option(
            help="The account experts log in to (whose authorized_keys gets the line); checked "
            "that it can run this srtui and write the workspace. Default: you.",
            show_default=False,
        ),
    ] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Print the authorized_keys line that lets this key only rate this expert's items."""
    from srtui.reviews import session_row
    from srtui.reviews.account import check_account
    from srtui.reviews.ssh import authorized_keys_line

    store = _store(workspace)
    row = _run(session_row, store, name)
    experts = row["settings"].get("experts", [])
    if expert not in experts:
        fail(f"{expert!r} is not an expert of review {name} (experts: {', '.join(experts)})")
    line = _run(authorized_keys_line, name, expert, key, store.workspace.root)
    who = account or _actor()
    how = _run(check_account, who, store.workspace.root)
    print(f"account {who} can run this srtui and write the workspace (checked {how})", file=sys.stderr)
    print(line)


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
