"""The steps of SRBench 2.0's ``experiment/evaluate_model.py`` that srtui repeats for a method folder.

Order and rules follow that script (branch ``srbench_2025``): the global numpy seed and
``est.random_state`` are set first; the data are a DataFrame with the task's feature names unless
``eval_kwargs["use_dataframe"]`` is false or the folder is one SRBench always feeds arrays; the
training rows are subsampled to ``max_train_samples``; X and y are standardised; ``pre_train``
runs, then ``test_params`` (test mode), then the folder's ``_params.py`` (tuned), then the time
budget is set on the first time attribute the estimator has, as an int, by plain attribute
assignment; ``model`` is ``model(est, X)`` when its signature names ``X``, else ``model(est)``.

Scaling (``scaling`` option): SRBench 2.0's ``main`` overwrites a folder's ``scale_x``/``scale_y``
with its command-line flags, and the benchmark commands in its user guide pass ``--scale_x
--scale_y``; so ``reference`` scales both for every folder. ``folder`` honours the folder's own
``eval_kwargs`` (``evaluate_model()``'s defaults, True, when absent); ``none`` scales nothing.
srtui records the model over the task's raw features: the folder's string over standardised
features is composed with the scalers, token by token, before the safe parser reads it. The
driver does it (``srtui.engine.outcome_check``), from the statistics the worker records: a worker in a
method's own environment needs nothing of srtui's parser (nor sympy).
"""

from __future__ import annotations

import importlib.util
import inspect
import io
import math
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from srtui.engine.errors import SrtuiError

TIME_ATTRIBUTES = ("max_time", "timeout_in_seconds", "timeout", "stop_time", "time_limit")
#: evaluate_model.py feeds numpy arrays to these (a substring of the folder name, as it tests)
ARRAY_METHODS = ("e2et", "tpsr", "nesymres", "dso", "bingo")
SCALINGS = ("reference", "folder", "none")
#: a model string that means "this method gives no symbolic model" (SRBench's own marker)
NOT_IMPLEMENTED = "not implemented"
#: the params key that carries these options from the run to the worker
OPTIONS_KEY = "srbench"


class SRBenchError(SrtuiError, ValueError):
    """A folder that is not a usable SRBench method; one line for the CLI."""


@dataclass(frozen=True)
class RunOptions:
    """Run-level switches of SRBench's evaluate_model.py: ``--tuned``, ``-test``, scaling."""

    tuned: bool = False
    test: bool = False
    scaling: str = "reference"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RunOptions:
        raw = params.get(OPTIONS_KEY) or {}
        opts = cls(bool(raw.get("tuned", False)), bool(raw.get("test", False)), str(raw.get("scaling", "reference")))
        if opts.scaling not in SCALINGS:
            raise SRBenchError(f"srbench scaling must be one of {', '.join(SCALINGS)}, got {opts.scaling!r}")
        return opts

    def as_params(self) -> dict[str, Any]:
        """Only what differs from the defaults (so a default run's job ids stay as they were)."""
        out: dict[str, Any] = {}
        if self.tuned:
            out["tuned"] = True
        if self.test:
            out["test"] = True
        if self.scaling != "reference":
            out["scaling"] = self.scaling
        return out


def uses_dataframe(folder_name: str, eval_kwargs: dict[str, Any]) -> bool:
    if any(tag in folder_name for tag in ARRAY_METHODS):
        return False
    return bool(eval_kwargs.get("use_dataframe", True))


def scale_flags(opts: RunOptions, eval_kwargs: dict[str, Any]) -> tuple[bool, bool]:
    if opts.scaling == "reference":
        return True, True
    if opts.scaling == "none":
        return False, False
    return bool(eval_kwargs.get("scale_x", True)), bool(eval_kwargs.get("scale_y", True))


def subsample(X: np.ndarray, y: np.ndarray, max_train_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """evaluate_model.py's subsampling: the global numpy generator, seeded just before."""
    if max_train_samples > 0 and len(y) > max_train_samples:
        idx = np.random.choice(np.arange(len(X)), size=max_train_samples, replace=False)
        return X[idx], y[idx]
    return X, y


def tuned_params(folder: Path) -> dict[str, Any]:
    """``params`` of the folder's ``_params.py`` (SRBench's tuned configuration)."""
    path = folder / "_params.py"
    if not path.is_file():
        raise SRBenchError(f"{folder.name}: --tuned asks for {path}, which does not exist")
    spec = importlib.util.spec_from_file_location(f"srtui_srbench_params_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params = getattr(module, "params", None)
    if not isinstance(params, dict):
        raise SRBenchError(f"{path} does not define a dict named 'params'")
    return params


def set_time_attributes(est: Any, seconds: float) -> dict[str, Any]:
    """Set the first of TIME_ATTRIBUTES the estimator has to the budget in whole seconds."""
    budget = max(1, math.floor(seconds))  # SRBench's fit_time_limit is an int
    for attr in TIME_ATTRIBUTES:
        if hasattr(est, attr):
            setattr(est, attr, budget)
            return {"time_attribute": attr, "time_set": budget}
    return {"time_attribute": None}


def model_string(model_fn: Any, est: Any, X_frame: Any) -> str | None:
    """The folder's model string, or None for a black box (``model = None`` / "not implemented")."""
    if model_fn is None:
        return None
    try:
        wants_x = "X" in inspect.signature(model_fn).parameters
    except (TypeError, ValueError):
        wants_x = True
    text = model_fn(est, X_frame) if wants_x else model_fn(est)
    text = str(text)
    return None if text.strip() == NOT_IMPLEMENTED else text


class Scalers:
    """StandardScalers of X and y as evaluate_model.py fits them (None when not scaling)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, scale_x: bool, scale_y: bool):
        from sklearn.preprocessing import StandardScaler

        self.x = StandardScaler().fit(X) if scale_x else None
        self.y = StandardScaler().fit(y.reshape(-1, 1)) if scale_y else None

    def transform_x(self, X: np.ndarray) -> np.ndarray:
        return self.x.transform(X) if self.x is not None else X

    def transform_y(self, y: np.ndarray) -> np.ndarray:
        return self.y.transform(y.reshape(-1, 1)).flatten() if self.y is not None else y

    def inverse_y(self, pred: Any) -> np.ndarray:
        out = np.asarray(pred, dtype=float).reshape(-1, 1)
        return (self.y.inverse_transform(out) if self.y is not None else out).reshape(-1)

    @property
    def active(self) -> bool:
        return self.x is not None or self.y is not None

    def stats(self) -> ScalerStats:
        x = None if self.x is None else ([float(v) for v in self.x.mean_], [float(v) for v in self.x.scale_])
        y = None if self.y is None else (float(self.y.mean_[0]), float(self.y.scale_[0]))
        return ScalerStats(x, y)


#: the job's note that carries a folder's scalers from its worker to the driver
SCALERS_NOTE = "srbench_scalers"


@dataclass(frozen=True)
class ScalerStats:
    """The statistics of a folder's scalers, as plain floats. The worker records them in the job's
    notes and hands the model string back as printed; the driver composes the two
    (``over_task_features``): the worker, which may run in an environment of the method's own,
    needs no parser (nor sympy) for it."""

    x: tuple[list[float], list[float]] | None = None  # (mean_, scale_) per feature
    y: tuple[float, float] | None = None  # (mean_, scale_) of y

    @property
    def active(self) -> bool:
        return self.x is not None or self.y is not None

    def to_note(self) -> dict[str, Any]:
        return {"x": None if self.x is None else list(self.x), "y": None if self.y is None else list(self.y)}

    @classmethod
    def from_note(cls, raw: Any, n_features: int) -> ScalerStats:
        """From the job's notes (written by the method's process: checked, never trusted);
        ValueError if they are not finite floats of the task's shape."""
        if raw is None:
            return cls()

        def floats(values: Any, n: int) -> list[float]:
            if not isinstance(values, list) or len(values) != n:
                raise ValueError(f"the scalers' statistics in the job's notes are not {n} numbers")
            out = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if len(out) != n or not all(map(math.isfinite, out)):
                raise ValueError("the scalers' statistics in the job's notes are not finite numbers")
            return out

        if not isinstance(raw, dict):
            raise ValueError("the scalers' statistics in the job's notes are not readable")
        x, y = raw.get("x"), raw.get("y")
        if x is not None and not (isinstance(x, list) and len(x) == 2):
            raise ValueError("the scalers' statistics in the job's notes are not readable")
        xs = None if x is None else (floats(x[0], n_features), floats(x[1], n_features))
        ys = None if y is None else floats(y, 2)
        return cls(xs, None if ys is None else (ys[0], ys[1]))


def composed(text: str, features: Sequence[str], stats: ScalerStats, cap: int) -> str:
    """``over_task_features`` of a folder's printed model, in the driver; text the parser would
    reject (or cut at the worker's ``cap``) stays as printed, so the check records it as
    invalid_model (with the parser's reason) rather than a crash."""
    from srtui.engine.expression import ExpressionError

    if len(text) >= cap:
        return text
    try:
        return over_task_features(text, features, "srbench", stats)
    except (ExpressionError, SyntaxError, ValueError):
        return text


def over_task_features(text: str, features: Sequence[str], dialect: str, scalers: ScalerStats) -> str:
    """``text`` as a model over the task's raw features, for the safe parser to read.

    Works on Python tokens of the dialect-translated string, evaluating nothing: a numbered name
    (``X0``, when the method lost the column names) becomes its feature's name; with scaling on,
    each feature becomes ``((name - mean) / scale)`` and the whole is mapped back through y's
    scaler. Text that needs neither is returned as printed.
    """
    from srtui.engine.expression.dialects import DIALECT_TABLE
    from srtui.engine.expression.parser import numbered_names
    from srtui.engine.expression.tokens import translate

    renames = numbered_names(text, features, dialect)
    if not renames and not scalers.active:
        return text
    src = translate(text, DIALECT_TABLE[dialect])
    toks = [
        t
        for t in tokenize.generate_tokens(io.StringIO(src).readline)
        if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
    ]
    index = {name: i for i, name in enumerate(features)}
    out: list[str] = []
    for k, tok in enumerate(toks):
        name = renames.get(tok.string, tok.string) if tok.type == tokenize.NAME else None
        is_call = k + 1 < len(toks) and toks[k + 1].string == "("
        if name in index and not is_call:
            i = index[name]
            sx = scalers.x
            out.append(f"(({name} - {sx[0][i]!r}) / {sx[1][i]!r})" if sx is not None else name)
        else:
            out.append(tok.string)
    body = " ".join(out)
    if scalers.y is None:
        return body
    return f"(({body}) * {scalers.y[1]!r} + {scalers.y[0]!r})"
