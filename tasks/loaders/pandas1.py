"""Numbers of a table as pandas 1.x read them: SRBench 2021's ``read_file`` under ``--protocol srbench2021``.

SRBench 2021 (``experiment/read_file.py``) reads a dataset with ``pd.read_csv(filename, sep=None,
compression=..., engine='python')`` and ``.values.astype(float)``. In pandas 1.x the python engine
turns a cell into a float with pandas' own converter (``to_double`` -> ``precise_xstrtod``, the C
engine's default ``float_precision='high'`` too), which is not correctly rounded; today's pandas
(3.x) parses every cell exactly and no longer offers the old converter (``float_precision`` is
deprecated and all its values give the exact parse). The rule, written here from pandas' source
and checked against pandas 1.5.3 bit for bit (``tests/unit/test_pandas1_floats.py``, and the 20
shared PMLB files' fingerprints in ``tests/data/pandas1_parse.json``):

1. the mantissa's digits, integer part then fraction, leading zeros included, are read left to
   right; the first 17 are accumulated in a double, ``number = number * 10.0 + digit`` (each step
   rounded), further integer digits add 1 to the exponent and further fraction digits are dropped
   (truncation, not rounding); each fraction digit read subtracts 1 from the exponent;
2. the sign is applied, then the written exponent (``e``/``E``, at most 17 digits) is added;
3. the number is scaled once by the correctly rounded double ``10**|exponent|`` (a multiplication
   for a positive exponent, a division for a negative one; below -308 two divisions, by
   ``10**(-308 - exponent)`` and ``10**308``; below -616 it is 0.0); beyond +308 it is no number.

The rule applies to a whole column or not at all, as pandas' ``maybe_convert_numeric`` does: a
column whose every cell is an integer literal (no ``.``, no exponent) stays integers (exact), and a
column with a cell the converter does not read (text, ``inf``, an exponent beyond 308) stays text,
which ``.astype(float)`` then parses exactly (here: left to the table's usual checks, which refuse
text and infinities). Missing cells (pandas' NA strings) are NaN either way.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: digits the converter accumulates (``max_digits``)
MAX_DIGITS = 17
#: a decimal literal as the converter reads it: sign, integer digits, fraction, exponent (C isspace)
_LITERAL = r"^[ \t\n\v\f\r]*([+-]?)([0-9]*)(\.[0-9]*)?(?:[eE]([+-]?[0-9]{1,17}))?[ \t\n\v\f\r]*$"


@lru_cache(maxsize=1)
def _powers() -> np.ndarray:
    """``10**k`` for k = 0..308 as the C compiler writes the literal ``1ek``: correctly rounded."""
    return np.array([float(f"1e{k}") for k in range(309)])


def pandas1_floats(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, read): each cell's float as pandas 1.x's converter makes it, and whether the cell
    is a decimal literal the converter reads (elsewhere the value is NaN)."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    parts = pd.Series(np.asarray(cells, dtype=object).ravel()).astype(str).str.extract(_LITERAL)
    integer, fraction = parts[1].fillna(""), parts[2].fillna("").str[1:]
    digits = integer + fraction
    read = parts[1].notna().to_numpy() & (digits.str.len().to_numpy() > 0)
    n_int = integer.str.len().to_numpy()
    used = np.minimum(digits.str.len().to_numpy(), MAX_DIGITS)
    written = pd.to_numeric(parts[3].where(read, "0").fillna("0")).to_numpy(dtype=np.int64)
    exponent = np.maximum(n_int - MAX_DIGITS, 0) - np.maximum(used - n_int, 0) + written
    padded = digits.where(read, "").str.slice(0, MAX_DIGITS).str.ljust(MAX_DIGITS, "0")
    matrix = np.frombuffer("".join(padded).encode("ascii"), dtype=np.uint8).reshape(-1, MAX_DIGITS) - ord("0")
    number = np.zeros(len(digits))
    for j in range(MAX_DIGITS):
        number = np.where(j < used, number * 10.0 + matrix[:, j], number)
    number = np.where(parts[0].to_numpy() == "-", -number, number)
    values = _scaled(number, exponent)
    read &= np.isfinite(values)  # beyond 1e308 the converter reports an error: no number
    return np.where(read, values, np.nan), read


def _scaled(number: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Step 3 of the rule: one multiplication or division by a correctly rounded power of ten."""
    powers = _powers()
    out = np.full(len(number), np.inf)
    with np.errstate(over="ignore"):
        up = (exponent > 0) & (exponent <= 308)
        out[up] = number[up] * powers[exponent[up]]
        down = (exponent <= 0) & (exponent >= -308)
        out[down] = number[down] / powers[-exponent[down]]
        sub = (exponent < -308) & (exponent >= -616)
        out[sub] = number[sub] / powers[-308 - exponent[sub]] / powers[308]
        out[exponent < -616] = 0.0
    return out


def pandas1_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A table read as text (``dtype=str``) with its numbers as pandas 1.x's python engine made
    them: a column of decimals becomes float64, an integer column and other cells stay text."""
    import pandas as pd

    out = {}
    for name in df.columns:
        cells = df[name].to_numpy(dtype=object)
        text = np.array([isinstance(c, str) for c in cells], dtype=bool)
        values, read = pandas1_floats(np.where(text, cells, "0"))
        decimal = any(("." in c or "e" in c or "E" in c) for c in cells[text])
        if not read.all() or not decimal:  # text, or integers only: left to the exact parse
            out[name] = df[name]
            continue
        out[name] = pd.Series(np.where(text, values, np.nan), index=df.index, dtype=float)
    return pd.DataFrame(out, index=df.index)
