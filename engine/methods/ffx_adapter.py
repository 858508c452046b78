"""FFX (McConaghy 2011): fast function extraction by pathwise elastic net over generated bases.

Deterministic and usually fast, but with no time limit of its own (the launcher's wall limit
applies). The model is printed from FFX's own bases and coefficients rather than ``str(model)``:
FFX's printer rounds hinge thresholds to 3 digits while ``simulate`` uses them unrounded, and
its variable renaming is a plain string replace (``x1`` inside ``x10``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from srtui.engine.methods.base import FittedModel, Method, ParetoPoint, builtin
from srtui.engine.spec import FitBudget


def _base(base: Any, names: Sequence[str]) -> str:
    """One FFX basis function as a python-dialect string (mirrors ffx/core/bases.py simulate)."""
    from ffx.core import bases
    from ffx.core.constants import OP_ABS, OP_GTH, OP_LOG10, OP_LTH, OP_MAX0, OP_MIN0

    if isinstance(base, bases.SimpleBase):
        name = names[base.var]
        return name if base.exponent == 1 else f"{name}**({float(base.exponent)!r})"
    if isinstance(base, bases.ProductBase):
        return f"({_base(base.base1, names)})*({_base(base.base2, names)})"
    if isinstance(base, bases.OperatorBase):
        # each operator as a format of its argument (x) and threshold (t)
        forms = {
            OP_ABS: "abs({x})",
            OP_MAX0: "max(0, {x})",
            OP_MIN0: "min(0, {x})",
            OP_LOG10: "log10({x})",
            OP_GTH: "max(0, {t} - ({x}))",
            OP_LTH: "max(0, ({x}) - {t})",
        }
        form = forms.get(base.nonlin_op)
        if form is not None:
            thr = "" if base.thr is None else repr(float(base.thr))  # None or inf where the operator has none
            return form.format(x=_base(base.simple_base, names), t=thr)
    raise ValueError(f"unknown FFX basis {type(base).__name__}")


def model_expression(model: Any, names: Sequence[str]) -> str:
    """Full FFX model ``(c0 + c1*b1 + ...) / (1 + d1*e1 + ...)`` over ``names``."""
    if not hasattr(model, "coefs_n"):  # ConstantModel
        return repr(float(model.constant))
    numer = [repr(float(model.coefs_n[0]))]
    numer += [f"{float(c)!r}*({_base(b, names)})" for c, b in zip(model.coefs_n[1:], model.bases_n)]
    text = " + ".join(numer)
    if model.bases_d:
        denom = ["1.0"] + [f"{float(c)!r}*({_base(b, names)})" for c, b in zip(model.coefs_d, model.bases_d)]
        text = f"({text}) / ({' + '.join(denom)})"
    return text


@builtin(default_sr=True)
class FFX(Method):
    name = "ffx"
    family = "sr"
    fork_safe = True  # pure Python over numpy and scikit-learn
    licence = "MIT (ffx)"
    honours_time_limit = False  # no clock of its own; fast on small data
    requires = ("ffx", "six")  # ffx imports six without declaring it
    preload_modules = ("sklearn", "ffx.core.model_factories")
    install_hint = "pip install ffx six"
    default_params: ClassVar[dict[str, Any]] = {}

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        feature_names: Sequence[str],
        seed: int,
        fit_budget: FitBudget,
        params: dict[str, Any],
    ) -> FittedModel:
        import numpy as np
        import sklearn
        from ffx.core.model_factories import MultiFFXModelFactory

        if params:
            raise ValueError(f"ffx takes no parameters, got {sorted(params)}")
        names = list(feature_names)
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        # FFX makes thousands of tiny ElasticNet fits; scikit-learn's per-call checks are a
        # fifth of its run time and its bases are finite by construction (same models either way)
        with warnings.catch_warnings(), sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
            # elastic-net convergence warnings along the path are expected and flood the log
            warnings.simplefilter("ignore")
            # as ffx.FFXRegressor does: train = test, models sorted by number of bases
            models = MultiFFXModelFactory().build(X, y, X, y, names, verbose=False)
        best = models[-1]  # the most accurate non-dominated model (FFXRegressor's choice)
        pareto = []
        for m in models:
            loss = float(np.mean((m.simulate(X) - y) ** 2))
            pareto.append(ParetoPoint(model_expression(m, names), float(m.complexity()), loss))
        return FittedModel(
            predict=best.simulate,
            expression=model_expression(best, names),
            dialect="python",
            pareto=pareto,
            notes={"num_bases": int(best.numBases()) if hasattr(best, "numBases") else 0},
        )
