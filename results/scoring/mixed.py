"""One protocol per leaderboard: the jobs' recorded protocols (``jobs.protocol``,
``srtui.engine.protocols.applied``) grouped by ``srtui.engine.protocols.protocol_key``.

A leaderboard whose workspace jobs ran under different protocols (a scaled run beside an unscaled
one, a tuned beside an untuned) is refused in one line; ``--allow-mixed`` scores it anyway and
marks every row with a footnote naming its protocol. Published rows (``source`` other than this
workspace) are not checked here: ``srtui.results.scoring.published`` lists how their protocol differs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from srtui.results.scoring.base import Score, ScoreError

if TYPE_CHECKING:
    import pandas as pd

WORKSPACE = "this workspace"  # srtui.results.scoring.published.merge.WORKSPACE (which imports this package)


def _key(text: Any) -> str:
    from srtui.engine.protocols import protocol_key

    try:
        record = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        record = None
    return protocol_key(record if isinstance(record, dict) else None)


def protocols_per_method(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Method -> the protocols its workspace jobs ran under (empty when the table records none:
    a CSV of another tool, published rows only)."""
    if "protocol" not in runs.columns or runs.empty:
        return {}
    mine = runs if "source" not in runs.columns else runs[runs["source"].isna() | (runs["source"] == WORKSPACE)]
    if mine.empty:
        return {}
    import pandas as pd

    # each distinct protocol text read once, each (method, text) pair looked at once, in the
    # order of the rows: a leaderboard's 100,000 jobs share a handful of protocols
    codes, texts = pd.factorize(mine["protocol"])
    keys = [*(_key(text) for text in texts), _key(None)]  # code -1: no protocol recorded
    pairs = pd.DataFrame({"method": mine["method"].astype(str).to_numpy(), "code": codes}).drop_duplicates()
    out: dict[str, list[str]] = {}
    for method, code in zip(pairs["method"], pairs["code"].tolist()):
        key = keys[code]
        if key not in out.setdefault(method, []):
            out[method].append(key)
    return out


def distinct(keys: dict[str, list[str]]) -> list[str]:
    return list(dict.fromkeys(k for ks in keys.values() for k in ks))


def check_one_protocol(keys: dict[str, list[str]], allow_mixed: bool) -> None:
    protocols = distinct(keys)
    if len(protocols) < 2 or allow_mixed:
        return
    parts = []
    for key in protocols:
        methods = [m for m, ks in keys.items() if key in ks]
        shown = ", ".join(methods[:4]) + (" ..." if len(methods) > 4 else "")
        parts.append(f"{key}: {shown}")
    raise ScoreError(
        f"jobs of {len(protocols)} protocols in one leaderboard ({'; '.join(parts)}): run them again under "
        "one protocol (or as a suite of their own), or give --allow-mixed to footnote each row"
    )


def footnote_protocols(result: Score, keys: dict[str, list[str]]) -> Score:
    """With several protocols: a ``protocol`` column of footnote marks in each table with a
    ``method`` column, and one note per mark."""
    protocols = distinct(keys)
    if len(protocols) < 2:
        return result
    marks = {key: f"[{i}]" for i, key in enumerate(protocols, 1)}
    per_method = {m: " ".join(marks[k] for k in ks) for m, ks in keys.items()}
    for name, table in list(result.tables.items()):
        if "method" in table.columns and "protocol" not in table.columns:
            table = table.copy()
            table.insert(list(table.columns).index("method") + 1, "protocol", table["method"].map(per_method))
            result.tables[name] = table
    result.notes = [
        *result.notes,
        "mixed protocols (--allow-mixed): rows ran under different protocols and do not compare like for like",
        *(f"{mark} {key}" for key, mark in marks.items()),
    ]
    return result
