"""R2, scikit-learn's definition, in numpy alone.

Its own module, outside ``srtui.engine.expression`` (whose package imports sympy): the driver's
recorder scores every finished job with it (srtui.results.metrics.accuracy), and importing the
parser there cost a ``methods check`` 0.2 s of CPU after its job had ended (issue 56).
"""

from __future__ import annotations

import numpy as np


def r2_score(truth: np.ndarray, pred: np.ndarray) -> float:
    """Coefficient of determination, scikit-learn's definition and its convention for a constant
    target (1.0 if predicted exactly, else 0.0), in numpy: the driver scores every job with it,
    and importing scikit-learn there would cost more than all the scoring."""
    if len(truth) < 2:
        return float("nan")
    ss_res = float(np.sum((truth - pred) ** 2))
    ss_tot = float(np.sum((truth - np.mean(truth)) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot
