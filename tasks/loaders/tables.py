"""Reading tabular data files into checked numeric arrays (shared by the PMLB and user loaders)."""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from srtui.engine.names import quoted, quoted_text
from srtui.engine.protocols import PARSE_EXACT, PARSE_PANDAS1, PARSES

if TYPE_CHECKING:  # annotations only; pandas is imported where it is used
    import pandas as pd

    from srtui.tasks.datafiles import Verified

from srtui.tasks.entry import TaskError


def read_table(path: Path | Verified, sep: str | None = None, parse: str = PARSE_EXACT) -> pd.DataFrame:
    """A CSV/TSV (optionally gzipped) as a DataFrame; one-line TaskError if unreadable. A
    ``Verified`` file is parsed from the bytes that were hashed, never read again. ``parse``
    PARSE_PANDAS1: the numbers as pandas 1.x's python engine made them (``srtui.tasks.loaders.pandas1``)."""
    if parse not in PARSES:
        raise TaskError(f"unknown data parse {quoted(parse)} (parses: {', '.join(PARSES)})")
    if parse == PARSE_PANDAS1:
        from srtui.tasks.loaders.pandas1 import pandas1_frame

        return pandas1_frame(_read(path, sep, as_text=True))
    return _read(path, sep, as_text=False)


def _read(path: Path | Verified, sep: str | None, as_text: bool) -> pd.DataFrame:
    """The table, its cells as text (``as_text``) or as pandas parses them."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    from srtui.tasks.datafiles import Verified

    name = Path(path.path if isinstance(path, Verified) else path).name
    if not isinstance(path, Verified) and not Path(path).is_file():
        raise TaskError(f"file not found: {path}")
    if sep is None:
        sep = "\t" if ".tsv" in name else ","
    dtype = str if as_text else None
    try:
        if isinstance(path, Verified):  # a buffer: its compression is told, not inferred
            gzip = name.endswith(".gz")
            return pd.read_csv(path.stream(), sep=sep, compression="gzip" if gzip else None, dtype=dtype)
        return pd.read_csv(path, sep=sep, dtype=dtype)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, EOFError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TaskError(f"{path}: not a readable table ({quoted_text(str(first))})") from None


def sanitise_names(columns: list[str]) -> dict[str, str]:
    """Map column names to distinct Python identifiers (ground truth is written over them)."""
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for col in columns:
        name = re.sub(r"\W", "_", str(col).strip()) or "x"
        if name[0].isdigit():
            name = f"x_{name}"
        if keyword.iskeyword(name) or name in {"pi", "E", "e", "I"}:
            name += "_"
        base, k = name, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        mapping[str(col)] = name
    return mapping


def numeric_xy(
    df: pd.DataFrame, target: str, where: str, min_rows: int = 2
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Feature columns, X and y of a table, refusing anything a regression method cannot take."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    if target not in df.columns:
        raise TaskError(f"{where}: no target column {quoted(target)} (columns: {', '.join(map(str, df.columns[:12]))})")
    features = [c for c in df.columns if c != target]
    if not features:
        raise TaskError(f"{where}: no feature columns besides the target {quoted(target)}")
    if len(df) < min_rows:
        raise TaskError(f"{where}: {len(df)} row(s); need at least {min_rows}")
    for col in df.columns:
        values = pd.to_numeric(df[col], errors="coerce")
        bad = values.isna() & df[col].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise TaskError(
                f"{where}: column {quoted(col)} is not numeric (row {row + 2}: {quoted(df[col].iloc[row])})"
            )
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise TaskError(f"{where}: column {quoted(col)} has a missing value (row {row + 2})")
        if not np.isfinite(values.to_numpy(dtype=float)).all():
            raise TaskError(f"{where}: column {quoted(col)} has an infinite value")
    X = df[features].apply(pd.to_numeric).to_numpy(dtype=float)
    y = pd.to_numeric(df[target]).to_numpy(dtype=float)
    return [str(f) for f in features], X, y
