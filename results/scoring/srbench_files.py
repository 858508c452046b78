"""SRBench's own result files as a runs table: a directory (or one file) of ``evaluate_model.py``
JSON results, one per run, from any release (2021 ``master``, 2022 ``srcomp``, 2.0
``srbench_2025``).

Keys read (the rest, e.g. ``params``, ``y_pred_test``, are left out):

==============================  ==============================================================
dataset, algorithm              task, method
random_state                    seed
r2_test, r2_train, mse_*, ...   as they are
model_size                      size (2021, 2.0: the sympy node count of the model)
simplicity                      simplicity (2022: round(-log5(size), 1); 2.0: its own)
symbolic_model, true_model      model, ground_truth
time_time                       wall_s
target_noise                    noise
symbolic_equivalence            2022: ``equivalent`` -> symbolic_solution
feature_absence_score           2022: feature_absence
symbolic_error_is_zero, ...     2021: symbolic_solution = any of ``symbolic_error_is_zero``,
                                ``symbolic_error_is_constant``, ``symbolic_fraction_is_constant``
                                and a simplified model that is not missing, '0' or 'nan'
==============================  ==============================================================

A 2022 stage-1 dataset name ``SEED_KIND_LEVEL_data`` (the seed made the data) becomes task
``KIND_LEVEL_data`` with that seed, and its property follows ``stage1.ipynb`` (``seir``/
``exact_formula``: exact_rediscovery; ``localopt``/``featureselection``: feature_absence; else R2).
Every file that is read is a finished run (SRBench writes none for a failed one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from srtui.engine.errors import SrtuiError

RENAME: dict[str, str] = {
    "dataset": "task",
    "algorithm": "method",
    "random_state": "seed",
    "model_size": "size",
    "symbolic_model": "model",
    "true_model": "ground_truth",
    "time_time": "wall_s",
    "target_noise": "noise",
    "feature_absence_score": "feature_absence",
}
SKIP = ("params", "y_true_", "y_pred_", "idx_")
STAGE1 = re.compile(r"^(\d+)_((seir|exact_formula|localopt|featureselection|extrapolation|noise).*)$")
SOLVED_2021 = ("symbolic_error_is_zero", "symbolic_error_is_constant", "symbolic_fraction_is_constant")


class SRBenchFileError(SrtuiError, ValueError):
    """A result file that cannot be read; one line for the CLI."""


def _record(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as exc:
        raise SRBenchFileError(f"{path}: not a readable JSON result ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict) or "dataset" not in data or "algorithm" not in data:
        raise SRBenchFileError(f"{path}: not an SRBench evaluate_model.py result (no dataset/algorithm keys)")
    # JSON keys are strings
    out = {
        RENAME.get(str(k), str(k)): v
        for k, v in data.items()
        if not k.startswith(SKIP) and not isinstance(v, (list, dict))
    }
    eq = data.get("symbolic_equivalence")
    if isinstance(eq, dict) and "equivalent" in eq:
        out["symbolic_solution"] = int(bool(eq["equivalent"]))
    if any(k in data for k in SOLVED_2021):
        simplified = str(data.get("simplified_symbolic_model"))
        out["symbolic_solution"] = int(
            any(bool(data.get(k)) for k in SOLVED_2021)
            and data.get("simplified_symbolic_model") is not None
            and simplified not in ("0", "nan")
        )
    return out


def _stage1_names(df: pd.DataFrame) -> pd.DataFrame:
    """stage1.ipynb's name fixes: '_base' -> '_easy', a cut-off '_d' -> '_data', the seed prefix."""
    names = df["task"].astype(str).str.replace("_base", "_easy", regex=False)
    names = names.where(~names.str.endswith("_d"), names + "ata")
    parts = names.str.extract(STAGE1)
    is_stage1 = parts[0].notna()
    if is_stage1.any():
        df.loc[is_stage1, "seed"] = parts.loc[is_stage1, 0].astype(int)
        df.loc[is_stage1, "task"] = parts.loc[is_stage1, 1]
        kind = parts.loc[is_stage1, 2]
        prop = np.select(
            [kind.isin(["seir", "exact_formula"]), kind.isin(["localopt", "featureselection"])],
            ["exact_rediscovery", "feature_absence"],
            "accuracy",
        )
        if "property" not in df.columns:
            df["property"] = None
        df.loc[is_stage1, "property"] = prop
    return df


def read_results(path: str | Path) -> pd.DataFrame:
    """Every ``*.json`` under ``path`` (or the one file) as one row per run (not normalised)."""
    path = Path(path)
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    if not files:
        raise SRBenchFileError(f"{path}: no .json result files in this directory")
    df = pd.DataFrame([_record(f) for f in files])
    df["status"] = "ok"
    return _stage1_names(df)
