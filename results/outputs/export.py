"""Render scores and run tables as text: terminal table, CSV, Markdown, LaTeX or JSON.

Every output carries the rule's name, its profile (reference or corrected, for the rules of a
published release), its options and srtui's version (comment lines in CSV and LaTeX, a heading in
Markdown, fields in JSON). CSV written to files (``csv_files``) is plain, one table a file that
``pandas.read_csv`` reads as it is, with that provenance in a sidecar ``NAME.meta.json``.
LaTeX and Markdown are written column-wise here
because pandas' ``to_latex``/``to_markdown`` take 30 s / 15 s for 100,000 rows (the export target
is under 10 s); CSV and JSON use pandas.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from srtui.engine.errors import SrtuiError, did_you_mean
from srtui.engine.names import safe_file_name
from srtui.engine.textsafe import csv_cell, encodable, visible
from srtui.results.scoring.base import Score

FORMATS = ("table", "csv", "md", "latex", "json")
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


class ExportError(SrtuiError, ValueError):
    pass


def srtui_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("srtui")
    except metadata.PackageNotFoundError:
        return "0.0.0+src"


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def _cells(col: pd.Series, missing: str, escape: Callable[[str], str]) -> list[str]:
    """One column as strings: floats to 4 significant digits, text escaped (once per distinct value)."""
    if pd.api.types.is_bool_dtype(col):
        return ["yes" if v else "no" for v in col]
    if pd.api.types.is_float_dtype(col):
        return [missing if not math.isfinite(v) else f"{v:.4g}" for v in col.to_numpy(dtype=float)]
    if pd.api.types.is_integer_dtype(col):
        return [str(v) for v in col.to_numpy()]
    uniq: dict[Any, str] = {}
    out = []
    for v in col.to_numpy(dtype=object):
        if v is None or (isinstance(v, float) and not math.isfinite(v)) or v is pd.NA:
            out.append(missing)
            continue
        if isinstance(v, float):
            out.append(f"{v:.4g}")
            continue
        s = uniq.get(v)
        if s is None:
            s = uniq[v] = escape(str(v))
        out.append(s)
    return out


LATEX_MARK = r"\textsuperscript{\dag}"
MD_MARK = "†"


def published_rows(df: pd.DataFrame) -> list[bool]:
    """Which rows come from a publication (``source`` column ``published: ...``, srtui.results.scoring.published)."""
    if "source" not in df.columns:
        return [False] * len(df)
    return [isinstance(v, str) and v.startswith("published:") for v in df["source"]]


def _marked(df: pd.DataFrame, cols: list[list[str]], mark: str) -> list[list[str]]:
    """The method cell of each published row gets ``mark`` (the footnote under the table says why)."""
    flags = published_rows(df)
    if "method" in df.columns and any(flags):
        at = list(df.columns).index("method")
        cols[at] = [c + mark if f else c for c, f in zip(cols[at], flags)]
    return cols


def latex_body(df: pd.DataFrame) -> str:
    """A ``tabular`` (booktabs rules): one row per line, the same number of cells in every row."""
    align = "".join(
        "r" if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) else "l"
        for c in df.columns
    )
    cols = _marked(df, [_cells(df[c], "--", latex_escape) for c in df.columns], LATEX_MARK)
    lines = [
        f"\\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in df.columns) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(row) + r" \\" for row in zip(*cols)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return text.replace("|", r"\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    cols = _marked(df, [_cells(df[c], "", _md_escape) for c in df.columns], MD_MARK)
    lines = [
        "| " + " | ".join(_md_escape(str(c)) for c in df.columns) + " |",
        "|" + "|".join("---:" if pd.api.types.is_numeric_dtype(df[c]) else ":---" for c in df.columns) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*cols)]
    return "\n".join(lines)


def _meta(rule: str, options: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in options.items() if k != "profile"}
    return {"rule": rule, "profile": options.get("profile"), "options": rest, "srtui_version": srtui_version()}


def _header(meta: dict[str, Any]) -> str:
    opts = ", ".join(f"{k}={v}" for k, v in meta["options"].items()) or "none"
    profile = f"profile: {meta['profile']}; " if meta["profile"] else ""
    return f"{meta['rule']} ({profile}options: {opts}; srtui {meta['srtui_version']})"


def _json_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    clean = df.astype(object).where(df.notna(), None)
    clean = clean.replace([np.inf, -np.inf], None)
    records: list[dict[str, Any]] = json.loads(clean.to_json(orient="records"))
    return records


def _safe_text(df: pd.DataFrame, cell: Callable[[Any], Any]) -> pd.DataFrame:
    """``cell`` applied to the text cells and the column names (numeric columns untouched, so
    ``-1.5`` stays a number); untrusted names and models reach no terminal or spreadsheet raw."""
    out = df.rename(columns=lambda c: cell(c) if isinstance(c, str) else c)
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: cell(v) if isinstance(v, str) else v, na_action="ignore")
    return out


def render_tables(
    tables: dict[str, pd.DataFrame],
    fmt: str,
    rule: str,
    options: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    *,
    raw: bool = False,
    warnings: list[str] | None = None,
    sources: dict[str, str] | None = None,
) -> str:
    """Several named tables of one rule (or of an export) in one text document.

    Text is made visible (srtui.engine.textsafe) in every format but JSON, whose escaping already is;
    CSV text cells that a spreadsheet would run as formulas are neutralised unless ``raw``.
    ``warnings`` (one line each) and the published ``sources`` (label -> citation, the footnote of
    the rows marked † in Markdown and LaTeX) come under the tables."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r} (formats: {', '.join(FORMATS)}){did_you_mean(fmt, FORMATS)}")
    meta = _meta(rule, options or {})
    meta["notes"] = list(notes or [])  # always there, empty or not: a reader's code needs no guard
    if warnings:
        meta["warnings"] = list(warnings)
    if sources:
        meta["sources"] = dict(sources)
    body = _render(tables, fmt, meta, notes, raw)
    return body + _footer(fmt, warnings or [], sources or {})


def _footer(fmt: str, warnings: list[str], sources: dict[str, str]) -> str:
    """Under the tables: the published rows' footnote, then one line per comparability warning."""
    if fmt == "json" or not (warnings or sources):
        return ""
    foot = [f"{label}: not run here; {cite}" for label, cite in sources.items()]
    lines = [visible(x, one_line=True) for x in foot]
    warn = [visible(w, one_line=True) for w in warnings]
    if fmt == "latex":
        out = [r"\par\smallskip{\footnotesize " + LATEX_MARK + " " + latex_escape(x) + "}" for x in lines]
        return "\n".join(out + [f"% warning: {w}" for w in warn]) + "\n"
    if fmt == "md":
        return "\n" + "\n".join([f"{MD_MARK} {x}  " for x in lines] + [f"> warning: {w}  " for w in warn]) + "\n"
    prefix = "# " if fmt == "csv" else ""
    return "".join(f"{prefix}source {x}\n" for x in lines) + "".join(f"{prefix}warning: {w}\n" for w in warn)


def _render(tables: dict[str, pd.DataFrame], fmt: str, meta: dict[str, Any], notes: list[str] | None, raw: bool) -> str:
    head = visible(_header(meta), one_line=True) + "".join(f"\nnote: {visible(n, one_line=True)}" for n in notes or [])
    if fmt in ("csv", "latex"):
        head = head.replace("\nnote: ", "\n# note: " if fmt == "csv" else "\n% note: ")
    if fmt == "json":
        return json.dumps(
            {**meta, "tables": {k: _json_records(v) for k, v in tables.items()}}, indent=1, default=str, allow_nan=False
        )
    cell = (lambda v: csv_cell(v, raw=raw)) if fmt == "csv" else visible
    tables = {visible(k, one_line=True): _safe_text(df, cell) for k, df in tables.items()}
    parts = []
    if fmt == "csv":
        for name, df in tables.items():
            buf = io.StringIO()
            df.to_csv(buf, index=False, float_format="%.10g")
            parts.append(f"# {head}\n# table: {name}\n" + buf.getvalue())
        return "\n".join(parts)
    if fmt == "md":
        parts.append(f"## {head}")
        parts += [f"### {name}\n\n{markdown_table(df)}" for name, df in tables.items()]
        return "\n\n".join(parts) + "\n"
    if fmt == "latex":
        parts.append(f"% {head}\n% needs \\usepackage{{booktabs}} in the preamble (\\toprule, \\midrule, \\bottomrule)")
        parts += [f"% table: {name}\n{latex_body(df)}" for name, df in tables.items()]
        return "\n".join(parts) + "\n"
    parts.append(head)
    for name, df in tables.items():
        parts.append(f"\n{name}\n{df.to_string(index=False, float_format=lambda v: f'{v:.4g}', na_rep='--')}")
    return "\n".join(parts) + "\n"


def csv_files(
    name: str,
    tables: dict[str, pd.DataFrame],
    rule: str,
    options: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    *,
    raw: bool = False,
    warnings: list[str] | None = None,
    sources: dict[str, str] | None = None,
) -> dict[str, str]:
    """File name -> text: the first table as ``NAME.csv``, each other as ``NAME.TABLE.csv``, all
    plain CSV (a header, then rows; no comment lines), and ``NAME.meta.json``: the rule, profile,
    options, notes, warnings, published sources, srtui's version and which file holds which table."""
    meta = _meta(rule, options or {})
    meta.update(notes=list(notes or []), warnings=list(warnings or []), sources=dict(sources or {}))
    cell = lambda v: csv_cell(v, raw=raw)  # noqa: E731
    files: dict[str, str] = {}
    for i, (table, df) in enumerate(tables.items()):
        # the name the file gets on disk (srtui.engine.names.file_in), so the meta's map holds true
        file = safe_file_name(f"{name}.csv" if i == 0 else f"{name}.{visible(table, one_line=True)}.csv")
        buf = io.StringIO()
        _safe_text(df, cell).to_csv(buf, index=False, float_format="%.10g")
        files[file] = buf.getvalue()
    meta["tables"] = {visible(t, one_line=True): f for t, f in zip(tables, files)}
    files[f"{name}.meta.json"] = json.dumps(encodable(meta), indent=1, default=str) + "\n"
    return files


def score_csv_files(name: str, score: Score, *, raw: bool = False) -> dict[str, str]:
    return csv_files(
        name,
        score.tables,
        score.rule,
        score.options,
        score.notes,
        raw=raw,
        warnings=score.warnings,
        sources=score.sources,
    )


def render_score(score: Score, fmt: str, *, raw: bool = False) -> str:
    return render_tables(
        score.tables,
        fmt,
        score.rule,
        score.options,
        score.notes,
        raw=raw,
        warnings=score.warnings,
        sources=score.sources,
    )
