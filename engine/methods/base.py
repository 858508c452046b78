"""The adapter contract every method implements.

A method adapter runs *inside the job's worker process* (see srtui.engine.process.job_worker), so it
may import heavy or fragile packages freely: a crash, hang or memory blow-up there is contained
by the launcher's limits. What it returns crosses back to the driver as data only (strings,
numbers, arrays), never as pickled objects.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from srtui.engine.errors import SrtuiError
from srtui.engine.spec import FitBudget

if TYPE_CHECKING:  # numpy for the annotations only: the registry reads this module without it
    import numpy as np

    from srtui.engine.methods.environments import Environment

#: Families shown in `srtui methods list`; "blackbox" methods return no expression.
FAMILIES = ("sr", "baseline", "blackbox", "probe")


def library_seconds(fit_budget: float) -> int:
    """Whole seconds for a library's own timer: a second short of the budget (head room to
    extract the model), never below 1 (the libraries count in whole seconds)."""
    return max(1, math.floor(fit_budget - 1.0))


def _top_level_modules(distributions: Sequence[str]) -> list[str]:
    """The importable top-level modules of installed distributions (top_level.txt, else the
    first path component of their packages' ``__init__.py``)."""
    from importlib.metadata import PackageNotFoundError, distribution

    modules: list[str] = []
    for dist_name in distributions:
        try:
            dist = distribution(dist_name)
        except PackageNotFoundError:
            continue
        listed = (dist.read_text("top_level.txt") or "").split()
        if not listed:
            listed = sorted({f.parts[0] for f in dist.files or () if len(f.parts) == 2 and f.name == "__init__.py"})
        modules += [m for m in listed if m.isidentifier() and not m.startswith("_")]
    return modules


@dataclass
class ParetoPoint:
    """One model of a method's own accuracy/complexity front."""

    expression: str
    complexity: float
    loss: float


@dataclass
class FittedModel:
    """What a fit hands back to the worker.

    ``expression`` is a string over the task's feature names in the method's ``dialect`` (the
    engine's safe parser translates dialects; adapters never build sympy objects from strings
    themselves). ``predict`` is the method's *own* prediction function: the engine scores it and
    compares it with the parsed expression (the fidelity check).
    """

    predict: Any  # Callable[[np.ndarray], np.ndarray]
    expression: str | None = None
    dialect: str = "python"
    pareto: list[ParetoPoint] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)


def _signature_params(target: str) -> list[str]:
    """The keyword parameters of ``module:Class`` (run in a process of its own)."""
    import importlib
    import inspect

    module, _, cls = target.partition(":")
    return sorted(set(inspect.signature(getattr(importlib.import_module(module), cls)).parameters) - {"self"})


@functools.lru_cache(maxsize=32)
def estimator_params(target: str) -> tuple[str, ...]:
    """``_signature_params(target)`` read in a child process under a deadline (importing
    scikit-learn or pyoperon costs the driver a second and more, #56), once per driver, and kept
    by the installed library's fingerprint for the next plan (``srtui.engine.methods.params_cache``)."""
    from srtui.engine.methods import params_cache

    key = params_cache.fingerprint(target)
    kept = params_cache.cached(key)
    if kept is not None:
        return tuple(kept)
    from srtui.engine.pool import TimedPool  # multiprocessing: only when the child runs

    with TimedPool(_signature_params, workers=1, timeout=PARAMS_TIMEOUT_S, mem_mb=None) as pool:
        [result] = list(pool.run([(0, target)]))
    if result.status != "ok" or not isinstance(result.value, list):
        raise ParamsError(f"cannot read the parameters of {target} to check them: {result.status}")
    names = [str(v) for v in result.value]
    params_cache.keep(key, names)
    return tuple(names)


#: seconds the parameter check may take to import a method's library (a loaded machine is slow)
PARAMS_TIMEOUT_S = 120.0


class ParamsError(SrtuiError, ValueError):
    """A suite gives a method a parameter it does not take; one line."""


#: SRBench 2.0's limit: at most 4 configurations besides the defaults
MAX_CONFIGURATIONS = 4


@dataclass(frozen=True)
class ContractTags:
    """Where a method departs from the contract battery's expectations (tests/e2e/
    test_method_contracts.py), declared on the method with the reason, as scikit-learn's
    estimator tags and ``_xfail_checks`` are: the battery reads these, never a method's name."""

    #: the most ``hyper_params`` configurations it declares
    max_configurations: int = MAX_CONFIGURATIONS
    #: a check of the battery (its test function's name) -> why the method fails it: the check
    #: runs, expected to fail (a strict xfail: it fails the battery once the method passes)
    xfail_checks: Mapping[str, str] = field(default_factory=dict)
    #: why the tags depart from the defaults (required when they do)
    why: str = ""


class Method(ABC):
    """Base class of a method adapter. Subclasses set the class attributes and implement fit."""

    name: ClassVar[str]
    family: ClassVar[str] = "sr"
    licence: ClassVar[str] = ""
    #: does the method stop by itself within the time budget it is given?
    honours_time_limit: ClassVar[bool] = False
    #: Python distribution(s) the method needs; used for "installed or why not" and the version.
    requires: ClassVar[tuple[str, ...]] = ()
    default_params: ClassVar[dict[str, Any]] = {}
    #: at most 4 configurations besides the defaults (SRBench 2.0's proposal; ``contract`` may say otherwise)
    hyper_params: ClassVar[list[dict[str, Any]]] = []
    #: the contract battery's exceptions for this method, with the reason (none by default)
    contract: ClassVar[ContractTags] = ContractTags()
    #: SRBench's eval_kwargs a protocol honours: ``scale_x`` / ``scale_y`` (scaling "method")
    eval_kwargs: ClassVar[dict[str, Any]] = {}
    #: shown in `methods list` for optional methods: how to install
    install_hint: ClassVar[str] = ""
    #: modules the worker imports before it starts the fit timer, so ``fit_s`` times the
    #: algorithm, not the interpreter loading it; empty: the top-level modules of ``requires``
    preload_modules: ClassVar[tuple[str, ...]] = ()
    #: may a job be forked from a server that pre-imported the method's modules (srtui.engine.process.launch)?
    #: Only if importing them starts no thread and no JIT/runtime state a fork would break
    fork_safe: ClassVar[bool] = False
    #: the method's own Python environment (srtui.engine.methods.environments): its jobs' workers run
    #: that interpreter; None: srtui's own
    environment: ClassVar[Environment | None] = None
    #: "module:Class" whose constructor keywords (with ``default_params``' keys) are the
    #: parameters a suite may give (``check_params``); None: not known, any is passed on
    params_of: ClassVar[str | None] = None
    #: what one fit draws from numpy's global generator, as (RandomState method, args) calls: the
    #: srbench2021 protocol replays them between halving iterations (srtui.engine.protocols.halving_folds)
    fit_draws: ClassVar[tuple[tuple[str, tuple[Any, ...]], ...]] = ()
    #: the model size SRBench 2021's evaluate_model.py stored for the published method this one
    #: stands for (srtui.results.metrics.compute, ``srbench2021.size``): "model", the nodes of its model
    #: as 2021 reads it; "features", the number of features (a 2021 method file whose
    #: ``complexity`` is None, as SGDRegressor.py's "Linear")
    srbench2021_size: ClassVar[str] = "model"
    #: set by ``@builtin`` on the class it declares (its own ``__dict__``, not a subclass's)
    _declared_builtin: ClassVar[dict[str, bool]]

    def preload(self) -> list[str]:
        """Import the method's heavy modules now (outside the timed fit); returns what failed.

        A module that fails to import is not an error here: the fit imports it again and
        reports the failure the way it always has."""
        import importlib

        failed = []
        for module in self.preload_modules or _top_level_modules(self.requires):
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - any import failure is the fit's to report
                failed.append(module)
        return failed

    def check_params(self, params: dict[str, Any]) -> None:
        """Refuse, before any job, a parameter the method does not take (a misspelt name would
        otherwise fail every fit, or pass a dry run). ``params_of``'s signature is read in a
        process of its own (``estimator_params``): the driver never imports a method's library."""
        if self.params_of is None or self.environment is not None or not params:
            return  # another interpreter's version decides there (environment): not checked here
        from srtui.engine.errors import did_you_mean

        known = set(estimator_params(self.params_of)) | set(self.default_params)
        for name in params:
            if name not in known:
                raise ParamsError(
                    f"method {self.name!r} has no parameter {name!r} ([params.{self.name}]){did_you_mean(name, known)}"
                )

    def version(self) -> str:
        if self.environment is not None:  # pinned by the environment, not this interpreter's
            return f"environment {self.environment.name}"
        return ",".join(dist_version(dist) for dist in self.requires) or "builtin"

    def availability(self) -> tuple[bool, str]:
        """(installed, reason-if-not). Must be cheap: no import of the method's package."""
        if self.environment is not None:
            if self.environment.ready():
                return True, ""
            return (
                False,
                f"its environment is not installed at {self.environment.folder} (srtui methods install {self.name})",
            )
        for dist in self.requires:
            if dist_version(dist) == f"{dist} {MISSING}":
                return False, f"{dist} is not installed" + (f" ({self.install_hint})" if self.install_hint else "")
        return True, ""

    @abstractmethod
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        """Fit on (X, y) within ``fit_budget`` seconds (``Limits.fit_budget`` less the worker's
        start-up) and return the fitted model."""


M = TypeVar("M", bound=type[Method])


def builtin(*, optional: bool = False, default_sr: bool = False) -> Callable[[M], M]:
    """Declare the decorated class a built-in method, listed under its ``name`` (srtui.engine.methods.registry
    finds it by reading this package's source: the flags are literals, ``name`` a literal string).
    ``optional``: not installed with srtui (`srtui methods install NAME`); ``default_sr``: an SR
    method installed with srtui, in the default SR set of suites."""

    def declare(cls: M) -> M:
        cls._declared_builtin = {"optional": optional, "default_sr": default_sr}  # what importing declares
        return cls

    return declare


#: how ``dist_version`` says a distribution is not installed
MISSING = "(missing)"
#: distribution -> ``dist==VERSION``, filled by a fork server before it forks (``remember_versions``)
#: and by a driver from its kept table (``srtui.engine.methods.dist_cache``)
KNOWN_VERSIONS: dict[str, str] = {}


def remember_versions(method: Method) -> None:
    """Look up the method's distributions' versions now and keep them for this process and its
    forks: a fork server does so before it forks, so its jobs (which import the libraries the
    server imported) skip the search of every path entry's metadata, ~4 ms of CPU a job."""
    for dist in method.requires:
        KNOWN_VERSIONS[dist] = dist_version(dist)


def dist_version(dist: str) -> str:
    known = KNOWN_VERSIONS.get(dist)
    if known is not None:
        return known
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{dist}=={version(dist)}"
    except PackageNotFoundError:
        return f"{dist} {MISSING}"
