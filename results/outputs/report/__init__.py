"""`srtui report`: one HTML file that works offline and alone (no CDN, no request): every suite's
leaderboard under its rule with the rule's other tables (sortable), the figures inline as SVG
(``srtui.results.outputs.figures``), each method's best and median model as MathML
(``srtui.results.outputs.report.models``), failures by status, review agreement, and the run metadata.

Untrusted text (models, names, errors) reaches the page only through jinja2's autoescape; the
SVG (matplotlib's, its text escaped) and MathML (sympy's printer, its text escaped) are the only
markup passed through. A Content-Security-Policy allows no request and only the page's own
script (by its hash), so even a flaw in escaping could not load or run anything.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import math
import platform
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any

import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import visible
from srtui.results.outputs.report.models import ModelView, chosen_runs, model_views, render_models, to_print, views
from srtui.results.store.typed import task_infos

if TYPE_CHECKING:
    from srtui.results.outputs.figures import FigureData
    from srtui.results.scoring.base import Score
    from srtui.results.scoring.published.merge import Merged
    from srtui.results.store.store import Store

MAX_ROWS = 5000  # rows of one table in the page; the rest is counted, not shown
FAILED = "status != 'ok'"


@dataclass
class SuiteInput:
    name: str
    runs: pd.DataFrame
    rule: str | None
    trust: pd.DataFrame | None = None
    reviews: list[tuple[str, dict[str, pd.DataFrame]]] = field(default_factory=list)
    ratings: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None
    features: dict[str, list[str]] = field(default_factory=dict)
    #: with `srtui report --published`: the runs beside the published ones (the leaderboard and
    #: figures read them) and the comparison's warnings, shown in the section
    board_runs: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
    #: the merge itself (its citations): the leaderboard is scored as `srtui score --published` does
    merged: Merged | None = None
    #: the workspace's methods (every suite's): each keeps the look of the workspace's other figures
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    text: str
    key: str  # what the table sorts by (a number as text, or the text)
    numeric: bool = False


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    hidden: int = 0  # rows left out (MAX_ROWS)


def _cell(value: Any) -> Cell:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("", "", True)
    if isinstance(value, bool):
        return Cell("yes" if value else "no", str(int(value)), True)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        text = f"{int(value)}" if isinstance(value, int) else ("inf" if math.isinf(v) else f"{v:.4g}")
        return Cell(text, repr(v), True)
    text = visible(str(value))
    return Cell(text, text.casefold())


def table(title: str, frame: pd.DataFrame) -> Table:
    if any(n is not None for n in frame.index.names) and not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    shown = frame.head(MAX_ROWS)
    rows = [
        [_cell(v.item() if hasattr(v, "item") else v) for v in row] for row in shown.itertuples(index=False, name=None)
    ]
    return Table(visible(title), [visible(str(c)) for c in frame.columns], rows, len(frame) - len(shown))


@dataclass
class Section:
    name: str
    rule: str | None
    options: dict[str, Any]
    notes: list[str]
    tables: list[Table]
    figures: list[tuple[str, str, str]]  # (kind, summary, svg or "")
    skipped: list[tuple[str, str]]  # (kind, why)
    models: list[ModelView]
    failures: list[Table]
    reviews: list[tuple[str, list[Table]]]
    meta: list[Table]
    #: the footnotes of the published rows (marked ``PUBLISHED_MARK``): "† label: not run here; citation"
    sources: list[str] = field(default_factory=list)


def _leaderboard(s: SuiteInput, data: FigureData) -> tuple[dict[str, Any], list[str], list[Table], list[str]]:
    from srtui.results.scoring import ScoreError

    if not s.rule:
        return {}, ["this suite names no scoring rule: no leaderboard (see `srtui score RULE --suite ...`)"], [], []
    try:
        result = _score(s, data, s.rule)
    except ScoreError as exc:
        return {}, [f"no leaderboard: {exc}"], [], []
    tables = [table(name, _marked(frame)) for name, frame in result.tables.items()]
    sources = [f"{PUBLISHED_MARK} {label}: not run here; {cite}" for label, cite in result.sources.items()]
    return {"rule": result.rule, **result.options}, list(result.notes), tables, sources


def _score(s: SuiteInput, data: FigureData, rule: str) -> Score:
    """The leaderboard's Score: with --published, as `srtui score --published` makes it (a source
    column, the citations); else the figures' own, computed once for both."""
    if s.merged is None:
        return data.score(rule)
    from srtui.results.scoring.published import score_published

    return score_published(rule, s.merged, trust=s.trust, allow_mixed=True)


PUBLISHED_MARK = "\u2020"  # the mark of `srtui score --published --format md` (srtui.results.outputs.export.MD_MARK)


def _marked(frame: pd.DataFrame) -> pd.DataFrame:
    """The method cell of each published row ends in the mark its footnote explains."""
    from srtui.results.outputs.export import published_rows

    flags = published_rows(frame)
    if "method" not in frame.columns or not any(flags):
        return frame
    out = frame.copy()
    out["method"] = [f"{m}{PUBLISHED_MARK}" if f else m for m, f in zip(out["method"].astype(str), flags)]
    return out


def _figures(data: FigureData, width: float) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    from srtui.results.outputs.figures import FigureError, kinds, svg
    from srtui.results.outputs.figures.sources import caveat_for
    from srtui.results.scoring import ScoreError
    from srtui.results.scoring.published.merge import figure_without_source

    drawn, skipped = [], []
    published = data.runs is not None and "source" in data.runs.columns
    for kind in kinds().values():
        why = figure_without_source(kind.name, kind.rule) if published else ""
        if why:  # its rule would rank the published methods on values they do not have
            skipped.append((kind.name, why))
            continue
        try:
            text = svg(kind.name, data, width)
        except (FigureError, ScoreError) as exc:
            skipped.append((kind.name, visible(str(exc), one_line=True)))
            continue
        body = re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg") :], count=1, flags=re.S)
        caveat = caveat_for(kind, data)  # the reference profile's artefact, said beside the figure too
        drawn.append((kind.name, kind.summary + (f" {caveat}" if caveat else ""), body))
    return drawn, skipped


def _failures(runs: pd.DataFrame) -> list[Table]:
    counts = pd.crosstab(runs["method"], runs["status"]).rename_axis(columns=None)
    out = [table("runs by status and method", counts.rename_axis("method").reset_index())]
    failed = runs[runs["status"] != "ok"]
    if len(failed) and "error" in failed.columns:
        first = failed.groupby(["status", "method"]).agg(runs=("task", "size"), example_error=("error", "first"))
        first["example_error"] = first["example_error"].map(lambda e: "" if pd.isna(e) else str(e)[:300])
        out.append(table("failed runs: status, method and an example error", first.reset_index()))
    return out


def section(
    s: SuiteInput, meta: dict[str, list[Table]], width: float = 7.0, models: list[ModelView] | None = None
) -> Section:
    """The suite's section; ``models``: its models printed already (else printed here)."""
    from srtui.results.outputs.figures import FigureData

    # a suite run under several protocols is reported with each row's protocol in a footnote
    runs = s.runs if s.board_runs is None else s.board_runs
    data = FigureData(
        runs=runs, trust=s.trust, ratings=s.ratings, agreement=s.agreement, allow_mixed=True, methods=s.methods
    )
    options, notes, tables, sources = _leaderboard(s, data)
    notes = [*(f"warning: {w}" for w in s.warnings), *notes]
    drawn, skipped = _figures(data, width)
    reviews = [(visible(name), [table(t, f) for t, f in tabs.items()]) for name, tabs in s.reviews]
    return Section(
        visible(s.name),
        s.rule,
        {k: visible(str(v)) for k, v in options.items()},
        [visible(n) for n in notes],
        tables,
        drawn,
        skipped,
        model_views(s.runs, s.features) if models is None else models,
        _failures(s.runs),
        reviews,
        meta.get(s.name, []),
        [visible(line) for line in sources],
    )


def _applied(q: Callable[[str], pd.DataFrame]) -> pd.DataFrame:
    """Per method, what the protocol applied to its jobs (the seed left out: one row per kind)."""
    from srtui.engine.protocols import describe

    frame = q("SELECT method, protocol, COUNT(*) AS jobs FROM jobs WHERE suite = ? GROUP BY 1, 2")
    frame["protocol"] = [describe(_record(text, drop="seed")) for text in frame["protocol"]]
    return frame.groupby(["method", "protocol"])["jobs"].sum().reset_index()


def _record(text: Any, drop: str = "") -> dict[str, Any] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return {k: v for k, v in value.items() if k != drop} if isinstance(value, dict) else None


def _limits(df: pd.DataFrame) -> pd.DataFrame:
    """The stored limits as a job ran under them: a CPU limit derived from the wall limit (stored
    as ``cpu_s: null``) and the default disk limit shown with their values (#55: the report said
    ``cpu_s: null`` where the run used 70 s)."""
    import json

    from srtui.engine.spec import Limits, SpecError

    def shown(text: object) -> str:
        try:
            stored = json.loads(str(text))
            limits = Limits.from_dict(stored)
        except (ValueError, TypeError, SpecError):
            return str(text)
        cpu = f"{limits.effective_cpu_s}" + (" (from time_s)" if stored.get("cpu_s") is None else "")
        out = {**stored, "cpu_s": cpu}
        if "disk_mb" in vars(limits):
            out["disk_mb"] = f"{limits.disk_mb:g}" + ("" if "disk_mb" in stored else " (default)")
        return ", ".join(f"{k} {v}" for k, v in out.items())

    return df.assign(limits=df["limits"].map(shown)) if "limits" in df.columns else df


def metadata(store: Store, suites: list[str] | None = None) -> dict[str, Any]:
    """srtui's version, this machine, and per suite its runs (argv, protocol), method versions,
    limits, data fingerprints and hosts."""
    from srtui.results.outputs.export import srtui_version
    from srtui.results.store.queries import suites as all_suites

    per: dict[str, list[Table]] = {}
    for name in suites or all_suites(store):

        def q(sql: str, name: str = name) -> pd.DataFrame:
            return pd.read_sql_query(sql, store.conn, params=(name,))

        runs = q(
            "SELECT run_id, host, argv, started_at, ended_at, status FROM runs WHERE suite = ? ORDER BY started_at"
        )
        runs["protocol"] = runs["argv"].map(_protocol)
        per[name] = [
            table("runs of this suite", runs),
            table("protocol applied (per method: jobs of each)", _applied(q)),
            table(
                "method versions",
                q("SELECT method, method_version, COUNT(*) AS jobs FROM jobs WHERE suite = ? GROUP BY 1, 2"),
            ),
            table("limits", _limits(q("SELECT limits, COUNT(*) AS jobs FROM jobs WHERE suite = ? GROUP BY 1"))),
            table(
                "data fingerprints",
                q("SELECT task, data_fingerprint, COUNT(*) AS jobs FROM jobs WHERE suite = ? GROUP BY 1, 2"),
            ),
            table(
                "hosts", q("SELECT host, COUNT(*) AS jobs, SUM(wall_s) AS wall_s FROM jobs WHERE suite = ? GROUP BY 1")
            ),
        ]
    return {
        "srtui": srtui_version(),
        "python": platform.python_version(),
        "machine": f"{platform.node()} ({platform.platform()}, {platform.machine()})",
        "workspace": visible(str(store.workspace.root)),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "per_suite": per,
    }


def _protocol(argv: Any) -> str:
    try:
        args = json.loads(argv or "[]")
    except ValueError:
        return ""
    for i, a in enumerate(args):
        if a == "--protocol" and i + 1 < len(args):
            return str(args[i + 1])
        if isinstance(a, str) and a.startswith("--protocol="):
            return a.split("=", 1)[1]
    return "single runs"


def task_features(store: Store) -> dict[str, list[str]]:
    out = {}
    for task, info in task_infos(store).items():
        features = info.get("features")
        out[task] = [str(f) for f in features] if isinstance(features, list) else []
    return out


def _sections(
    suites: list[SuiteInput],
    meta: dict[str, list[Table]],
    width: float,
    progress: Callable[[str, int | None, int | None], None] | None,
) -> list[Section]:
    """Each suite's section. The models are printed in worker processes (sympy, each under a
    deadline) while this one draws the figures: the thread only feeds the pool and waits."""
    chosen = [chosen_runs(s.runs) for s in suites]
    printing = [p for rows, s in zip(chosen, suites, strict=True) for p in to_print(rows, s.features)]
    sections, stop = [], threading.Event()
    _settle()
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="srtui-models") as printer:
            printed = printer.submit(render_models, printing, stop)
            try:
                for i, s in enumerate(suites, 1):
                    if progress is not None:
                        progress(f"leaderboard and figures of {s.name}", i, len(suites))
                    sections.append(section(s, meta, width, models=[]))
                    _settle()
            except BaseException:  # an error or Ctrl-C: the printers are not waited for
                stop.set()
                raise
            if progress is not None:
                progress(f"printing {len(printing)} models", None, None)
            done = iter(printed.result())
    finally:
        gc.unfreeze()
    for sec, rows in zip(sections, chosen, strict=True):
        sec.models = views(rows, [next(done) for _ in rows])
    return sections


def _settle() -> None:
    """Collect what a section left (its figures are cycles) once, then freeze what is alive: the
    modules and the runs stay to the end, and each full collection would walk them again (the
    next section's, and one per call of statsmodels' Holm correction: over 1 s at 100,000 runs)."""
    gc.collect()
    gc.freeze()


def render_report(
    suites: list[SuiteInput],
    meta: dict[str, Any],
    width: float = 7.0,
    progress: Callable[[str, int | None, int | None], None] | None = None,
) -> str:
    """The report's HTML; ``progress`` is told each suite's section as it is drawn."""
    import jinja2

    if not suites:
        raise ReportError("nothing to report: the workspace has no runs")
    sections = _sections(suites, meta.get("per_suite", {}), width, progress)
    script = resources.files("srtui.results.outputs.report").joinpath("sortable.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(
        resources.files("srtui.results.outputs.report").joinpath("report.html.j2").read_text(encoding="utf-8")
    )
    return template.render(
        sections=sections,
        meta=meta,
        script=jinja2.utils.markupsafe.Markup(script),
        script_hash=digest,
        Markup=jinja2.utils.markupsafe.Markup,
    )


class ReportError(SrtuiError, ValueError):
    """A report that cannot be made; one line."""
