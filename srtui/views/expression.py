"""One run's expression in depth: the model and the ground truth in every printed form, and the
run's metrics in words.

Model strings are untrusted: they are only read by ``srtui.engine.expression.parse_expression``, printed
in a process of their own under a deadline, and shown as plain text, never as markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from srtui.engine.pool import Bounded, render_timeout
from srtui.engine.textsafe import safe_value
from srtui.results.metrics import pivot
from srtui.results.store.queries import Reader, job_metrics
from srtui.views.jobs import DetailError, built_task, features_of, job_row
from srtui.views.longtext import StoredText

if TYPE_CHECKING:
    from srtui.engine.expression import ParsedExpression

#: at or above this many characters a model is shown as text, not pretty-printed
PRETTY_MAX_CHARS = 1000
#: significant digits of the rounded view; larger trees than SIMPLIFY_MAX_NODES are not simplified
ROUND_DIGITS = 4
SIMPLIFY_MAX_NODES = 300
#: the model check's columns of the job's row (srtui.engine.outcome_check), in words; the accuracy
#: metrics come before them, each with its declaration's label (srtui.results.metrics.pivot)
MODEL_CHECK = (
    ("r2_test_expr", "R² test of the parsed expression"),
    ("fidelity_r2", "fidelity R² (expression vs method)"),
    ("max_abs_diff", "max |expression - method|"),
    ("expression_mismatch", "expression mismatch"),
    ("model_too_large", "model too large"),
)


#: the stored metrics (srtui.results.metrics.compute) in words, besides the declared expression and
#: accuracy metrics' own labels (results/metrics/declared/, results/metrics/accuracy.py); any other
#: name is shown with spaces for "_"
_LABELS = {
    "constant_model": "constant model",
    "diversity": "diversity (entropy of node labels)",
    "simplicity_unsimplified": "simplicity (-log5 size)",
}


def metric_label(name: str) -> str:
    from srtui.results.metrics import accuracy, declare

    return declare.labels().get(name) or accuracy.labels().get(name) or _LABELS.get(name) or name.replace("_", " ")


@dataclass(frozen=True)
class Rendered:
    """An expression in every form the view offers."""

    text: str  # as the method printed it
    unicode: str | None = None  # 2-D pretty print, None when not pretty-printed
    ascii: str | None = None
    latex: str | None = None
    plain: str | None = None  # sympy's one-line form
    n_nodes: int | None = None
    error: str | None = None
    rounded_unicode: str | None = None  # the 2-D print with numbers to ROUND_DIGITS significant digits
    rounded_ascii: str | None = None
    unrendered: str | None = None  # why a parsed model is shown as text (printing ran out of time)
    stored: StoredText | None = None  # a text too long to read whole: read a page at a time (longtext)

    @property
    def pretty(self) -> bool:
        return self.unicode is not None


@dataclass(frozen=True)
class ExpressionDetail:
    job: dict[str, Any]
    model: Rendered | None
    truth: Rendered | None
    metrics: tuple[tuple[str, str], ...]
    pareto: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


#: seconds sympy may spend printing (or simplifying) one model: a power tower of a few characters
#: (``2**(2**(2**(2**5))))``) makes it compute a number of billions of digits
RENDER_TIMEOUT_S = 5.0
#: the longest model the one safe parser reads (srtui.engine.expression.parser: max_chars)
PARSE_MAX_CHARS = 20_000


def _forms(payload: tuple[str, str, tuple[str, ...], str]) -> Rendered:
    """In the printing process: ``render_forms`` or ``simplified_forms`` of one model."""
    kind, text, features, dialect = payload
    return (render_forms if kind == "render" else simplified_forms)(text, features, dialect)


@lru_cache(maxsize=1)
def _printer() -> Bounded:
    return Bounded(_forms, render_timeout(RENDER_TIMEOUT_S), preload=("srtui.views.expression",))


def _bounded(kind: str, text: str, features: tuple[str, ...], dialect: str) -> Rendered:
    """``kind`` of ``text`` printed in a process of its own under RENDER_TIMEOUT_S; on time out
    (or a crash) the model is shown as text, saying why."""
    if len(text) > PARSE_MAX_CHARS:  # the parser refuses it: not sent to a process at all
        return Rendered(text, error=f"too large to parse ({len(text):,} characters)")
    result = _printer()((kind, text, tuple(features), dialect or "python"))
    if result.status == "ok" and isinstance(result.value, Rendered):
        return result.value
    why = f"printing took over {_printer().timeout:g} s" if result.status == "timeout" else str(result.value)
    return Rendered(text, unrendered=why)


def warm_up() -> None:
    """Import the expression stack (sympy) ahead of the first view, so it opens quickly."""
    import srtui.engine.expression
    import srtui.results.metrics.expr_metrics  # noqa: F401


def render(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """Every form of the model (``render_forms``), printed under a deadline."""
    return _bounded("render", text, features, dialect)


def simplified(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """The simplified model (``simplified_forms``), under a deadline."""
    return _bounded("simplify", text, features, dialect)


def _parsed(text: str, features: tuple[str, ...], dialect: str) -> ParsedExpression | Rendered:
    """The model read by the one safe parser, or the ``Rendered`` error saying why it cannot be."""
    from srtui.engine.expression import ExpressionError, parse_expression

    try:
        return parse_expression(text, features, dialect or "python")
    except ExpressionError as exc:
        return Rendered(text, error=str(exc))


def render_forms(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """Parse with the one safe parser, then print 2-D (unicode and ASCII), LaTeX and plain.
    Unbounded on hostile input: called through ``render`` only."""
    import sympy as sp

    parsed = _parsed(text, features, dialect)
    if isinstance(parsed, Rendered):
        return parsed
    if parsed.expr is None:
        return Rendered(text, error=f"too large to parse ({len(text)} characters)")
    latex = sp.latex(parsed.expr)
    plain = sp.sstr(parsed.expr)
    if len(text) >= PRETTY_MAX_CHARS:
        return Rendered(text, latex=latex, plain=plain, n_nodes=parsed.n_nodes)
    uni = sp.pretty(parsed.expr, use_unicode=True, wrap_line=False)
    asc = sp.pretty(parsed.expr, use_unicode=False, wrap_line=False)
    rounded = round_numbers(parsed.expr)
    return Rendered(
        text,
        uni,
        asc,
        latex,
        plain,
        parsed.n_nodes,
        None,
        sp.pretty(rounded, use_unicode=True, wrap_line=False),
        sp.pretty(rounded, use_unicode=False, wrap_line=False),
    )


def round_numbers(expr: Any, digits: int = ROUND_DIGITS) -> Any:  # sympy ships no types
    """Every float of the tree to ``digits`` significant digits (17-digit floats hide the form)."""
    import sympy as sp

    return expr.xreplace({f: sp.Float(float(f"{float(f):.{digits}g}"), digits) for f in expr.atoms(sp.Float)})


def simplified_forms(text: str, features: tuple[str, ...], dialect: str = "python") -> Rendered:
    """The model after sympy's simplify (numbers rounded too); slow on large trees, so refused there.
    Unbounded on hostile input: called through ``simplified`` only."""
    import sympy as sp

    parsed = _parsed(text, features, dialect)
    if isinstance(parsed, Rendered):
        return parsed
    if parsed.expr is None or (parsed.n_nodes or 0) > SIMPLIFY_MAX_NODES:
        return Rendered(text, error=f"too large to simplify here (more than {SIMPLIFY_MAX_NODES} nodes)")
    expr = round_numbers(sp.simplify(round_numbers(parsed.expr)))
    return Rendered(
        text,
        sp.pretty(expr, use_unicode=True, wrap_line=False),
        sp.pretty(expr, use_unicode=False, wrap_line=False),
        sp.latex(expr),
        sp.sstr(expr),
        parsed.n_nodes,
    )


def expression_detail(reader: Reader, job_id: str) -> ExpressionDetail:
    job = job_row(reader, job_id)
    if job is None:
        raise DetailError(f"no job {job_id} in this workspace")
    ws = reader.workspace
    notes: list[str] = []
    features = features_of(ws, job)
    model = None
    if isinstance(job.get("model"), StoredText):
        stored = job["model"]
        model = Rendered("", error=f"too large to parse ({stored.size:,} bytes)", stored=stored)
    elif job.get("model"):
        if features is None:
            model = Rendered(job["model"], error="the task's data is not in this workspace's cache")
        else:
            model = render(job["model"], features, job.get("dialect") or "python")
    task = built_task(str(ws.root), job["task"])
    truth = None
    if task is not None and task.ground_truth:
        truth = render(task.ground_truth, tuple(task.feature_names), "python")
    elif task is None:
        notes.append("ground truth unavailable: the task cannot be built here")
    metrics = [(label, _fmt(value)) for label, value in accuracy_values(reader, job)]
    metrics += [(label, _fmt(job.get(key))) for key, label in MODEL_CHECK]
    if model is not None and model.n_nodes is not None:
        metrics.append(("model size (nodes)", str(model.n_nodes)))
    if job.get("model_error"):
        metrics.append(("model error", job["model_error"]))
    if job.get("protocol"):  # jobs planned before srtui recorded it show nothing here
        metrics.append(("protocol applied", applied_text(job["protocol"])))
    shown = {key for key, _ in MODEL_CHECK} | set(pivot.stored_names())
    for name, value, detail in stored_metrics(reader, job_id):
        if name in shown or name.startswith("_"):
            continue  # the job's own columns above; "_version" is bookkeeping
        label = metric_label(name)
        metrics.append((label, _fmt(value) + (f"  ({detail})" if detail else "")))
    pareto: tuple[dict[str, Any], ...] = ()
    if job.get("pareto"):
        try:
            pareto = tuple(safe_value(p) for p in json.loads(job["pareto"]) if isinstance(p, dict))
        except ValueError:
            notes.append("the stored Pareto front is not valid JSON")
    return ExpressionDetail(job, model, truth, tuple(metrics), pareto, tuple(notes))


def applied_text(stored: Any) -> str:
    """The job's recorded protocol in one line (srtui.engine.protocols.describe)."""
    from srtui.engine.protocols import describe

    try:
        record = json.loads(stored) if isinstance(stored, str) else None
    except ValueError:
        record = None
    return describe(record if isinstance(record, dict) else None)


def accuracy_values(reader: Reader, job: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every declared accuracy metric of the job, labelled, wherever it is stored (srtui.results.metrics.pivot)."""
    with reader.lock:
        store = reader.store()
        values = {n: job.get(n) for n in pivot.stored_names()} if store is None else pivot.job_values(store, job)
    return pivot.labelled(values)


def stored_metrics(reader: Reader, job_id: str) -> list[tuple[str, float | None, str | None]]:
    """Rows of the ``metrics`` table (srtui.results.metrics.compute) for one job; empty before scoring."""
    with reader.lock:
        store = reader.store()
        return [] if store is None else job_metrics(store, job_id)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
