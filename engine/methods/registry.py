"""Method registry: name -> adapter class, imported lazily.

Listing methods must not import their packages (pyoperon, jax, ...): the driver stays light and
a broken optional install cannot take the CLI down. Each entry names ``module:Class``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from engine.errors import SrtuiError, did_you_mean
from engine.methods.base import Method
from engine.names import quoted


class MethodError(SrtuiError, ValueError):
    """An unknown or unloadable method; the message is one line for the CLI."""


BUILTIN: dict[str, str] = {
    # probes: self-tests of the engine, runnable by name, in no default suite
    "probe-noop": "engine.methods.probes:Noop",
    "probe-sleep": "engine.methods.probes:Sleep",
    "probe-memhog": "engine.methods.probes:MemHog",
    "probe-crash": "engine.methods.probes:Crash",
    "probe-escape": "engine.methods.probes:Escape",
    "probe-forks": "engine.methods.probes:Forks",
    "probe-forkloop": "engine.methods.probes:ForkLoop",
    "probe-badmodel": "engine.methods.probes:BadModel",
    # scikit-learn baselines: exported symbolically ...
    "dummy": "engine.methods.sklearn_baselines:Dummy",
    "linear": "engine.methods.sklearn_baselines:Linear",
    "sgd": "engine.methods.sklearn_baselines:SGD",
    "sgd-sklearn024": "engine.methods.sklearn_baselines:SGDSklearn024",
    "lasso": "engine.methods.sklearn_baselines:Lasso",
    "ridge": "engine.methods.sklearn_baselines:Ridge",
    "poly2": "engine.methods.sklearn_baselines:Poly2",
    # ... and black-box (accuracy only)
    "rf": "engine.methods.sklearn_baselines:RandomForest",
    "gbr": "engine.methods.sklearn_baselines:GradientBoosting",
    "mlp": "engine.methods.sklearn_baselines:MLP",
    "knn": "engine.methods.sklearn_baselines:KNN",
    # symbolic regression, installed with srtui
    "pyoperon": "engine.methods.operon:Operon",
    "gplearn": "engine.methods.gplearn_adapter:Gplearn",
    "ffx": "engine.methods.ffx_adapter:FFX",
    # optional extras (`srtui methods install NAME`); their packages are imported only in fit
    "rils-rols": "engine.methods.optional:RilsRols",
    "hroch": "engine.methods.optional:Hroch",
    "feyn": "engine.methods.optional:Feyn",
    "bingo": "engine.methods.optional:Bingo",
    "itea": "engine.methods.optional:Itea",
}

#: the SR methods installed with srtui (the default SR set of suites and of the acceptance check)
DEFAULT_SR = ("pyoperon", "gplearn", "ffx")
OPTIONAL = ("rils-rols", "hroch", "feyn", "bingo", "itea")

#: prefix of methods loaded from an SRBench method folder (``--method-dir``)
SRBENCH_PREFIX = "srbench:"


def names(include_probes: bool = False) -> list[str]:
    return [n for n in BUILTIN if include_probes or not n.startswith("probe-")]


def load(name: str) -> Method:
    """Instantiate the adapter of ``name`` (imports its module)."""
    if name.startswith(SRBENCH_PREFIX):
        # one adapter for every folder
        from engine.methods.srbench_dir import SRBenchMethod

        return SRBenchMethod(Path(name[len(SRBENCH_PREFIX) :]))
    target = BUILTIN.get(name)
    if target is None:
        raise MethodError(f"unknown method {quoted(name)} (see `srtui methods list`){did_you_mean(name, names())}")
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MethodError(f"method {name!r} cannot be loaded: {exc}") from None
    method: Method = getattr(module, cls_name)()
    return method
