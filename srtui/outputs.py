"""What `srtui plot`, `srtui report` and the app's save keys share: reading a workspace (or a CSV
file, or a review session) into the inputs of ``srtui.results.outputs.figures`` and ``srtui.results.outputs.report``.

Here, at the top layer, because a report joins the results with the review sessions
(``reviews``), which ``results`` may not import. No Textual here: the app calls these from a
worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError

#: told each step of a long output (``srtui.cli.steps.Steps.step``): what, which (1-based), of how many
Progress = Callable[[str, int | None, int | None], None]

if TYPE_CHECKING:
    import pandas as pd

    from srtui.results.metrics.profiles import Profile
    from srtui.results.outputs.figures import FigureData
    from srtui.results.outputs.report import SuiteInput
    from srtui.results.store.store import Store


class OutputError(SrtuiError, ValueError):
    """A figure or report that cannot be made from this input; one line."""


@dataclass(frozen=True)
class ReviewInput:
    name: str
    suite: str | None
    ratings: pd.DataFrame  # expert, task, method, rating (first showings)
    agreement: pd.DataFrame  # srtui.reviews.report's agreement table
    trust: pd.DataFrame  # task, method, trust (pooled)
    tables: dict[str, pd.DataFrame]  # every table of `srtui review report`


def review_input(store: Store, name: str, need_unblinded: bool = True) -> ReviewInput:
    """A review session's ratings, agreement and pooled trust (methods only once unblinded)."""
    from srtui.reviews.report import build, ratings_frame, trust_frame
    from srtui.reviews.storage import session_row

    row = session_row(store, name)
    if need_unblinded and not row["unblinded_at"]:
        raise OutputError(f"review {name!r} is still blinded: close and unblind it first (srtui review close/unblind)")
    tables, _options = build(store, name)
    ratings = ratings_frame(store, name)
    ratings = ratings[ratings["is_repeat"] == 0][["expert", "task", "method", "rating"]]
    return ReviewInput(name, row["suite"], ratings, tables["agreement"], trust_frame(store, name), tables)


def unblinded_reviews(store: Store, suite: str) -> list[ReviewInput]:
    """Every unblinded review session of ``suite`` (a blinded one would reveal methods)."""
    names = [
        r[0]
        for r in store.conn.execute(
            "SELECT name FROM review_sessions WHERE unblinded_at IS NOT NULL AND (suite = ? OR suite IS NULL) "
            "ORDER BY name",
            (suite,),
        )
    ]
    return [review_input(store, n) for n in names]


def trust_file(path: Path) -> pd.DataFrame:
    """Expert trust ratings: SRBench 2022's expert_scores.json or a CSV task,method,trust."""
    import pandas as pd

    from srtui.results.scoring import load_expert_scores

    if path.suffix.lower() == ".json":
        return load_expert_scores(path)
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise OutputError(f"cannot read trust ratings {path}: {' '.join(str(exc).split())}") from None
    if not {"task", "method", "trust"} <= set(df.columns):
        raise OutputError(f"{path}: trust ratings need columns task, method, trust")
    return df


def figure_data(
    store: Store | None,
    suite: str | None = None,
    runs: pd.DataFrame | None = None,
    options: dict[str, Any] | None = None,
    trust: Path | None = None,
    review: str | None = None,
    rule: str | None = None,
    read_runs: bool = True,
) -> FigureData:
    """The input of a figure: ``runs`` as given, else the workspace's (one suite's); expert
    ratings from a trust file or a review session of the workspace. ``read_runs=False``: the
    workspace's runs table is read only when a figure needs it (`srtui plot`, #56)."""
    from srtui.results.outputs.figures import FigureData, store_data, workspace_data

    if runs is None and store is not None:
        from srtui.results.store.queries import run_methods

        data = workspace_data(store, suite, options) if read_runs else store_data(store, suite, options)
        if data.runs.empty if data.runs is not None else not run_methods(store, suite):
            raise OutputError(f"no runs{' of suite ' + suite if suite else ''} in the workspace")
        data.rule = rule
    else:
        data = FigureData(runs=runs, options=dict(options or {}), rule=rule)
        if store is not None:
            from srtui.results.store.queries import workspace_methods

            data.methods = workspace_methods(store)
    if trust is not None and review is not None:
        raise OutputError("give --trust or --review, not both")
    if trust is not None:
        data.trust = trust_file(trust)
    if review is not None:
        if store is None:
            raise OutputError("--review reads a session of the workspace: give no --from-csv with it")
        r = review_input(store, review)
        data.trust, data.ratings, data.agreement = r.trust, r.ratings, r.agreement
    return data


def suite_rule(store: Store, name: str) -> str | None:
    """The scoring rule of a suite by name (srtui.results.scoring.suite_rule)."""
    from srtui.results.scoring.suite_rule import suite_rule as named

    return named(store, name)


def suite_inputs(store: Store, suites: list[str] | None = None, progress: Progress | None = None) -> list[SuiteInput]:
    """Each suite of the workspace (or those named) with its runs, rule and reviews; each suite
    read is a step of ``progress``."""
    from srtui.results.outputs.report import SuiteInput, task_features
    from srtui.results.scoring.tables import runs_frame
    from srtui.results.store.queries import suites as all_suites
    from srtui.results.store.queries import workspace_methods

    have = all_suites(store)
    names = suites or have
    unknown = [s for s in names if s not in have]
    if unknown:
        raise OutputError(
            f"no runs of suite(s) {', '.join(unknown)} in the workspace (suites: {', '.join(have) or 'none'})"
        )
    out = []
    features, methods = task_features(store), workspace_methods(store)  # the workspace's: read once
    for i, name in enumerate(names, 1):
        if progress is not None:
            progress(f"reading the runs of {name}", i, len(names))
        reviews = unblinded_reviews(store, name)
        trust = reviews[0].trust if reviews else None
        out.append(
            SuiteInput(
                name,
                runs_frame(store, name),
                suite_rule(store, name),
                trust=trust,
                reviews=[(r.name, r.tables) for r in reviews],
                ratings=reviews[0].ratings if reviews else None,
                agreement=reviews[0].agreement if reviews else None,
                features=features,
                methods=methods,
            )
        )
    return out


def write_report(
    store: Store,
    out: Path,
    suites: list[str] | None = None,
    width: float = 7.0,
    published: str | None = None,
    progress: Progress | None = None,
) -> Path:
    """`srtui report`: one self-contained HTML file of the workspace (or of the suites named);
    with ``published`` (a source, or "default"), each suite beside SRBench's published results.
    ``progress`` is told each step: each suite read, then each suite's section drawn."""
    from srtui.results.outputs.report import metadata, render_report

    if out.suffix.lower() not in (".html", ".htm"):
        raise OutputError(f"--out must end in .html, not {out.name!r}")
    inputs = suite_inputs(store, suites, progress)
    if published is not None:
        for s in inputs:
            _beside_published(store, s, published)
    html = render_report(inputs, metadata(store, suites), width=width, progress=progress)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out


def _beside_published(store: Store, s: SuiteInput, published: str) -> None:
    """The suite's leaderboard and figures over its runs merged with the published ones (the same
    merge and warnings as `srtui score --published`); a rule without a source says so."""
    from srtui.results.scoring.published import merged_runs
    from srtui.results.scoring.published.merge import rules_with_sources

    if s.rule not in rules_with_sources():
        s.warnings.append(f"--published: rule {s.rule or '(none)'} of this suite has no published source")
        return
    merged = merged_runs(
        s.rule,
        "" if published == "default" else published,
        s.runs,
        store=store,
        suite=s.name,
        cache_dir=store.workspace.cache,
    )
    s.board_runs, s.warnings, s.merged = merged.runs, list(merged.warnings), merged


def _safe_stem(*parts: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts))[:120]


def save_figure(store: Store, suite: str, kind: str, folder: Path, profile: Profile | None = None) -> Path:
    """The app's save key: ``kind`` of one suite as a PDF in ``folder``, with the suite's
    unblinded review (trust, ratings) when there is one; ``profile`` where the rule has one."""
    from srtui.results.outputs.figures import get_kind, render
    from srtui.results.scoring import RULES

    rule = RULES.get(get_kind(kind).rule)
    options = {"profile": profile} if profile and rule is not None and "profile" in rule.options else {}
    data = figure_data(store, suite, options=options)
    reviews = unblinded_reviews(store, suite)
    if reviews:
        data.trust, data.ratings, data.agreement = reviews[0].trust, reviews[0].ratings, reviews[0].agreement
    return render(kind, data, folder / f"{_safe_stem('figure', suite, kind)}.pdf")


def save_report(store: Store, suite: str, folder: Path) -> Path:
    """The app's report key: the report of one suite in ``folder``."""
    return write_report(store, folder / f"{_safe_stem('report', suite)}.html", [suite])
