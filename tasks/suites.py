"""Suites: a benchmark is data (tasks x methods x seeds x limits x scoring rule) in a TOML file.

Built-in suites live in ``tasks/suites/*.toml``; a user passes a path to their own. Example::

    name = "smoke"
    description = "..."
    tasks = ["srbench2022-easier"]
    methods = ["linear", "gplearn"]
    seeds = [2082, 3946]        # or: n_seeds = 3 (the first n competition seeds)
    scoring = "srbench2022-synthetic"
    protocol = "srbench2025"    # optional: none (default), srbench2025 (grid search), srbench2021 (halving)
    launcher = "auto"           # optional; fork where the method is fork-safe (default), fork, exec

    [tuning]             # optional, checked when run (srtui.runs.tuning.TuningOptions)
    scaling = "xy"       # none, x, y, xy, method (eval_kwargs), or a table per method
    limits = { time_s = 10 }                 # each tuning job's limits over [limits]
    grids = { ridge = [{ alphas = [0.1] }] } # configurations besides the defaults

    [limits]
    time_s = 60          # wall time of one job
    mem_mb = 2000        # memory of the whole job process tree
    cpu_s = 120          # CPU time (RLIMIT_CPU); default 1.5 x time_s + 10 (Limits.effective_cpu_s)
    grace_s = 5          # SIGTERM -> SIGKILL grace period
    disk_mb = 1024       # what the job's folder may hold in total (default 1024); more: status disk

    [params.gplearn]     # optional per-method parameter overrides
    generations = 20

    [environments]       # optional: a method folder or file's named environment (srtui env list)
    KernelRidge = "sklearn-0.24.1"

    [srbench]            # optional: how SRBench method folders (--method-dir) are run
    tuned = false        # use each folder's _params.py (SRBench's --tuned)
    test = false         # apply each folder's eval_kwargs test_params (SRBench's -test)
    scaling = "reference"  # reference (scale X and y, SRBench 2.0's runs), folder, none
    fork_safe = false    # override: fork the folders (true) or exec them (false); unset: measured

Task names may be shell-style patterns (``"srbench2022-exact-*"``), expanded when the suite is
read: over the built-in catalogue for built-in suites, and over the workspace's own tasks
(``srtui tasks add``) too for a suite file of the user's (``tasks = ["off-*"]``).
``seed_from_task = true`` runs each task once, with the data seed its name ends in (``-s2082``),
as the SRBench 2022 competition did; ``Suite.jobs()`` gives the (task, seed) pairs either way.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srtui.engine.errors import SrtuiError, did_you_mean
from srtui.engine.names import check_name, is_name, quoted, quoted_text

SUITES_DIR = Path(__file__).parent / "suites"

#: seeds a suite may name (the same ceiling as `srtui run --seeds`)
MAX_SEEDS = 1000

#: the SRBench 2022 competition's seeds, in its order; suites that say n_seeds take the first n
COMPETITION_SEEDS = (2082, 3946, 5847, 6087, 6589, 7102, 7884, 8674, 9023, 9900)


class SuiteError(SrtuiError, ValueError):
    """A suite that cannot be found or read; the message is one line for the CLI."""


@dataclass
class Suite:
    name: str
    tasks: list[str]
    methods: list[str]
    seeds: list[int]
    limits: dict[str, float] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    scoring: str | None = None
    description: str = ""
    path: Path | None = None
    seed_from_task: bool = False
    srbench: dict[str, Any] = field(default_factory=dict)
    protocol: str = "none"  # srtui.engine.protocols.PROTOCOLS: tuning and its folds (checked when run)
    launcher: str = "auto"  # srtui.engine.process.launch: fork where the method is fork-safe, or fork / exec
    tuning: dict[str, Any] = field(default_factory=dict)  # [tuning]: srtui.runs.tuning.TuningOptions
    seeds_given: bool = True  # False: neither seeds nor n_seeds (a protocol's number of runs applies)
    seeds_listed: bool = True  # the suite lists its seeds (``seeds``), not only how many (``n_seeds``)
    #: [environments]: method folder or file name -> named environment (engine/methods/env_specs.py)
    environments: dict[str, str] = field(default_factory=dict)

    def jobs(self) -> list[tuple[str, int]]:
        """(task, seed) pairs to run: tasks x seeds, or each task with its own data seed."""
        if not self.seed_from_task:
            return [(t, s) for t in self.tasks for s in self.seeds]
        return [(t, task_seed(t)) for t in self.tasks]


_SEED_RE = re.compile(r"-s(\d+)(?:-|$)")


def task_seed(task: str) -> int:
    m = _SEED_RE.search(task)
    if m is None:
        raise SuiteError(f"task {quoted(task)} has no '-sSEED' in its name (needed by seed_from_task)")
    return int(m.group(1))


def expand_tasks(patterns: list[str], where: str, workspace: Path | None = None) -> list[str]:
    """Expand shell-style patterns against the built-in catalogue and, given ``workspace``, its
    user tasks; plain names pass through."""
    from srtui.tasks.catalogue import TaskContext, builtin_names, entries

    if workspace is None:
        names = builtin_names()
    else:
        names = sorted(e.name for e in entries(TaskContext.for_workspace(Path(workspace))))
    out: list[str] = []
    for pat in patterns:
        if any(ch in pat for ch in "*?["):
            hits = fnmatch.filter(names, pat)
            if not hits:
                raise SuiteError(f"suite {where}: task pattern {quoted(pat)} matches no task")
            out.extend(h for h in hits if h not in out)
        elif pat not in out:
            out.append(pat)
    return out


def builtin_suite_names() -> list[str]:
    return sorted(p.stem for p in SUITES_DIR.glob("*.toml"))


def docs_table() -> str:
    """The table of docs/suites-tasks.md "Built-in suites": every file of tasks/suites/, read."""
    rows = ["| suite | tasks | methods | seeds | scoring | what it is |", "| --- | --- | --- | --- | --- | --- |"]
    for name in builtin_suite_names():
        s = load_suite(name)
        seeds = "each task's own" if s.seed_from_task else str(len(s.seeds))
        what = s.description.replace("|", "/")
        rows.append(f"| `{name}` | {len(s.tasks)} | {len(s.methods)} | {seeds} | {s.scoring or '-'} | {what} |")
    return "\n".join(rows) + "\n"


def builtin_suite_path(name: str) -> Path:
    """The file of the built-in suite ``name``; SuiteError (naming the suites, with did-you-mean)
    when there is none. Cheap: the CLI asks it before importing the run machinery."""
    if not is_name(name):
        raise SuiteError(f"unknown suite {quoted(name)} (a suite is a built-in name or a .toml file)")
    path = SUITES_DIR / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(builtin_suite_names())
        raise SuiteError(
            f"unknown suite {quoted(name)} (built-in suites: {known}){did_you_mean(name, builtin_suite_names())}"
        )
    return path


def load_suite(name_or_path: str, workspace: Path | None = None) -> Suite:
    """Load a built-in suite by name or a user suite from a ``.toml`` path (whose task patterns
    also match the tasks of ``workspace``, if given)."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise SuiteError(f"suite file not found: {name_or_path}")
    else:
        workspace = None  # a built-in suite means the built-in tasks only
        path = builtin_suite_path(name_or_path)
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SuiteError(f"suite file {path} is not valid TOML: {quoted_text(str(exc))}") from None
    except (RecursionError, MemoryError):
        raise SuiteError(f"suite file {path} is nested too deeply to read") from None
    return suite_from_dict(data, default_name=path.stem, path=path, workspace=workspace)


#: the keys a suite file may have (a table's own keys are checked where the table is read)
SUITE_KEYS = (
    "name",
    "description",
    "tasks",
    "methods",
    "seeds",
    "n_seeds",
    "seed_from_task",
    "scoring",
    "protocol",
    "launcher",
    "limits",
    "params",
    "tuning",
    "srbench",
    "environments",
)


def suite_from_dict(
    data: dict[str, Any], default_name: str, path: Path | None = None, workspace: Path | None = None
) -> Suite:
    where = str(path or default_name)
    unknown = [k for k in data if k not in SUITE_KEYS]
    if unknown:
        raise SuiteError(
            f"suite {where}: unknown key {quoted(unknown[0])}{did_you_mean(unknown[0], SUITE_KEYS)} "
            f"(keys: {', '.join(SUITE_KEYS)})"
        )

    def str_list(key: str) -> list[str]:
        value = data.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise SuiteError(f"suite {where}: '{key}' must be a non-empty list of names")
        return list(value)

    if "seeds" in data:
        seeds = data["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) for s in seeds):
            raise SuiteError(f"suite {where}: 'seeds' must be a non-empty list of integers")
        if not all(0 <= s < 2**32 for s in seeds):  # numpy's and scikit-learn's seeds are 32-bit
            raise SuiteError(f"suite {where}: 'seeds' must be integers from 0 to 2**32 - 1")
        if len(seeds) > MAX_SEEDS:
            raise SuiteError(f"suite {where}: at most {MAX_SEEDS} seeds, got {len(seeds)}")
        if len(set(seeds)) != len(seeds):
            raise SuiteError(f"suite {where}: 'seeds' repeats a seed")
    else:
        n = data.get("n_seeds", 1)
        if not isinstance(n, int) or not 1 <= n <= len(COMPETITION_SEEDS):
            raise SuiteError(f"suite {where}: 'n_seeds' must be 1..{len(COMPETITION_SEEDS)}")
        seeds = list(COMPETITION_SEEDS[:n])
    limits = data.get("limits", {})
    if not isinstance(limits, dict):
        raise SuiteError(f"suite {where}: [limits] must be a table")
    params = data.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
        raise SuiteError(f"suite {where}: [params.METHOD] must be tables")
    seed_from_task = data.get("seed_from_task", False)
    if not isinstance(seed_from_task, bool):
        raise SuiteError(f"suite {where}: 'seed_from_task' must be true or false")
    srbench = _srbench_table(data.get("srbench", {}), where)
    launcher = data.get("launcher", "auto")
    if launcher not in ("auto", "fork", "exec"):
        raise SuiteError(f'suite {where}: \'launcher\' must be "auto", "fork" or "exec"')
    protocol = data.get("protocol", "none")
    if not isinstance(protocol, str):
        raise SuiteError(f'suite {where}: \'protocol\' must be a name ("none", "srbench2025", "srbench2021")')
    tuning = data.get("tuning", {})
    if not isinstance(tuning, dict):
        raise SuiteError(f"suite {where}: [tuning] must be a table")
    environments = data.get("environments", {})
    if not isinstance(environments, dict) or not all(isinstance(v, str) for v in environments.values()):
        raise SuiteError(f'suite {where}: [environments] must map method names to environment names (METHOD = "NAME")')
    tasks = expand_tasks(str_list("tasks"), where, workspace)
    if seed_from_task:
        for t in tasks:
            task_seed(t)
    name = data.get("name", default_name)
    check_name(name, f"suite {where}: name", SuiteError)  # shown on terminals, made into file names
    return Suite(
        name=name,
        tasks=tasks,
        methods=str_list("methods"),
        seeds=list(seeds),
        limits=dict(limits),
        params=params,
        scoring=data.get("scoring"),
        description=str(data.get("description", "")),
        path=path,
        seed_from_task=seed_from_task,
        srbench=srbench,
        protocol=protocol,
        launcher=launcher,
        tuning=tuning,
        seeds_given="seeds" in data or "n_seeds" in data,
        seeds_listed="seeds" in data,
        environments=dict(environments),
    )


def _srbench_table(table: Any, where: str) -> dict[str, Any]:
    """[srbench]: tuned and test are booleans, scaling one of srbench_eval.SCALINGS."""
    from srtui.engine.methods.srbench_eval import SCALINGS

    if not isinstance(table, dict):
        raise SuiteError(f"suite {where}: [srbench] must be a table")
    for key, value in table.items():
        if key in ("tuned", "test") and not isinstance(value, bool):
            raise SuiteError(f"suite {where}: [srbench] {key} must be true or false")
        if key == "fork_safe" and not isinstance(value, bool):
            raise SuiteError(f"suite {where}: [srbench] fork_safe must be true or false")
        if key == "scaling" and value not in SCALINGS:
            raise SuiteError(f"suite {where}: [srbench] scaling must be one of {', '.join(SCALINGS)}")
        if key not in ("tuned", "test", "scaling", "fork_safe"):
            raise SuiteError(f"suite {where}: unknown [srbench] key {key!r} (known: tuned, test, scaling, fork_safe)")
    return dict(table)
