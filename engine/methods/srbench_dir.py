"""Run an SRBench method folder, or an SRBench 2021 method file, unmodified (``--method-dir PATH``).

SRBench 2021's methods are single files (``experiment/methods/KernelRidge.py``), named by the
file, which play the part of a folder's ``regressor.py``; 2022's and 2.0's are folders, named by
the folder. An SRBench method folder holds ``regressor.py`` exposing ``est`` (a scikit-learn regressor) and
``model`` (``model(est)``, ``model(est, X)``, or ``None`` for a black box), optionally
``hyper_params``, ``eval_kwargs``, ``complexity(est)``, ``get_population(est)``,
``get_best_solution(est)``, and a ``_params.py`` with the tuned ``params``. This is how a user
brings PySR or any method srtui does not ship. The folder's code is the user's own and runs only
inside the job's worker process, as SRBench runs it; its model string is read only by srtui's
safe parser. What SRBench's evaluate_model.py does, step by step, is in ``srbench_eval``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from srtui.engine.methods import srbench_eval as ev
from srtui.engine.methods.base import FittedModel, Method, ParetoPoint
from srtui.engine.methods.srbench_eval import TIME_ATTRIBUTES, SRBenchError
from srtui.engine.spec import FitBudget

if TYPE_CHECKING:
    import pandas as pd

#: SRBench 2.0 proposes at most 4 configurations besides the defaults
MAX_CONFIGS = 4
#: srtui's stand-in for SRBench's ``experiment/symbolic_utils.py`` (rils-rols imports it)
SUPPORT_DIR = Path(__file__).parent / "srbench_support"
#: share of the job's budget kept for predicting and printing the model after the fit
FINISH_SHARE = 0.1
#: SRBench's population analysis keeps at most this many members
MAX_POPULATION = 100


def expand_hyper_params(grid: Any, limit: int | None = MAX_CONFIGS) -> list[dict[str, Any]]:
    """SRBench's ``hyper_params`` (a dict or list of dicts of value lists) as configurations,
    the first ``limit`` of them (None: all), in scikit-learn's ``ParameterGrid`` order. The
    driver plans with it: scikit-learn is never imported for it (``param_grid``)."""
    from srtui.engine.methods.param_grid import configurations

    return configurations(grid, limit)


#: the largest regressor.py whose top-level literals the driver reads
MAX_SOURCE = 1 << 20


#: ``SRBenchMethod.grid_from``: where its grid comes from
GRID_LITERAL, GRID_NONE, GRID_BY_JOB = "literal", "none", "job"
#: a job param: the job imports the method file and reports its ``hyper_params`` instead of fitting
READ_GRID_KEY = "srtui_read_grid"


def literal_settings(regressor_py: Path) -> dict[str, Any]:
    """The folder's ``hyper_params`` and the literal ``scale_x`` / ``scale_y`` of its
    ``eval_kwargs``, read from regressor.py's top-level assignments without running it (the
    driver plans the tuning before any worker imports the folder). ``grid_from``: GRID_LITERAL
    when ``hyper_params`` is one literal assignment and nothing else names it, GRID_NONE when
    nothing does, else GRID_BY_JOB: the file builds it (2021's gplearn.py, in a loop), and only
    running the file can read it. A non-literal ``eval_kwargs`` value is left out."""
    import ast

    try:
        with regressor_py.open("rb") as fh:
            tree = ast.parse(fh.read(MAX_SOURCE))
    except (OSError, SyntaxError, ValueError):
        return {"grid_from": GRID_BY_JOB}  # the job then says what is wrong with the file
    found: dict[str, Any] = {}
    literal = None
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        name = node.targets[0].id
        if name == "hyper_params":
            try:
                found[name], literal = ast.literal_eval(node.value), node.targets[0]
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                found.pop(name, None)
        elif name == "eval_kwargs":
            found[name] = _literal_flags(node.value)
    named = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "hyper_params"]
    if not named:
        found["grid_from"] = GRID_NONE
    elif named == [literal]:
        found["grid_from"] = GRID_LITERAL
    else:
        found.pop("hyper_params", None)
        found["grid_from"] = GRID_BY_JOB
    return found


def _literal_flags(node: Any) -> dict[str, bool]:
    """``scale_x`` / ``scale_y`` of a ``{...}`` or ``dict(...)`` whose values are literals."""
    import ast

    pairs: list[tuple[Any, Any]] = []
    if isinstance(node, ast.Dict):
        pairs = [(k.value if isinstance(k, ast.Constant) else None, v) for k, v in zip(node.keys, node.values)]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        pairs = [(kw.arg, kw.value) for kw in node.keywords]
    return {
        str(key): value.value
        for key, value in pairs
        if key in ("scale_x", "scale_y") and isinstance(value, ast.Constant) and isinstance(value.value, bool)
    }


#: what a --method-dir that is neither an SRBench method folder nor a 2021 method file gets told
NOT_A_METHOD = "no regressor.py there (an SRBench method folder has one; a 2021 method is a NAME.py file)"


def method_source(given: Path) -> Path | None:
    """The method code of a ``--method-dir``: a folder's ``regressor.py``, or a 2021 method file
    (``NAME.py``) itself; None when ``given`` is neither."""
    path = Path(given).expanduser()
    if path.is_dir():
        return path / "regressor.py" if (path / "regressor.py").is_file() else None
    return path if path.suffix == ".py" and path.is_file() else None


def method_name(given: Path) -> str:
    """The method's name: the folder's, or a 2021 file's stem (``KernelRidge``)."""
    path = Path(given).expanduser().resolve()
    return path.stem if path.suffix == ".py" and not path.is_dir() else path.name


def import_paths(folder: Path, single: bool = False) -> list[str]:
    """The folder itself (not for a 2021 method file: 2021 imported ``methods.NAME`` from
    ``experiment/``, so ``gplearn.py``'s ``from gplearn.genetic import ...`` finds the package, not
    itself), then SRBench's ``experiment/`` when the folder sits in a checkout of it
    (evaluate_model.py runs from there), then srtui's stand-ins, last, so the real ones win."""
    paths = [] if single else [str(folder)]
    methods = folder if single else folder.parent  # a 2021 file sits in methods/, a folder under it
    experiment = methods.parent
    if methods.name == "methods" and (experiment / "evaluate_model.py").is_file():
        paths.append(str(experiment))
    return paths


class SRBenchMethod(Method):
    family = "sr"
    licence = "see the method folder"
    requires = ()
    scales_itself = True  # RunOptions.scaling: a run turns it off (the run's protocol scales, srtui.runs.tuning)

    def __init__(self, path: Path):
        given = Path(path).expanduser().resolve()
        self.single = given.suffix == ".py" and not given.is_dir()  # a 2021 method file
        self.path = given.parent if self.single else given  # the folder on sys.path (a folder's)
        self.regressor_py = given if self.single else given / "regressor.py"
        self.name = method_name(given)  # type: ignore[misc]  # instance name: the folder's or the file's
        self.honours_time_limit = False  # type: ignore[misc]  # known once est is loaded
        self._module: Any = None
        # what a protocol plans from, known before the folder's code runs (in a worker)
        settings = literal_settings(self.regressor_py) if self.regressor_py.is_file() else {}
        self.hyper_params = expand_hyper_params(settings.get("hyper_params"), None)  # type: ignore[misc]
        self.eval_kwargs = settings.get("eval_kwargs", {})  # type: ignore[misc]  # the folder's own
        #: GRID_LITERAL, GRID_NONE or GRID_BY_JOB (srtui.runs.grids reads it by running the file in a job)
        self.grid_from: str = settings.get("grid_from", GRID_NONE)

    # -- metadata (cheap: no import of the folder's code) -------------------------------------
    def availability(self) -> tuple[bool, str]:
        if not self.regressor_py.is_file():
            return False, f"{self.regressor_py} not found"
        return True, ""

    def version(self) -> str:
        if not self.regressor_py.is_file():
            return "missing"
        code = f"{self.regressor_py.name}@" + hashlib.sha256(self.regressor_py.read_bytes()).hexdigest()[:12]
        env = self.environment  # srtui run --env NAME: its jobs are other jobs than this Python's
        return code if env is None else f"{code} in environment {env.name}"

    # -- loading ------------------------------------------------------------------------------
    def module(self) -> Any:
        """Import regressor.py (with its folder on sys.path, as SRBench runs it)."""
        if self._module is not None:
            return self._module
        ok, why = self.availability()
        if not ok:
            raise SRBenchError(f"not an SRBench method folder: {why}")
        for i, entry in enumerate(import_paths(self.path, self.single)):
            if entry not in sys.path:
                sys.path.insert(i, entry)
        if str(SUPPORT_DIR) not in sys.path:
            sys.path.append(str(SUPPORT_DIR))
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
        self.hyper_params = expand_hyper_params(getattr(module, "hyper_params", None), None)  # type: ignore[misc]
        self.honours_time_limit = any(hasattr(module.est, a) for a in TIME_ATTRIBUTES)  # type: ignore[misc]
        if module.model is None:
            self.family = "blackbox"  # type: ignore[misc]
        return module

    # -- fit ----------------------------------------------------------------------------------
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        started = time.monotonic()
        mod = self.module()
        params = dict(params or {})
        if params.pop(READ_GRID_KEY, None):
            return grid_report(mod)
        opts = ev.RunOptions.from_params(params)
        params.pop(ev.OPTIONS_KEY, None)
        eval_kwargs = dict(getattr(mod, "eval_kwargs", {}) or {})
        # 2021's evaluate_model fed numpy arrays (read_file's .values, scaled), 2.0's a DataFrame
        use_df = not self.single and ev.uses_dataframe(self.name, eval_kwargs)
        names = list(feature_names)
        notes: dict[str, Any] = {"use_dataframe": use_df, "python": sys.executable}  # which environment ran it

        np.random.seed(seed)  # evaluate_model.py seeds the global generator first
        est = mod.est  # SRBench fits the module's own instance (a fresh worker process here)
        if hasattr(est, "random_state"):
            est.random_state = int(seed)
        if params:
            est.set_params(**params)  # srtui's suite params / hyper-parameter configuration
        X_fit, y_fit = ev.subsample(np.asarray(X), np.asarray(y), int(eval_kwargs.get("max_train_samples", 0) or 0))
        scale_x, scale_y = ev.scale_flags(opts, eval_kwargs)
        scalers = ev.Scalers(X_fit, y_fit, scale_x, scale_y)
        notes.update(scale_x=scale_x, scale_y=scale_y, n_train=len(y_fit))

        def frame(Xn: np.ndarray) -> Any:
            Xs = scalers.transform_x(np.asarray(Xn))
            return self._frame(Xs, names) if use_df else Xs

        Xf, yf = frame(X_fit), scalers.transform_y(y_fit)
        self._prepare(mod, est, Xf, yf, eval_kwargs, opts, notes)
        # importing the folder (optuna, sympy...) and pre_train ran inside the job's wall limit,
        # and predicting and printing the model must fit in it too (SRBench's job limit is a
        # separate, larger figure than its fit_time_limit)
        left = float(fit_budget) - (time.monotonic() - started)
        notes.update(ev.set_time_attributes(est, left - max(1.0, FINISH_SHARE * fit_budget.nominal)))
        est.fit(Xf, yf)

        def predict(Xn: np.ndarray) -> np.ndarray:
            return scalers.inverse_y(est.predict(frame(Xn)))

        X_named = Xf if use_df or self.single else self._frame(Xf, names)  # 2021: model(est, X_train_scaled)
        # handed back as printed, over the standardised features: the driver composes it with
        # the scalers (ev.ScalerStats), so the worker needs no parser in the method's environment
        expression = ev.model_string(mod.model, est, X_named)
        if expression is None:
            notes["symbolic_model"] = ev.NOT_IMPLEMENTED
        if scalers.active:
            notes[ev.SCALERS_NOTE] = scalers.stats().to_note()
        complexity_fn = getattr(mod, "complexity", None)
        if complexity_fn is not None:
            try:
                notes["complexity"] = float(complexity_fn(est))
            except Exception as exc:  # noqa: BLE001 - SRBench calls it only when sympy cannot size the model
                notes["complexity_error"] = f"{type(exc).__name__}: {exc}"
        pareto = self._pareto(mod, est, X_fit, y_fit, X_named, scalers, frame)
        return FittedModel(predict=predict, expression=expression, dialect="srbench", pareto=pareto, notes=notes)

    def _prepare(
        self,
        mod: ModuleType,
        est: Any,
        Xf: Any,
        yf: np.ndarray,
        eval_kwargs: dict[str, Any],
        opts: ev.RunOptions,
        notes: dict[str, Any],
    ) -> None:
        """pre_train, test_params, tuned params: in evaluate_model.py's order, before the budget."""
        if callable(eval_kwargs.get("pre_train")):
            eval_kwargs["pre_train"](est, Xf, yf)
        if opts.test and eval_kwargs.get("test_params"):
            est.set_params(**eval_kwargs["test_params"])
            notes["test_params"] = eval_kwargs["test_params"]
        if opts.tuned:
            try:
                tuned = ev.tuned_params(self.path)
                est.set_params(**tuned)
                notes["tuned_params"] = tuned
            except Exception as exc:  # noqa: BLE001 - SRBench prints a warning and runs the untuned estimator
                notes["tuned_error"] = f"{type(exc).__name__}: {exc}"

    def _pareto(
        self,
        mod: ModuleType,
        est: Any,
        X_fit: np.ndarray,
        y_fit: np.ndarray,
        X_named: Any,
        scalers: ev.Scalers,
        frame: Callable[[Any], Any],
    ) -> list[ParetoPoint]:
        """get_population (else get_best_solution) as the front, each member's loss in y's units."""
        if hasattr(mod, "get_population"):
            members = list(mod.get_population(est))[:MAX_POPULATION]
        elif hasattr(mod, "get_best_solution"):
            members = [mod.get_best_solution(est)]
        else:
            return []
        complexity_fn = getattr(mod, "complexity", None)
        points = []
        for member in members:
            text = ev.model_string(mod.model, member, X_named)  # as printed, like the model
            if text is None:
                continue
            try:
                comp = float(complexity_fn(member)) if complexity_fn is not None else float("nan")
            except Exception:  # noqa: BLE001 - e.g. operon's complexity() reads attributes only the full estimator has
                comp = float("nan")
            try:
                # gplearn's population holds programs, which SRBench runs with execute()
                run = member.predict if hasattr(member, "predict") else (lambda Xm, m=member: m.execute(np.asarray(Xm)))
                loss = float(np.mean((scalers.inverse_y(run(frame(X_fit))) - y_fit) ** 2))
            except Exception:  # noqa: BLE001 - any failure of a member's predict is a NaN loss
                loss = float("nan")
            points.append(ParetoPoint(text, comp, loss))
        return points

    @staticmethod
    def _frame(X: Any, names: Sequence[str]) -> pd.DataFrame:
        return _writable_frame_class()(np.asarray(X), columns=list(names))


def grid_report(mod: ModuleType) -> FittedModel:
    """What a grid-reading job returns: the module's ``hyper_params`` as configurations (JSON
    values: a tuple becomes a list) in its notes, and no model."""
    import json

    configs = expand_hyper_params(getattr(mod, "hyper_params", None), None)
    try:
        plain = json.loads(json.dumps(configs))
    except (TypeError, ValueError) as exc:
        raise SRBenchError(f"hyper_params holds a value that is not JSON data: {exc}") from None
    return FittedModel(predict=lambda X: np.zeros(len(X)), expression=None, notes={"hyper_params": plain})


def _writable_frame_class() -> type[pd.DataFrame]:
    """A pandas DataFrame whose ``np.asarray`` is a writable copy.

    pandas 3 hands out read-only views (copy-on-write); SRBench's environments had pandas 1-2,
    whose arrays were writable, and methods such as pyoperon 0.6 refuse read-only buffers.
    """
    import pandas as pd

    class WritableFrame(pd.DataFrame):
        @property
        def _constructor(self) -> type[pd.DataFrame]:
            return WritableFrame

        def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
            return np.array(super().__array__(dtype), copy=True)

    return WritableFrame
