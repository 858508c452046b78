"""Export a task as plain CSV files for other tools."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from srtui.tasks.model import Task


def export_task(task: Task, out: Path) -> list[Path]:
    """``train.csv`` and ``test.csv`` (features, then the target; ``date`` first for time series)
    and ``task.json`` (the summary: ground truth, split, provenance). Returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for part, X, y, dates in (
        ("train", task.X_train, task.y_train, task.dates_train),
        ("test", task.X_test, task.y_test, task.dates_test),
    ):
        df = pd.DataFrame(X, columns=task.feature_names)
        df[task.target_name] = y
        if dates is not None:
            df.insert(0, "date", dates)
        path = out / f"{part}.csv"
        df.to_csv(path, index=False, float_format="%.17g")  # round-trips float64 exactly
        written.append(path)
    meta = out / "task.json"
    meta.write_text(json.dumps({**task.summary(), "fingerprint": task.fingerprint()}, indent=1, default=str))
    written.append(meta)
    return written
