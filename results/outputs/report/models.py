"""Each method's best and median model as mathematics: the model string read by the one safe
parser (``srtui.engine.expression``, never sympify), printed as MathML by sympy, so a browser shows it
with no script and no network. A string the parser refuses, or one too large, is shown as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import visible
from srtui.results.scoring.rules.srbench2022 import representative

if TYPE_CHECKING:
    import sympy as sp

MAX_NODES = 400  # larger trees are shown as text: MathML of thousands of nodes helps no reader
MAX_TEXT = 4000  # characters of a model string shown
#: seconds sympy may spend printing one model: a power tower of a few characters makes it compute
#: a number of billions of digits, so each model is printed in a process under this deadline
RENDER_TIMEOUT_S = 10.0


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
    """(MathML or None, the reason there is none). Unbounded on hostile input: run through
    ``render_models`` (a process per model under a deadline)."""
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


def _render_one(payload: tuple[Any, list[str], str | None]) -> tuple[str | None, str]:
    return render_model(*payload)


def render_models(models: list[tuple[Any, list[str], str | None]]) -> list[tuple[str | None, str]]:
    """``render_model`` of each (text, features, dialect) in worker processes under
    RENDER_TIMEOUT_S each; a model out of time (or memory) is shown as text, saying so."""
    from srtui.engine.pool import TimedPool, render_timeout

    out: list[tuple[str | None, str]] = [(None, "no model")] * len(models)
    if not models:
        return out
    timeout = render_timeout(RENDER_TIMEOUT_S)
    # backstop=timeout: a report's reader waits in wall-clock time
    preload = ("srtui.results.outputs.report.models",)
    with TimedPool(_render_one, timeout=timeout, mem_mb=2000, preload=preload, backstop=timeout) as pool:
        for result in pool.run(enumerate(models)):
            i = int(result.key)  # type: ignore[call-overload]  # the keys are the indexes above
            if result.status == "ok":
                out[i] = result.value
            elif result.status == "timeout":
                out[i] = (None, f"not rendered: printing took over {timeout:g} s")
            else:
                out[i] = (None, f"not rendered: {visible(str(result.value), one_line=True)[:200]}")
    return out


def model_views(runs: pd.DataFrame, features: dict[str, list[str]]) -> list[ModelView]:
    """Per method the best run (highest test R2) and the median one (the finished run closest
    to the median test R2: ``srbench2022.representative``, the 2022 experts' rule) over all
    datasets of ``runs``."""
    if "model" not in runs.columns:
        return []
    rows: list[tuple[str, str, Any]] = []
    for method, frame in runs.groupby("method", sort=True):
        for which in ("best", "median"):
            row = representative(frame, which)
            if row is not None:
                rows.append((str(method), which, row))
    printed = render_models(
        [(row.get("model"), list(features.get(str(row["task"]), [])), row.get("dialect")) for _, _, row in rows]
    )
    out: list[ModelView] = []
    for (method, which, row), (mathml, why) in zip(rows, printed, strict=True):
        shown = visible(str(row.get("model") or ""))
        out.append(
            ModelView(
                method,
                which,
                str(row["task"]),
                row.get("seed"),
                None if pd.isna(row.get("r2_test")) else float(row["r2_test"]),
                shown if len(shown) <= MAX_TEXT else shown[:MAX_TEXT] + "\u2026",
                mathml,
                why,
            )
        )
    return out
