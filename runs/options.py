"""The options of a run, declared once (issue 57).

Each ``RunOption`` says its name, type, default, help, the registry its values come from and the
``RunRequest`` field it sets. ``srtui run``'s typer options (srtui/cli/run_cmd.py), the app's
start-a-run form (srtui/app/screens/dialogs.py, through srtui.views), ``request_from`` (the
request both build) and the docs table (docs/running.md, ``DOCS_TABLES``) are made from
``RUN_OPTIONS``; a help text's ``{choices}`` lists its registry, read when the help is made.
Light to import: the registries load when their names are asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srtui.engine.errors import SrtuiError

RUN_PANEL, LIMITS_PANEL, PROTOCOL_PANEL, CLUSTER_PANEL, OUTPUT_PANEL = (
    "What to run",
    "Limits per job",
    "Protocol and SRBench method folders",
    "Cluster (Dask)",
    "Workspace and output",
)

#: ``[srbench] scaling`` / ``--srbench-scaling`` as the run's scaling (every method, not only folders)
SRBENCH_SCALING = {"reference": "xy", "folder": "method", "none": "none"}


class OptionError(SrtuiError):
    """A run option's value that means nothing (an empty list of names)."""


@dataclass(frozen=True)
class FormField:
    """How the app's start-a-run form shows an option: its label and the hint in an empty field.
    The widget follows the option's type: a number field, text, a pick list (a list option with
    a registry), a drop-down (one value of a registry)."""

    label: str
    placeholder: str = ""
    #: the field's first value (the form's own wish, e.g. one job per core); None: blank
    initial: Callable[[], str] | None = None


@dataclass(frozen=True)
class RunOption:
    """One option of a run, everything its consumers read."""

    name: str  # the parameter's name (typer's, the form's widget id)
    flags: tuple[str, ...]  # () for the positional argument
    type: Any  # the value's type: int, float, str, bool, Path, list[str], list[Path]
    help: str  # ``{choices}`` is replaced by the registry's names
    default: Any = None
    metavar: str = ""  # the word for its value in --help ("" for a flag)
    panel: str | None = RUN_PANEL  # its --help panel
    #: the registry its values come from: names, or names -> a few words about each
    choices: Callable[[], Mapping[str, str] | Sequence[str]] | None = None
    #: the RunRequest field it sets ("srbench.tuned": a key of that field's table); None: the command's own
    request: str | None = None
    to_request: Callable[[Any], Any] | None = None  # the value as the request holds it
    form: FormField | None = None  # shown in the app's start-a-run form
    hidden: bool = False

    @property
    def argument(self) -> bool:
        return not self.flags

    def names(self) -> dict[str, str]:
        """The registry's names, each with its few words ("" when it has none)."""
        found = self.choices() if self.choices is not None else {}
        return dict(found) if isinstance(found, Mapping) else dict.fromkeys(found, "")

    def help_text(self) -> str:
        """The help with the registry's names listed in place of ``{choices}``."""
        if "{choices}" not in self.help:
            return self.help
        named = [f"{n} ({words})" if words else n for n, words in self.names().items()]
        return self.help.replace("{choices}", listing(named))


def listing(names: Sequence[str]) -> str:
    """``a, b or c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1] if names else ""


def split_names(value: str | None) -> list[str] | None:
    """``"a, b"`` -> ``["a", "b"]``; None stays None; a list of nothing but commas is refused."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise OptionError("an empty list of names was given")
    return names


# the registries, each read where it is declared (imported when its names are asked for)
def _suites() -> list[str]:
    from srtui.tasks.suites import builtin_suite_names

    return builtin_suite_names()


def installed_methods() -> list[str]:
    """The registry's methods whose packages are installed (a cheap check: no imports)."""
    from srtui.engine.methods import registry

    out = []
    for name in registry.names():
        try:
            if registry.load(name).availability()[0]:
                out.append(name)
        except registry.MethodError:
            continue
    return out


def _protocols() -> tuple[str, ...]:
    from srtui.engine.protocols import PROTOCOLS

    return tuple(PROTOCOLS)


def _launchers() -> tuple[str, ...]:
    from srtui.engine.process.launch import LAUNCHERS

    return LAUNCHERS


def _backends() -> tuple[str, ...]:
    from srtui.engine.backends import KINDS

    return KINDS


def _clusters() -> tuple[str, ...]:
    from srtui.engine.backends.dask_config import CLUSTER_KINDS

    return CLUSTER_KINDS


def _scalings() -> dict[str, str]:
    return {name: "as 2.0 ran" if name == "reference" else "" for name in SRBENCH_SCALING}


def _cores() -> str:
    from srtui.engine.backends.base import usable_cores

    return str(len(usable_cores()))


def _opt(name: str, flags: str | tuple[str, ...], type_: Any, help_: str, **kwargs: Any) -> RunOption:
    return RunOption(name, (flags,) if isinstance(flags, str) else flags, type_, help_, **kwargs)


# fmt: off
RUN_OPTIONS: tuple[RunOption, ...] = (
    _opt("suite", (), str, "A built-in suite or a suite .toml file.", default=..., metavar="SUITE",
         panel=None, choices=_suites, request="suite", form=FormField("suite", initial=lambda: "smoke")),
    _opt("workspace", ("--workspace", "-w"), Path, "Default: $SRTUI_WORKSPACE, else ./srtui-workspace.",
         metavar="DIR", panel=OUTPUT_PANEL),
    _opt("jobs", ("--jobs", "-j"), int, "Parallel jobs (default: cores).", metavar="N", request="jobs",
         form=FormField("parallel jobs", initial=_cores)),
    _opt("methods", "--methods", str, "Methods (default: the suite's).", metavar="A,B", choices=installed_methods,
         request="methods", to_request=split_names,
         form=FormField("methods", "installed ones; Space picks, none = the suite's own")),
    _opt("tasks", "--tasks", str, "Tasks (default: the suite's).", metavar="A,B", request="tasks",
         to_request=split_names, form=FormField("tasks", "comma-separated")),
    _opt("seeds", "--seeds", int, "Seeds (default: the suite's).", metavar="N", request="seeds",
         form=FormField("seeds", "number of seeds")),
    _opt("oversubscribe", "--oversubscribe", bool, "Allow --jobs above the cores.", default=False,
         request="oversubscribe"),
    _opt("retry_failed", "--retry-failed", bool, "Re-run failed jobs (error, timeout, oom, ...).", default=False,
         request="retry_failed"),
    _opt("time_s", "--time-limit", float, "Wall time.", metavar="S", panel=LIMITS_PANEL, request="time_s",
         form=FormField("time limit s", "per job")),
    _opt("mem_mb", "--mem-limit", float, "Memory of the process tree.", metavar="MB", panel=LIMITS_PANEL,
         request="mem_mb", form=FormField("memory MB", "per job")),
    _opt("cpu_s", "--cpu-limit", float, "CPU time per process.", metavar="S", panel=LIMITS_PANEL, request="cpu_s"),
    _opt("grace_s", "--grace", float, "From SIGTERM to SIGKILL.", metavar="S", panel=LIMITS_PANEL,
         request="grace_s"),
    _opt("launcher", "--launcher", str, "{choices} (default: the suite's).", metavar="HOW", panel=LIMITS_PANEL,
         choices=_launchers, request="launcher"),
    _opt("allow_network", "--allow-network", list[str],
         "This method's jobs keep the network (default: none has any); repeatable.", metavar="METHOD",
         panel=LIMITS_PANEL, request="allow_network", to_request=lambda v: list(v or [])),
    _opt("protocol", "--protocol", str, "{choices}; default: the suite's.", metavar="NAME", panel=PROTOCOL_PANEL,
         choices=_protocols, request="protocol"),
    _opt("method_dir", "--method-dir", list[Path], "An SRBench method folder or 2021 NAME.py (repeatable).",
         metavar="DIR", panel=PROTOCOL_PANEL, request="method_dirs", to_request=lambda v: list(v or [])),
    _opt("env", "--env", str, "Run the --method-dir methods in this environment (srtui env list).", metavar="NAME",
         panel=PROTOCOL_PANEL, request="env"),
    _opt("tuned", "--tuned/--untuned", bool, "Folders: their _params.py.", panel=PROTOCOL_PANEL,
         request="srbench.tuned"),
    _opt("srbench_test", "--srbench-test/--no-srbench-test", bool, "Folders: test_params.", panel=PROTOCOL_PANEL,
         request="srbench.test"),
    _opt("srbench_scaling", "--srbench-scaling", str, "Folders: {choices}.", metavar="HOW", panel=PROTOCOL_PANEL,
         choices=_scalings, request="srbench.scaling"),
    _opt("backend", "--backend", str, "{choices}; the options below imply dask.", metavar="NAME",
         panel=CLUSTER_PANEL, choices=_backends, request="backend"),
    _opt("dask_scheduler", "--dask-scheduler", str, "A running scheduler, tcp://HOST:8786.", metavar="ADDR",
         panel=CLUSTER_PANEL, request="dask_scheduler"),
    _opt("scheduler", "--scheduler", str, "Deprecated: --dask-scheduler.", panel=None, hidden=True),
    _opt("cluster", "--cluster", str, "Start one: {choices}.", metavar="KIND", panel=CLUSTER_PANEL,
         choices=_clusters, request="cluster"),
    _opt("cluster_config", "--cluster-config", Path, "Cluster settings (its table names it).", metavar="TOML",
         panel=CLUSTER_PANEL, request="cluster_config"),
    _opt("dry_run", "--dry-run", bool, "Show what would run; write nothing.", default=False, panel=OUTPUT_PANEL),
    _opt("no_metrics", "--no-metrics", bool, "Leave them to `srtui rescore`.", default=False, panel=OUTPUT_PANEL,
         request="metrics", to_request=lambda v: not v),
    _opt("data_dir", "--data-dir", Path,
         "Data files: srtui's layout, a PMLB checkout or cache (else $SRTUI_DATA_DIR).", metavar="DIR",
         request="data_dir"),
)
# fmt: on


@dataclass
class RunRequest:
    """What a run is asked to do: every field but ``params`` is set by a run option (RUN_OPTIONS)."""

    suite: str
    methods: list[str] | None = None
    tasks: list[str] | None = None
    seeds: int | None = None
    #: the command line's limits over the suite file's [limits], by the file's names (srtui.engine.spec.Limits)
    time_s: float | None = None
    mem_mb: float | None = None
    cpu_s: float | None = None
    grace_s: float | None = None
    jobs: int | None = None
    retry_failed: bool = False
    method_dirs: list[Path] = field(default_factory=list)
    env: str | None = None  # the named environment the --method-dir methods run in (engine/methods/env_specs.py)
    #: how method folders run (SRBench's --tuned, -test, scaling); None: the suite's [srbench]
    srbench: dict[str, Any] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    backend: str | None = None  # None: dask if a cluster option is given, else local
    dask_scheduler: str | None = None  # tcp://HOST:8786 of a running Dask scheduler
    cluster: str | None = None
    cluster_config: Path | None = None
    metrics: bool = True  # compute the results metrics at the end of the run
    oversubscribe: bool = False  # allow --jobs above the usable cores (local backend)
    protocol: str | None = None  # overrides the suite's (srtui.engine.protocols.PROTOCOLS)
    launcher: str | None = None  # auto / fork / exec (srtui.engine.process.launch); overrides the suite's
    data_dir: Path | None = None  # where data files are read first (else $SRTUI_DATA_DIR)
    allow_network: list[str] = field(default_factory=list)  # methods whose jobs keep the network


def request_from(values: Mapping[str, Any], options: Iterable[RunOption] | None = None) -> RunRequest:
    """The request the options' ``values`` (by option name) mean; an option left out keeps its
    default. A dotted ``request`` sets a key of that field's table (``srbench.tuned``)."""
    fields: dict[str, Any] = {}
    for opt in RUN_OPTIONS if options is None else options:
        if opt.request is None:
            continue
        value = values.get(opt.name, None if opt.default is ... else opt.default)
        value = opt.to_request(value) if opt.to_request is not None else value
        top, _, key = opt.request.partition(".")
        if key:
            fields.setdefault(top, {})[key] = value
        else:
            fields[top] = value
    return RunRequest(**fields)


def docs_table(options: Iterable[RunOption] | None = None) -> str:
    """The table of docs/running.md "Run options": every option of `srtui run` (and the app's form)."""
    rows = ["| option | value | what it does | request field | app form |", "| --- | --- | --- | --- | --- |"]
    for opt in RUN_OPTIONS if options is None else options:
        if opt.hidden:
            continue
        name = opt.metavar if opt.argument else " ".join(f"`{f}`" for f in opt.flags)
        value = "-" if opt.type is bool or opt.argument else f"`{opt.metavar}`"
        what = opt.help_text().replace("|", "/")
        form = opt.form.label if opt.form is not None else "-"
        rows.append(f"| {name} | {value} | {what} | {f'`{opt.request}`' if opt.request else '-'} | {form} |")
    return "\n".join(rows) + "\n"


#: the run options' docs table and its page; ``python -m srtui.runs.options [--write]`` checks (or
#: rewrites) it as ``python -m srtui.results.outputs.docs_tables`` does its own, which cannot read
#: this room (results sits below runs)
DOCS_TABLES: dict[str, tuple[str, Callable[[], str]]] = {"run-options": ("running.md", docs_table)}


if __name__ == "__main__":
    import sys

    from srtui.results.outputs.docs_tables import main

    raise SystemExit(main(sys.argv[1:], DOCS_TABLES))
