"""Each method's best and median model as mathematics: the model string read by the one safe
parser (``srtui.engine.expression``, never sympify), printed as MathML by sympy, so a browser shows it
with no script and no network. A string the parser refuses, or one too large, is shown as text."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from srtui.engine.textsafe import visible
from srtui.results.outputs.mathml import MAX_NODES, PRELOAD, render_model, render_one, to_mathml

if TYPE_CHECKING:
    import pandas as pd

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


def render_models(
    models: list[tuple[Any, list[str], str | None]], stop: threading.Event | None = None
) -> list[tuple[str | None, str]]:
    """``render_model`` of each (text, features, dialect) in worker processes under
    RENDER_TIMEOUT_S each; a model out of time (or memory) is shown as text, saying so. One pool
    for all: its server imports the parser and sympy once (``PRELOAD``), not each worker. Once
    ``stop`` is set (the report failed or was interrupted) the workers are ended, the rest unprinted."""
    from srtui.engine.pool import TimedPool, render_timeout

    out: list[tuple[str | None, str]] = [(None, "no model")] * len(models)
    if not models:
        return out
    timeout = render_timeout(RENDER_TIMEOUT_S)
    # backstop=timeout: a report's reader waits in wall-clock time
    with TimedPool(render_one, timeout=timeout, mem_mb=2000, preload=PRELOAD, backstop=timeout) as pool:
        for result in pool.run(enumerate(models)):
            if stop is not None and stop.is_set():
                break  # leaving the pool ends its workers, a busy one killed
            i = int(result.key)  # type: ignore[call-overload]  # the keys are the indexes above
            if result.status == "ok":
                out[i] = result.value
            elif result.status == "timeout":
                out[i] = (None, f"not rendered: printing took over {timeout:g} s")
            else:
                out[i] = (None, f"not rendered: {visible(str(result.value), one_line=True)[:200]}")
    return out


#: a method's shown run: (method, "best" or "median", the run's row)
Chosen = tuple[str, str, Any]


def chosen_runs(runs: pd.DataFrame) -> list[Chosen]:
    """Per method the best run (highest test R2) and the median one (the finished run closest
    to the median test R2: ``srbench2022.representative``, the 2022 experts' rule) over all
    datasets of ``runs``."""
    from srtui.results.scoring.rules.srbench2022 import representative

    if "model" not in runs.columns:
        return []
    rows: list[Chosen] = []
    for method, frame in runs.groupby("method", sort=True):
        for which in ("best", "median"):
            row = representative(frame, which)
            if row is not None:
                rows.append((str(method), which, row))
    return rows


def to_print(rows: list[Chosen], features: dict[str, list[str]]) -> list[tuple[Any, list[str], str | None]]:
    """What ``render_models`` prints of each chosen run: its model, its task's features, its dialect."""
    return [(row.get("model"), list(features.get(str(row["task"]), [])), row.get("dialect")) for _, _, row in rows]


def views(rows: list[Chosen], printed: list[tuple[str | None, str]]) -> list[ModelView]:
    """The chosen runs with their printed models (``render_models`` of ``to_print(rows)``)."""
    import pandas as pd

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


def model_views(runs: pd.DataFrame, features: dict[str, list[str]]) -> list[ModelView]:
    """Per method its best and median run (``chosen_runs``) with the model printed."""
    rows = chosen_runs(runs)
    return views(rows, render_models(to_print(rows, features)))


__all__ = ["MAX_NODES", "ModelView", "model_views", "render_model", "render_models", "to_mathml"]
