"""Run an SRBench method folder unmodified (``--method-dir PATH``).

An SRBench method folder holds ``regressor.py`` exposing ``est`` (a scikit-learn regressor) and
``model(est, X)`` (the model string over X's column names), optionally ``hyper_params``,
``eval_kwargs``, ``complexity(est)``, ``get_population(est)`` and ``get_best_solution(est)``.
This is how a user brings PySR or any method srtui does not ship. The folder's code is the
user's own and runs only inside the job's worker process, as SRBench runs it.

The time budget is set the way SRBench's evaluate_model does: on the first of
``TIME_ATTRIBUTES`` the estimator has; the seed goes to ``random_state`` when present.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from engine.methods.base import FittedModel, Method, ParetoPoint

TIME_ATTRIBUTES = ("max_time", "timeout_in_seconds", "timeout", "stop_time", "time_limit")
#: SRBench 2.0 proposes at most 4 configurations besides the defaults
MAX_CONFIGS = 4


class SRBenchError(ValueError):
    """A folder that is not a usable SRBench method; one line for the CLI."""


def _call_model(model_fn: Any, est: Any, X: Any) -> str:
    # SRBench's model() has been both model(est) and model(est, X) over the years
    try:
        n_params = len(inspect.signature(model_fn).parameters)
    except (TypeError, ValueError):
        n_params = 2
    return str(model_fn(est, X) if n_params >= 2 else model_fn(est))


def expand_hyper_params(grid: Any) -> list[dict[str, Any]]:
    """SRBench's ``hyper_params`` (a dict or list of dicts of value lists) as configurations."""
    from sklearn.model_selection import ParameterGrid

    if not grid:
        return []
    if isinstance(grid, dict):
        grid = [grid]
    grid = [{k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in g.items()} for g in grid]
    return list(ParameterGrid(grid))[:MAX_CONFIGS]


class SRBenchMethod(Method):
    family = "sr"
    licence = "see the method folder"
    requires = ()

    def __init__(self, path: Path):
        self.path = Path(path).expanduser().resolve()
        self.regressor_py = self.path / "regressor.py"
        self.name = self.path.name  # type: ignore[misc]  # instance name: the folder's
        self.honours_time_limit = False  # type: ignore[misc]  # known once est is loaded
        self._module: Any = None

    # -- metadata (cheap: no import of the folder's code) -------------------------------------
    def availability(self) -> tuple[bool, str]:
        if not self.regressor_py.is_file():
            return False, f"{self.regressor_py} not found"
        return True, ""

    def version(self) -> str:
        if not self.regressor_py.is_file():
            return "missing"
        return "regressor.py@" + hashlib.sha256(self.regressor_py.read_bytes()).hexdigest()[:12]

    # -- loading ------------------------------------------------------------------------------
    def module(self) -> Any:
        """Import regressor.py (with its folder on sys.path, as SRBench runs it)."""
        if self._module is not None:
            return self._module
        ok, why = self.availability()
        if not ok:
            raise SRBenchError(f"not an SRBench method folder: {why}")
        if str(self.path) not in sys.path:
            sys.path.insert(0, str(self.path))
        mod_name = f"srtui_srbench_{hashlib.sha256(str(self.path).encode()).hexdigest()[:10]}"
        spec = importlib.util.spec_from_file_location(mod_name, self.regressor_py)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        for needed in ("est", "model"):
            if not hasattr(module, needed):
                raise SRBenchError(f"{self.regressor_py} does not define {needed!r}")
        self._module = module
        self.hyper_params = expand_hyper_params(getattr(module, "hyper_params", None))  # type: ignore[misc]
        self.honours_time_limit = any(hasattr(module.est, a) for a in TIME_ATTRIBUTES)  # type: ignore[misc]
        return module

    # -- fit ----------------------------------------------------------------------------------
    def fit(self, X, y, feature_names, seed, time_budget, params) -> FittedModel:
        from sklearn.base import clone

        mod = self.module()
        eval_kwargs = dict(getattr(mod, "eval_kwargs", {}) or {})
        est = clone(mod.est)
        notes: dict[str, Any] = {}
        if params:
            est.set_params(**params)
        est_params = est.get_params()
        if "random_state" in est_params:
            est.set_params(random_state=int(seed))
        for attr in TIME_ATTRIBUTES:
            if hasattr(est, attr):
                current = getattr(est, attr)
                budget: Any = float(time_budget)
                if isinstance(current, int) and not isinstance(current, bool):
                    budget = max(1, math.floor(time_budget))
                if attr in est_params:
                    est.set_params(**{attr: budget})
                else:
                    setattr(est, attr, budget)
                notes["time_attribute"] = attr
                notes["time_set"] = budget
                break
        use_df = eval_kwargs.get("use_dataframe", True)
        to_frame = self._frame(feature_names) if use_df else np.asarray
        Xf = to_frame(X)
        if callable(eval_kwargs.get("pre_train")):
            eval_kwargs["pre_train"](est, Xf, y)
        est.fit(Xf, y)
        ignored = sorted(set(eval_kwargs) - {"use_dataframe", "pre_train"})
        if ignored:
            notes["eval_kwargs_ignored"] = ignored  # e.g. scale_x: srtui never rescales the data

        def predict(Xn):
            return est.predict(to_frame(Xn))

        if hasattr(mod, "complexity"):
            notes["complexity"] = float(mod.complexity(est))
        best = mod.get_best_solution(est) if hasattr(mod, "get_best_solution") else est
        expression = _call_model(mod.model, best, Xf)
        pareto = []
        if hasattr(mod, "get_population"):
            for member in mod.get_population(est):
                comp = float(mod.complexity(member)) if hasattr(mod, "complexity") else float("nan")
                loss = float(np.mean((np.asarray(member.predict(Xf), dtype=float).reshape(-1) - y) ** 2))
                pareto.append(ParetoPoint(_call_model(mod.model, member, Xf), comp, loss))
        return FittedModel(predict=predict, expression=expression, dialect="python", pareto=pareto, notes=notes)

    @staticmethod
    def _frame(feature_names):
        import pandas as pd

        names = list(feature_names)
        return lambda X: pd.DataFrame(np.asarray(X), columns=names)
