"""A model string printed as MathML: the worker side of the report's Models
(``srtui.results.outputs.report.models``). Light on purpose: a pool's server preloads this module,
the one safe parser (``srtui.engine.expression``, never sympify) and sympy's printer, and every
worker it forks inherits them (importing the report package would bring pandas and the scoring
rules into each worker for nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import visible

if TYPE_CHECKING:
    import sympy as sp

MAX_NODES = 400  # larger trees are shown as text: MathML of thousands of nodes helps no reader
#: what a pool printing models imports once, in its server (srtui.engine.pool.TimedPool)
PRELOAD = ("srtui.results.outputs.mathml", "srtui.engine.expression", "sympy.printing.mathml")


def to_mathml(expr: sp.Expr) -> str:
    """Presentation MathML of ``expr`` with floats shown to 4 significant digits."""
    import sympy as sp
    from sympy.printing.mathml import mathml

    shown = expr.xreplace({f: sp.Float(f, 4) for f in expr.atoms(sp.Float)})
    body = mathml(shown, printer="presentation")
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">{body}</math>'


def render_model(text: Any, features: list[str], dialect: str | None) -> tuple[str | None, str]:
    """(MathML or None, the reason there is none). Unbounded on hostile input: run through
    ``srtui.results.outputs.report.models.render_models`` (a process per model under a deadline)."""
    from srtui.engine.expression import parse_expression

    if not isinstance(text, str) or not text.strip():
        return None, "no model"
    try:
        parsed = parse_expression(text, features, dialect or "python")
    except (SrtuiError, ValueError, RecursionError, MemoryError) as exc:
        return None, f"not read by the parser: {visible(str(exc), one_line=True)[:200]}"
    if parsed.expr is None or parsed.n_nodes > MAX_NODES:
        return None, f"larger than {MAX_NODES} nodes: shown as text"
    try:
        return to_mathml(parsed.expr), ""
    except (RecursionError, ValueError, TypeError) as exc:
        return None, f"cannot be printed as MathML: {type(exc).__name__}"


def render_one(payload: tuple[Any, list[str], str | None]) -> tuple[str | None, str]:
    """A pool's task: ``render_model`` of one (text, features, dialect)."""
    return render_model(*payload)
