"""`srtui score`, `srtui expr`, `srtui export`, `srtui rescore`."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from srtui.cli import score_cache
from srtui.cli.common import RAW_HELP, ExpressionCommand, WorkspaceOption, check_timeout, fail
from srtui.cli.score_plot import check_figure, render
from srtui.cli.score_published import (
    AllowMixedOption,
    DataDirOption,
    PublishedOption,
    PublishedSource,
    ReviewOption,
    StrictOption,
    TrustOption,
    published_score,
)
from srtui.cli.steps import Steps
from srtui.engine.errors import did_you_mean
from srtui.engine.names import file_in

if TYPE_CHECKING:
    import pandas as pd

    from srtui.results.scoring.base import Rule
    from srtui.results.store.store import Store

CSV_HELP = (
    "Score runs produced elsewhere: a CSV with one row per run, SRBench's collated tables "
    "(docs/csv/blackbox_results.csv: one row per method and dataset), or a directory (or .json) of "
    "SRBench evaluate_model.py JSON results (see docs/scoring.md); "
    "columns task (or dataset), method (or algorithm), r2_test required; seed (random_state), "
    "status, size (model_size), size_simplified (simplified_complexity), simplicity, "
    "symbolic_solution, feature_absence, r2_extrapolation, noise_robustness, property, "
    "difficulty, noise, truth_size used when present (see results/scoring/tables.py)."
)


CLUSTER = "Cluster (Dask)"


def _store(workspace: Path | None, readonly: bool = True) -> Store:
    from srtui.engine.workspace import resolve
    from srtui.results.store.store import Store

    return Store(resolve(workspace), readonly=readonly)


def _options(pairs: list[str] | None) -> dict[str, str]:
    out = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            fail(f"--option takes KEY=VALUE, got {p!r}")
        out[key.strip()] = value.strip()
    return out


def _trust(path: Path | None) -> pd.DataFrame | None:
    from srtui.outputs import trust_file

    return None if path is None else trust_file(path)


def _emit(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    print(f"wrote {out}", file=sys.stderr)


def score(
    rule: Annotated[str, typer.Argument(help="Scoring rule, e.g. srbench2022-synthetic (see --list).")] = "",
    suite: Annotated[str | None, typer.Option(help="Score only this suite's runs.")] = None,
    from_csv: Annotated[Path | None, typer.Option("--from-csv", help=CSV_HELP)] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="table, csv, md, latex, json, or plot (the rule's figure in the terminal).")
    ] = "table",
    out: Annotated[Path | None, typer.Option("--out", help="Write to this file instead of stdout.")] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Rule option KEY=VALUE (repeatable), e.g. profile=corrected, agg=mean."),
    ] = None,
    trust: TrustOption = None,
    review: ReviewOption = None,
    list_rules: Annotated[bool, typer.Option("--list", help="List the rules and their options.")] = False,
    raw: Annotated[bool, typer.Option("--raw", help=RAW_HELP)] = False,
    published: PublishedOption = None,
    strict: StrictOption = False,
    data_dir: DataDirOption = None,
    allow_mixed: AllowMixedOption = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Score the runs of the workspace (or of a CSV file) with a named rule, optionally beside
    SRBench's published results (--published)."""
    if list_rules or not rule:
        from srtui.results.scoring import RULES

        _list_rules(RULES)
        return
    # before a kept answer: the key holds neither --strict nor --data-dir (#56)
    if suite and from_csv:
        fail("give --suite or --from-csv, not both")
    if published is not None and from_csv:
        fail("give --from-csv or --published, not both (--published scores the workspace beside the publication)")
    if (strict or data_dir) and published is None:
        fail("--strict and --data-dir go with --published")
    if trust and review:
        fail("give --trust or --review, not both")
    request = score_cache.Request(rule, suite, from_csv, fmt, out, list(option or []), trust, raw, allow_mixed)
    # an answer kept for the same call over the same runs: printed as it was, without pandas (#56)
    kept = score_cache.lookup(request, workspace) if score_cache.keepable(request, review, published) else None
    if kept is not None and kept.answer is not None:
        for line in kept.answer["stderr"]:
            print(line, file=sys.stderr)
        _write_docs([(t, x) for t, x in kept.answer["docs"]], out)
        return
    from srtui.results.outputs.export import FORMATS

    if fmt == "plot":
        check_figure(rule)
    elif fmt not in FORMATS:  # before the work: a typo costs no scoring run
        known = (*FORMATS, "plot")
        fail(f"unknown format {fmt!r} (formats: {', '.join(known)}){did_you_mean(fmt, known)}")
    warned: list[str] = []  # what a kept answer says on stderr again
    with score_cache.python_warnings() as caught:  # an answer with a Python warning is not kept
        docs = _compute(request, review, published, strict, data_dir, workspace, warned)
    if kept is not None and not caught:
        score_cache.keep(kept, docs, warned)
    _write_docs(docs, out)


def _compute(
    req: score_cache.Request,
    review: str | None,
    published: str | None,
    strict: bool,
    data_dir: Path | None,
    workspace: Path | None,
    warned: list[str],
) -> list[tuple[str, str]]:
    """The score's documents (``_score_docs``), computed; the stale-metrics lines said into ``warned``."""
    from srtui.results.scoring import score as apply_rule
    from srtui.results.scoring.tables import read_runs_csv, runs_frame

    rule, suite, from_csv, option, allow_mixed = req.rule, req.suite, req.from_csv, req.options, req.allow_mixed
    trust_df = _review_trust(workspace, review) if review else _trust(req.trust)
    with Steps(f"score {rule}") as steps:  # closed before the score is written: stdout is its own
        if published is not None:
            steps.step("the runs beside the published results", 1, 1)
            source = PublishedSource(published, suite, workspace, data_dir, strict)
            result = published_score(rule, source, _options(option), trust_df, allow_mixed)
        else:
            steps.step("reading the runs", 1, 2)
            if from_csv:
                runs = read_runs_csv(from_csv)
            else:
                store = _store(workspace)
                runs = runs_frame(store, suite)
                warned += _warn_stale(store, suite)
                if runs.empty:
                    fail(f"no runs{' of suite ' + suite if suite else ''} in the workspace")
            steps.step(f"scoring {len(runs)} runs", 2, 2)
            result = apply_rule(rule, runs, trust=trust_df, allow_mixed=allow_mixed, **_options(option))
    return _score_docs(result, req.fmt, req.raw, req.out)


def _score_docs(result: Any, fmt: str, raw: bool, out: Path | None) -> list[tuple[str, str]]:
    """The score's documents and where each goes (``srtui.cli.score_cache``'s targets): on stdout,
    or in ``out``; CSV in a file is plain (srtui.results.outputs.export.csv_files): its other tables
    and its sidecar ``NAME.meta.json`` beside it."""
    if fmt != "csv" or out is None:
        return [(score_cache.OUT if out is not None else score_cache.STDOUT, render(result, fmt, raw))]
    from srtui.results.outputs.export import score_csv_files

    stem = out.name[: -len(".csv")] if out.name.endswith(".csv") else out.name
    files = score_csv_files(stem, result, raw=raw).items()
    return [(score_cache.OUT if i == 0 else score_cache.BESIDE + file, text) for i, (file, text) in enumerate(files)]


def _write_docs(docs: list[tuple[str, str]], out: Path | None) -> None:
    for path, text in score_cache.targets(docs, out):
        _emit(text, path)


def _list_rules(rules: dict[str, Rule]) -> None:
    """Each rule: name, release, options (default and choices), its documentation; the profiles
    reference and corrected each get their own paragraph."""
    import textwrap

    for r in rules.values():
        opts = ", ".join(
            f"{k}={d}" + (f" ({'|'.join(map(str, allowed))})" if allowed else "")
            for k, (d, allowed) in r.options.items()
        )
        release = f"  release {r.release}" if r.release else ""
        print(
            f"{r.name}{release}\n  options: {opts or 'none'}" + ("; needs --trust or --review" if r.needs_trust else "")
        )
        for para in textwrap.dedent("    " + (r.doc or "").strip()).split("\n\n"):
            text = " ".join(para.split())
            lines = text.split(" corrected: ", 1)  # reference and corrected as two paragraphs
            for i, part in enumerate(lines):
                print(
                    textwrap.fill(
                        ("corrected: " if i else "") + part, 100, initial_indent="  ", subsequent_indent="    "
                    )
                )
        print()


def _review_trust(workspace: Path | None, name: str) -> pd.DataFrame:
    """Pooled trust of a review session; only once unblinded (before, methods stay hidden)."""
    from srtui.reviews.report import trust_frame
    from srtui.reviews.storage import session_row

    store = _store(workspace)
    row = session_row(store, name)
    if not row["unblinded_at"]:
        fail(f"review {name!r} is still blinded: close and unblind it first (srtui review close/unblind)")
    return trust_frame(store, name)


def _guess_features(*texts: str) -> list[str]:
    """Names used as variables (not called, not pi/e): only to list features for the safe parser."""
    names: dict[str, None] = {}
    for text in texts:
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # the safe parser reports the error properly
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and id(n) not in called and n.id not in ("pi", "e"):
                names.setdefault(n.id)
    return sorted(names)


def expr(
    expression: Annotated[str, typer.Argument(help="A model string.")],
    truth: Annotated[str | None, typer.Option(help="Ground-truth expression to compare with.")] = None,
    features: Annotated[
        str | None, typer.Option(help="Comma-separated feature names (default: the names used).")
    ] = None,
    irrelevant: Annotated[
        str | None, typer.Option(help="Comma-separated features a model should not use (feature absence).")
    ] = None,
    dialect: Annotated[str, typer.Option(help="How the model is printed (python, gplearn, operon, ...).")] = "python",
    rule: Annotated[
        str | None, typer.Option(help="Only this release's metrics: srbench2021, srbench2022 or srbench2025.")
    ] = None,
    r2_test: Annotated[
        float | None,
        typer.Option(
            "--r2-test",
            help="Test R2 of the model (SRBench 2021 checks solutions only above 0.5; default: not applied).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
    timeout: Annotated[
        float, typer.Option(help="Seconds of sympy work per model (its operations share the deadline).")
    ] = 10.0,
) -> None:
    """Report an expression's metrics as each SRBench release computes them (vs --truth if given)."""
    from srtui.results.metrics.expr_batch import ExprCache, ModelItem, expression_metrics
    from srtui.results.metrics.expr_metrics import parse
    from srtui.results.metrics.releases import RELEASES

    check_timeout(timeout)
    if rule is not None and rule not in RELEASES:
        fail(f"unknown rule {rule!r} (rules: {', '.join(RELEASES)}){did_you_mean(rule, RELEASES)}")
    feats = _names(features) if features else _guess_features(expression, *([truth] if truth else []))
    unwanted = _names(irrelevant)
    parse(expression, feats, dialect)
    if truth:
        parse(truth, feats, "python")
    if any(u not in feats for u in unwanted):
        fail("--irrelevant names features that are not in --features")
    item = ModelItem(expression, tuple(feats), dialect, truth, tuple(unwanted), r2_test, gate_r2=r2_test is not None)
    [m], _ = expression_metrics([item], ExprCache(), workers=1, timeout=timeout)
    if "parse_error" in m or "too_large" in m:
        fail("; ".join(m.get("_notes", [])) or "expression cannot be read")
    per = {rel: _release_view(m, rel, bool(truth)) for rel in ([rule] if rule else RELEASES)}
    notes = m.get("_notes", [])
    head = {"expression": expression, "truth": truth, "features": feats, "irrelevant": unwanted, "dialect": dialect}
    if as_json:
        body = {"rule": rule, **per[rule]} if rule else {"releases": per}
        print(json.dumps({**head, **body, "srsd_ted": m.get("srsd.ted"), "notes": notes}, indent=1))
        return
    _print_expr_table(head, per, notes)


def _warn_stale(store: Store, suite: str | None) -> list[str]:
    """Metrics of an older definition are never mixed in silently: say so, and how to update
    (the lines printed)."""
    from srtui.results.metrics.version import METRICS_VERSION, stale_metric_jobs

    n = stale_metric_jobs(store, suite)
    if not n:
        return []
    line = (
        f"srtui: warning: {n} job(s) have metrics of an older definition (current version "
        f"{METRICS_VERSION}); run `srtui rescore` to recompute them"
    )
    print(line, file=sys.stderr)
    return [line]


def _names(text: str | None) -> list[str]:
    return [f.strip() for f in (text or "").split(",") if f.strip()]


def _release_view(m: dict[str, Any], rel: str, with_truth: bool) -> dict[str, Any]:
    """One release's values: ``symbolic_solution`` is the verdict the release publishes; its
    corrected variant and each named variant (``srtui.results.metrics.releases.VARIANTS``) under their own keys."""
    from srtui.results.metrics.declare import expr_rows
    from srtui.results.metrics.profiles import Profile
    from srtui.results.metrics.solutions import VARIANTS

    view = {k: m.get(f"{rel}.{k}") for k in expr_rows()}
    solutions = [
        Profile.CORRECTED.metric("symbolic_solution"),
        *(f"symbolic_solution:{v}" for v in VARIANTS.get(rel, {})),
    ]
    view.update({k: m.get(f"{rel}.{k}") for k in solutions})
    view["ted_norm"] = m.get("srsd.ted_norm")  # SRSD's definition, the same for every release
    if not with_truth:
        for k in ("symbolic_solution", *solutions, "ted_norm"):
            view[k] = None
    return view


def _print_expr_table(head: dict[str, Any], per: dict[str, Any], notes: list[str]) -> None:
    from srtui.engine.textsafe import visible as printable

    print(f"expression: {printable(head['expression'])}   dialect: {printable(head['dialect'])}")
    print(
        f"features: {printable(', '.join(head['features']) or '(none)')}"
        + (f"   irrelevant: {printable(', '.join(head['irrelevant']))}" if head["irrelevant"] else "")
    )
    if head["truth"]:
        print(f"truth: {printable(head['truth'])}")
    rels = list(per)
    # every release's rows, a variant only one release has included (the longest view sets the order)
    rows = list(dict.fromkeys(k for view in sorted(per.values(), key=len, reverse=True) for k in view))
    width = max(len(r) for r in rows)
    print(f"  {'':<{width}}  " + "  ".join(f"{r:>12}" for r in rels))
    for row in rows:
        cells = [per[r].get(row) for r in rels]
        shown = ["-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)) for v in cells]
        print(f"  {row:<{width}}  " + "  ".join(f"{c:>12}" for c in shown))
    for note in notes:
        print(f"  note: {printable(note)}")


#: the runs table of `srtui export --format latex`: what a paper reports of each run
PAPER_COLUMNS = ("task", "method", "seed", "status", "r2_test", "size", "symbolic_solution", "fit_s", "energy_j")


def export(
    fmt: Annotated[str, typer.Option("--format", help="csv, md, latex or json.")] = "csv",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Directory for runs.EXT and leaderboard-SUITE.EXT (CSV: plain, provenance in NAME.meta.json)."
        ),
    ] = None,
    suite: Annotated[str | None, typer.Option(help="Only this suite.")] = None,
    trust: Annotated[Path | None, typer.Option(help="Expert trust ratings for real-world leaderboards.")] = None,
    raw: Annotated[bool, typer.Option("--raw", help=RAW_HELP)] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Export all runs with their metrics, and each suite's leaderboard under its scoring rule."""
    exts = {"csv": "csv", "md": "md", "latex": "tex", "json": "json"}
    if fmt not in exts:
        fail(f"unknown format {fmt!r} (formats: {', '.join(exts)}){did_you_mean(fmt, exts)}")
    ext, files = exts[fmt], fmt == "csv" and out is not None  # CSV files: plain, each with a NAME.meta.json
    with Steps("export") as steps:
        docs = _export_docs(steps, fmt, out, suite, trust, raw, workspace)
    if out is None and fmt == "json" and len(docs) > 1:  # stdout holds one JSON document
        _emit(json.dumps({key: json.loads(text) for key, text in docs.items()}, indent=1), None)
        return
    for key, text in docs.items():
        # a suite name from an older store may hold anything: the file stays inside --out
        _emit(text, None if out is None else file_in(out, key if files else f"{key}.{ext}"))


def _export_docs(
    steps: Steps, fmt: str, out: Path | None, suite: str | None, trust: Path | None, raw: bool, workspace: Path | None
) -> dict[str, str]:
    """`srtui export`'s documents by name: the runs, then each suite's leaderboard, one step each."""
    from srtui.results.outputs.export import ExportError, csv_files, render_score, render_tables, score_csv_files
    from srtui.results.scoring import ScoreError
    from srtui.results.scoring import score as apply_rule
    from srtui.results.scoring.tables import runs_frame

    steps.step("reading the runs")
    store = _store(workspace)
    runs = runs_frame(store, suite)
    _warn_stale(store, suite)
    shown_runs, runs_notes = runs, None
    if fmt == "latex":  # a paper's table, not the 60-odd columns of the record
        shown_runs = runs[[c for c in PAPER_COLUMNS if c in runs.columns]]
        runs_notes = ["the columns a paper uses; every column: srtui export --format csv (or json)"]
    files = fmt == "csv" and out is not None
    runs_options = {"suite": suite or "all"}
    steps.step(f"the table of {len(runs)} runs")
    if files:
        docs = csv_files("runs", {"runs": shown_runs}, "runs", runs_options, runs_notes, raw=raw)
    else:
        docs = {"runs": render_tables({"runs": shown_runs}, fmt, "runs", runs_options, runs_notes, raw=raw)}
    trust_df = _trust(trust)
    names = sorted(runs["suite"].dropna().unique()) if len(runs) else []
    for i, name in enumerate(names, 1):
        rule = _suite_rule(store, name)
        if not rule:
            print(f"srtui: suite {name}: no scoring rule, no leaderboard", file=sys.stderr)
            continue
        steps.step(f"leaderboard of {name}", i, len(names))
        try:
            board = apply_rule(rule, runs[runs["suite"] == name], trust=trust_df, allow_mixed=True)
            if files:
                docs.update(score_csv_files(f"leaderboard-{name}", board, raw=raw))
            else:
                docs[f"leaderboard-{name}"] = render_score(board, fmt, raw=raw)
        except (ScoreError, ExportError) as exc:
            print(f"srtui: suite {name}: no leaderboard: {exc}", file=sys.stderr)
    return docs


def _suite_rule(store: Store, name: str) -> str | None:
    from srtui.outputs import suite_rule

    return suite_rule(store, name)


def rescore(
    suite: Annotated[str | None, typer.Option(help="Only this suite's jobs.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Recompute every job's metrics, not only missing ones.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes, or a local cluster's workers (default: usable cores).")
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(help="Seconds of sympy work per model: simplifies, solution checks and edit distance share it."),
    ] = 10.0,
    backend: Annotated[
        str | None, typer.Option(help="local, or dask (implied by the options below).", rich_help_panel=CLUSTER)
    ] = None,
    dask_scheduler: Annotated[
        str | None, typer.Option(help="A running scheduler, tcp://HOST:8786.", rich_help_panel=CLUSTER)
    ] = None,
    cluster: Annotated[
        str | None, typer.Option(help="Start one: local, ssh or slurm.", rich_help_panel=CLUSTER)
    ] = None,
    cluster_config: Annotated[
        Path | None, typer.Option(help="Cluster settings (its table names it).", rich_help_panel=CLUSTER)
    ] = None,
    workspace: WorkspaceOption = None,
    list_metrics: Annotated[
        bool, typer.Option("--list", help="List the metrics each job gets, from their declarations.")
    ] = False,
) -> None:
    """(Re)compute the metrics of finished jobs from their stored predictions and models,
    here or on a cluster (the same backend options as `srtui run`)."""
    if list_metrics:
        _list_metrics()
        return
    from srtui.engine.workspace import resolve
    from srtui.runs.rescore import RescoreRequest
    from srtui.runs.rescore import rescore as compute

    check_timeout(timeout)
    if workers is not None and workers < 1:
        fail("--workers must be at least 1")
    _store(workspace, readonly=True).close()  # no workspace, an empty or broken one: one line, nothing made
    req = RescoreRequest(suite, force, workers, timeout, backend, dask_scheduler, cluster, cluster_config)
    summary = compute(resolve(workspace), req, lambda m: print(m, file=sys.stderr))
    where = ", ".join(summary["where"]) or "nowhere: nothing to compute"
    if "computed" not in summary:
        print(f"metrics of {summary['done']} of {summary['jobs']} job(s) computed on {where}")
        return
    print(
        f"metrics of {summary['jobs']} job(s), {summary['models']} model(s): {summary['computed']} operation(s) "
        f"computed, {summary['cached']} from the cache, {summary['timeouts']} timeout(s), {summary['errors']} error(s)"
    )


def _list_metrics() -> None:
    """A line per declared metric: accuracy (results/metrics/accuracy.py), then the expression
    metrics (results/metrics/declared/), each with its stored names and direction."""
    from srtui.results.metrics import accuracy, declare

    for m in accuracy.metrics():
        print(f"{', '.join(m.stored())}\t{m.direction} is better\t{m.doc}")
    for e in declare.metrics():
        stored = ", ".join(f"{r}.{e.name}" for r in e.releases)
        print(f"{e.name} ({stored})\t{e.direction} is better\t{e.doc}")


def register(app: typer.Typer) -> None:
    app.command("score")(score)
    app.command("expr", cls=ExpressionCommand)(expr)
    app.command("export")(export)
    app.command("rescore")(rescore)
