"""Run options are declared once (runs/options.py RUN_OPTIONS, issue 57): `srtui run`'s typer
options, the RunRequest, the app's start-a-run form and the docs table are all made from it.

The contract test declares a throwaway option (in place of --time-limit, so the request has a
field for it) and follows it to every consumer: `srtui run --help`, a dry run's limits (the
RunRequest the command built), the app's form (a field of its own whose value reaches the request
the form hands back) and the docs table. A consumer with a hand-written list misses it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer
from test_tui import current, sync, wait_for
from textual.app import App
from textual.widgets import Input, Label, SelectionList
from typer.testing import CliRunner

from srtui.app.screens.dialogs import StartRunScreen
from srtui.cli import run_cmd
from srtui.docs_tables import stale
from srtui.engine.backends import KINDS
from srtui.engine.backends.dask_config import CLUSTER_KINDS
from srtui.engine.process.launch_choice import LAUNCHERS
from srtui.engine.protocols import PROTOCOLS
from srtui.engine.workspace import Workspace
from srtui.runs import options
from srtui.runs.options import SRBENCH_SCALING, FormField, RunOption, RunRequest, docs_table, request_from

DOCS = Path(__file__).parents[2] / "docs"
WIDE = {"COLUMNS": "250", "TERM": "dumb", "NO_COLOR": "1"}

THROWAWAY = RunOption(
    "wall_throwaway",
    ("--throwaway-wall",),
    float,
    "Throwaway wall time, declared by the contract test.",
    metavar="SECS",
    panel=options.LIMITS_PANEL,
    request="time_s",
    form=FormField("throwaway wall", "seconds"),
)


def run_app() -> typer.Typer:
    """A typer app holding `srtui run` as the command module makes it from the declaration now."""
    app = typer.Typer()
    run_cmd.register(app)
    return app


def help_of(app: typer.Typer) -> str:
    out = CliRunner().invoke(app, ["run", "--help"], env=WIDE)
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def test_every_request_field_is_set_by_one_declared_option() -> None:
    fields = {f.name for f in dataclasses.fields(RunRequest)}
    targets = [o.request.split(".")[0] for o in options.RUN_OPTIONS if o.request]
    assert set(targets) <= fields
    assert fields - set(targets) == {"params"}  # per-method params come from suite files and `methods check`
    singles = [o.request for o in options.RUN_OPTIONS if o.request and "." not in o.request]
    assert len(singles) == len(set(singles))


def test_help_lists_what_the_registries_hold() -> None:
    text = help_of(run_app())
    for registry in (PROTOCOLS, KINDS, LAUNCHERS, SRBENCH_SCALING, CLUSTER_KINDS):
        for name in registry:
            assert name in text, (name, text)
    for opt in options.RUN_OPTIONS:
        for flag in opt.flags:
            assert (flag.split("/")[0] in text) != opt.hidden, flag
    assert "{choices}" not in text


def test_request_from_maps_each_option_as_the_command_line_did() -> None:
    req = request_from(
        {"suite": "smoke", "methods": "a, b", "no_metrics": True, "tuned": False, "srbench_scaling": "folder"}
    )
    assert req.suite == "smoke" and req.methods == ["a", "b"] and req.tasks is None
    assert req.metrics is False and req.srbench == {"tuned": False, "test": None, "scaling": "folder"}
    assert req.method_dirs == [] and req.allow_network == [] and req.time_s is None


@pytest.fixture
def throwaway(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUN_OPTIONS with --time-limit replaced by the throwaway option, in the form's place too."""
    declared = [THROWAWAY if o.name == "time_s" else o for o in options.RUN_OPTIONS]
    monkeypatch.setattr(options, "RUN_OPTIONS", tuple(declared))


def test_a_declared_option_reaches_the_help_the_request_and_the_docs(throwaway: None, tmp_path: Path) -> None:
    app = run_app()
    text = help_of(app)
    assert "--throwaway-wall SECS Throwaway wall time, declared by the contract test." in text
    assert "--time-limit" not in text
    args = ["run", "smoke", "--methods", "linear", "--tasks", "smoke-linear", "-w", str(tmp_path / "ws")]
    out = CliRunner().invoke(app, [*args, "--throwaway-wall", "7", "--dry-run"], env=WIDE)
    assert out.exit_code == 0, out.output
    assert "limits: wall 7 s" in out.output  # the RunRequest's time_s, planned
    table = docs_table()
    assert "| `--throwaway-wall` | `SECS` | Throwaway wall time" in table and "`--time-limit`" not in table
    assert stale(DOCS) == ["docs/running.md: run-options"]


def test_the_docs_table_is_the_declaration_s() -> None:
    assert stale(DOCS) == []  # else: python -m srtui.docs_tables --write


class FormApp(App[None]):
    """The start-a-run form alone; what it hands back is kept."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.request: RunRequest | None = None

    def on_mount(self) -> None:
        self.push_screen(StartRunScreen(self.workspace), self.keep)

    def keep(self, request: RunRequest | None) -> None:
        self.request = request


@sync
async def test_a_declared_option_reaches_the_app_s_form(throwaway: None, tmp_path: Path) -> None:
    app = FormApp(Workspace(tmp_path / "ws"))
    async with app.run_test(size=(80, 40)) as pilot:
        form = current(app, StartRunScreen)
        labels = [str(label.render()) for label in form.query(Label)]
        assert "throwaway wall" in labels and "time limit s" not in labels
        form.query_one("#wall_throwaway", Input).value = "7"
        form.query_one("#tasks", Input).value = "smoke-linear"
        form.query_one("#methods", SelectionList).select("linear")
        form.query_one("#wall_throwaway", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.request is not None, timeout=120)
    assert app.request is not None and app.request.time_s == 7.0
    assert app.request.tasks == ["smoke-linear"] and app.request.methods == ["linear"]
