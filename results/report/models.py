"""Each method's best and median model as mathematics: the model string read by the one safe
parser (``engine.expression``, never sympify), printed as MathML by sympy, so a browser shows it
with no script and no network. A string the parser refuses, or one too large, is shown as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from engine.errors import SrtuiError
from engine.textsafe import visible
from results.scoring.srbench2022 import representative

if TYPE_CHECKING:
    import sympy as sp

MAX_NODES = 400  # larger trees are shown as text: MathML of thousands of nodes helps no reader
MAX_TEXT = 4000  # characters of a model string shown


@dataclass(frozen=True)
class ModelView:
    method: str
    which: str  # best / median
    task: str
    seed: Any
    r2_test: float | None
    text: str  # the model string, control characters made visible, cut to MAX_TEXT
    mathml: str | None  # <math>...</math> built by sympy's printer (its text escaped), or None
    why_text: str = ""  # why no MathML


def to_mathml(expr: sp.Expr) -> str:
    """Presentation MathML of ``expr`` with floats shown to 4 significant digits."""
    import sympy as sp
    from sympy.printing.mathml import mathml

    shown = expr.xreplace({f: sp.Float(f, 4) for f in expr.atoms(sp.Float)})
    body = mathml(shown, printer="presentation")
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">{body}</math>'


def render_model(text: Any, features: list[str], dialect: str | None) -> tuple[str | None, str]:
    """(MathML or None, the reason there is none)."""
    from engine.expression import parse_expression

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


def model_views(runs: pd.DataFrame, features: dict[str, list[str]]) -> list[ModelView]:
    """Per method the best run (highest test R2) and the median one (the finished run closest
    to the median test R2: ``srbench2022.representative``, the 2022 experts' rule) over all
    datasets of ``runs``."""
    out: list[ModelView] = []
    if "model" not in runs.columns:
        return out
    for method, frame in runs.groupby("method", sort=True):
        for which in ("best", "median"):
            row = representative(frame, which)
            if row is None:
                continue
            text = row.get("model")
            task = str(row["task"])
            mathml, why = render_model(text, list(features.get(task, [])), row.get("dialect"))
            shown = visible(str(text or ""))
            out.append(
                ModelView(
                    str(method),
                    which,
                    task,
                    row.get("seed"),
                    None if pd.isna(row.get("r2_test")) else float(row["r2_test"]),
                    shown if len(shown) <= MAX_TEXT else shown[:MAX_TEXT] + "\u2026",
                    mathml,
                    why,
                )
            )
    return out
