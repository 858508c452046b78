"""Method registry: name -> adapter class, imported lazily.

Listing methods must not import their packages (pyoperon, jax, ...): the driver stays light and
a broken optional install cannot take the CLI down. Each entry names ``module:Class``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from srtui.engine.errors import SrtuiError, did_you_mean
from srtui.engine.methods.base import Method
from srtui.engine.names import quoted


class MethodError(SrtuiError, ValueError):
    """An unknown or unloadable method; the message is one line for the CLI."""


BUILTIN: dict[str, str] = {
    # probes: self-tests of the engine, runnable by name, in no default suite
    "probe-noop": "srtui.engine.methods.probes:Noop",
    "probe-sleep": "srtui.engine.methods.probes:Sleep",
    "probe-memhog": "srtui.engine.methods.probes:MemHog",
    "probe-crash": "srtui.engine.methods.probes:Crash",
    "probe-escape": "srtui.engine.methods.probes:Escape",
    "probe-forks": "srtui.engine.methods.probes:Forks",
    "probe-forkloop": "srtui.engine.methods.probes:ForkLoop",
    "probe-badmodel": "srtui.engine.methods.probes:BadModel",
    # scikit-learn baselines: exported symbolically ...
    "dummy": "srtui.engine.methods.sklearn_baselines:Dummy",
    "linear": "srtui.engine.methods.sklearn_baselines:Linear",
    "sgd": "srtui.engine.methods.sklearn_baselines:SGD",
    "sgd-sklearn024": "srtui.engine.methods.sklearn_baselines:SGDSklearn024",
    "lasso": "srtui.engine.methods.sklearn_baselines:Lasso",
    "ridge": "srtui.engine.methods.sklearn_baselines:Ridge",
    "poly2": "srtui.engine.methods.sklearn_baselines:Poly2",
    # ... and black-box (accuracy only)
    "rf": "srtui.engine.methods.sklearn_baselines:RandomForest",
    "gbr": "srtui.engine.methods.sklearn_baselines:GradientBoosting",
    "mlp": "srtui.engine.methods.sklearn_baselines:MLP",
    "knn": "srtui.engine.methods.sklearn_baselines:KNN",
    # symbolic regression, installed with srtui
    "pyoperon": "srtui.engine.methods.operon:Operon",
    "gplearn": "srtui.engine.methods.gplearn_adapter:Gplearn",
    "ffx": "srtui.engine.methods.ffx_adapter:FFX",
    # optional extras (`srtui methods install NAME`); their packages are imported only in fit
    "rils-rols": "srtui.engine.methods.optional:RilsRols",
    "hroch": "srtui.engine.methods.optional:Hroch",
    "feyn": "srtui.engine.methods.optional:Feyn",
    "bingo": "srtui.engine.methods.optional:Bingo",
    "itea": "srtui.engine.methods.optional:Itea",
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
        from srtui.engine.methods.srbench_dir import SRBenchMethod

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
