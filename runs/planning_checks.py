"""The bounds and names a run's plan is checked against before anything is built.

The ceilings (seeds, planned jobs, a grid's candidates, a driver's slots), the names asked for
(methods and tasks, patterns included), the scoring rule, the cluster config against the jobs'
limits and the data files present: each raises ``RunError`` with one line for the CLI. Called
by srtui.runs.planning's steps; nothing here starts or writes anything.
"""

from __future__ import annotations

from pathlib import Path

from srtui.engine.backends import backend_kind
from srtui.engine.names import quoted
from srtui.engine.spec import JobSpec
from srtui.runs.errors import RunError
from srtui.runs.options import RunRequest
from srtui.runs.tuning import TuningOptions
from srtui.tasks.catalogue import TaskContext
from srtui.tasks.suites import SUITES_DIR, Suite

MAX_SEEDS = 1000  # SRBench uses 10; beyond this a count is a typo, and planning it costs minutes
MAX_PLANNED = 100_000  # jobs one plan may hold however it was made (seeds x tasks x methods x grids)
MAX_GRID = 1000  # candidates of one method's tuning grid
MAX_JOBS = 1024  # slots of one driver (threads, pipes); a cluster scales by workers, not slots


def select_names(wanted: list[str] | None, available: list[str], known: list[str] | None = None) -> list[str]:
    """The names asked for (default: ``available``); shell-style patterns (``pyoperon*``) as in
    suite files, matched over ``known`` (default: ``available``); order kept, repeats dropped;
    a plain name's existence is checked by the caller."""
    import fnmatch

    if not wanted:
        return available
    out: list[str] = []
    for name in wanted:
        if any(ch in name for ch in "*?["):
            hits = fnmatch.filter(known or available, name)
            if not hits:
                raise RunError(f"pattern {quoted(name)} matches no name")
            out += hits
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def select_tasks(req: RunRequest, suite: Suite, root: Path) -> list[str]:
    """--tasks (names or patterns, matched as a suite file's are: the catalogue and the
    workspace's own tasks), else the suite's."""
    from srtui.tasks.suites import SuiteError, expand_tasks

    if not req.tasks:
        return list(suite.tasks)
    try:
        return expand_tasks(req.tasks, "--tasks", root)
    except SuiteError as exc:
        raise RunError(str(exc).replace("suite --tasks: ", "--tasks: ")) from None


def check_rule(suite: Suite) -> None:
    """The suite's scoring rule exists (at plan time, --dry-run included, not at scoring)."""
    from srtui.results.rule_names import RULE_NAMES

    if suite.scoring is None or suite.scoring in RULE_NAMES:  # known without pandas (issue 56)
        return
    from srtui.results.scoring import ScoreError, get_rule

    try:
        get_rule(suite.scoring)
    except ScoreError as exc:
        raise RunError(f"suite {suite.name}: scoring: {exc}") from None


def check_counts(req: RunRequest, cores: int, n_seeds: int | None) -> None:
    """--jobs and --seeds within their bounds (--jobs above the cores only when asked for)."""
    if req.jobs is not None and req.jobs < 1:
        raise RunError(f"--jobs must be at least 1, got {req.jobs}")
    local = not (req.backend == "dask" or req.dask_scheduler or req.cluster or req.cluster_config)
    if req.jobs is not None and local and req.jobs > cores and not req.oversubscribe:
        raise RunError(
            f"--jobs {req.jobs} is more than the {cores} usable core(s): jobs would share cores and "
            "their times would not compare (--oversubscribe to do it anyway)"
        )
    if req.jobs is not None and req.jobs > MAX_JOBS:
        raise RunError(f"--jobs must be at most {MAX_JOBS}, got {req.jobs}")
    if n_seeds is not None and not 1 <= n_seeds <= MAX_SEEDS:
        raise RunError(f"--seeds must be between 1 and {MAX_SEEDS}, got {req.seeds}")


def check_grids(tuning: TuningOptions) -> None:
    for method, grid in tuning.grids.items():
        if len(grid) > MAX_GRID:
            raise RunError(f"[tuning.grids] {quoted(method)}: at most {MAX_GRID} candidates, got {len(grid)}")


def check_planned(n: int) -> None:
    if n > MAX_PLANNED:
        raise RunError(f"the plan holds {n} jobs, more than the ceiling of {MAX_PLANNED}: split it into several runs")


def check_backend(req: RunRequest, specs: list[JobSpec], n_slots: int) -> tuple[str, str]:
    """The backend the request implies, its cluster config checked against the jobs' limits
    (nothing started), and the slots the run will have, said in words."""
    kind = backend_kind(req.backend, req.dask_scheduler, req.cluster, req.cluster_config)
    if kind != "dask" or req.dask_scheduler:
        return kind, (
            f"slots: those of the workers of {req.dask_scheduler}" if req.dask_scheduler else f"{n_slots} slots"
        )
    from srtui.engine.backends.dask_config import check_limits, load_cluster_config

    config = load_cluster_config(req.cluster, req.cluster_config)
    check_limits(config, [s.limits for s in specs])
    slots = int(config.settings.get("n_workers") or n_slots) if config.kind == "local" else config.expected_slots()
    where = {"local": "a local Dask cluster", "ssh": "an SSH cluster", "slurm": "a SLURM cluster"}[config.kind]
    return kind, f"{slots} slots on {where}" + (f" ({config.source})" if config.source != "defaults" else "")


def check_data(
    suite: Suite, task_names: list[str], context: TaskContext, notes: list[str], dry_run: bool
) -> tuple[list[str], list[str]]:
    """(tasks to plan, tasks left out for want of data). A run whose data files are not here is
    refused before any job starts (a run never downloads); a dry run plans the others and says
    which files are missing and the command that fetches them."""
    from srtui.tasks.fetch import missing_before_run, needed
    from srtui.tasks.fetch import plan as fetch_plan

    where = suite.path if suite.path is not None and suite.path.parent != SUITES_DIR else suite.name
    problem = missing_before_run(task_names, context, f"srtui tasks fetch {where} -w {context.workspace}")
    if not problem:
        return task_names, []
    if not dry_run:
        raise RunError(problem)
    notes.append(problem)
    missing = [
        f"{n}: {', '.join(f.rel for f in files)}"
        for n in task_names
        if (files := fetch_plan(needed([n], context), context).missing)
    ]
    left_out = {m.split(":", 1)[0] for m in missing}
    return [n for n in task_names if n not in left_out], missing
