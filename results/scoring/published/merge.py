"""The workspace's runs and the published ones in one runs table, with a ``source`` column.

``merged_runs`` is the one function the CLI, the app and figures call: it returns the merged runs
(``source`` is ``this workspace`` or ``published: <release>``, ``srtui_method`` the srtui method a
published one stands for), the citations, one warning line per protocol difference and the notes
saying which value a rule takes where it wants per-seed values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.published import compare
from srtui.results.scoring.published.read import PublishedError, energy_rows, locate, read_file, rows
from srtui.results.scoring.published.sources import RULE_TRACKS, SOURCES, PublishedFile, Source

if TYPE_CHECKING:
    from srtui.results.store.store import Store

WORKSPACE = "this workspace"
CITATION = "cite: La Cava et al., NeurIPS 2021 Datasets and Benchmarks (results/scoring/published/data/CITATION.md)"
_METRICS = ("size", "size_simplified", "symbolic_solution")  # filled into the release columns


@dataclass
class Merged:
    runs: pd.DataFrame
    sources: dict[str, str] = field(default_factory=dict)  # source label -> citation
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: datasets one side ran and the other did not, left out of every rank (``dataset``, ``left_out``)
    left_out: pd.DataFrame = field(default_factory=pd.DataFrame)


def rules_with_sources() -> tuple[str, ...]:
    return tuple(RULE_TRACKS)


def figure_without_source(kind: str, rule: str) -> str:
    """Why figure ``kind`` (of ``rule``) is not drawn beside published results, or "": a rule with
    no published source would rank the published methods on values they do not have."""
    if rule in RULE_TRACKS:
        return ""
    return f"figure {kind!r} draws rule {rule!r}, which has no published source (--published)"


def parse_sources(text: str | None, rule: str) -> list[Source]:
    """``--published`` (None or "" for the rule's default): source names, or paths of tables in a
    published schema (then labelled by the file's name)."""
    if rule not in RULE_TRACKS:
        raise PublishedError(f"rule {rule!r} takes no published source (rules that do: {', '.join(RULE_TRACKS)})")
    tracks, default = RULE_TRACKS[rule]
    out = []
    given = [n.strip() for n in (text or "").split(",") if n.strip()] or ["default"]
    for name in [n for g in given for n in (default if g == "default" else (g,))]:
        if name in SOURCES:
            out.append(SOURCES[name])
        elif Path(name).suffix in (".csv", ".feather") and Path(name).is_file():
            release = "srbench2025" if rule == "srbench2025" else "srbench2021"
            pf = PublishedFile(tracks[0], name, "", per_run=Path(name).suffix == ".feather")
            out.append(Source(name, Path(name).name, release, (pf,)))
        else:
            raise PublishedError(
                f"unknown published source {name!r} (sources: {', '.join(SOURCES)}, or a .csv/.feather file)"
            )
    return out


def _track(source: Source, rule: str, runs: pd.DataFrame) -> PublishedFile | None:
    tracks = RULE_TRACKS[rule][0]
    if "track" in runs.columns and runs["track"].astype(str).str.contains("firstprinciples").any():
        tracks = tuple(sorted(tracks, key=lambda t: t != "first-principles"))
    return next((f for t in tracks if (f := source.file_for(t)) is not None), None)


def _aliases(store: Store | None) -> dict[tuple[str, float], str]:
    """(PMLB dataset, noise) -> the workspace task built from that PMLB file (its provenance)."""
    if store is None:
        return {}
    out = {}
    for task, info in store.conn.execute("SELECT task, info FROM task_info"):
        try:
            data = json.loads(info or "{}")
        except ValueError:
            continue
        prov = data.get("provenance") or {}
        stem = Path(str(prov.get("file") or "")).name.removesuffix(".tsv.gz")
        if prov.get("source") == "PMLB" and stem:
            out[(stem, float(data.get("noise") or 0.0))] = str(task)
    return out


def _load(source: Source, pf: PublishedFile, cache_dir: Path | None, data_dir: Path | None) -> pd.DataFrame:
    df = rows(read_file(locate(pf, cache_dir, data_dir)), pf.track, source.release, pf.per_run)
    energy = source.file_for("energy")
    if pf.track == "black-box" and energy is not None:
        cost = energy_rows(read_file(locate(energy, cache_dir, data_dir)))
        df = df.drop(columns=[c for c in ("energy_j", "energy_method") if c in df.columns])
        df = df.merge(cost, on=["method", "dataset", "seed"], how="left")
    return df.assign(source=source.source_label)


def merged_runs(
    rule: str,
    published: str | None,
    runs: pd.DataFrame,
    *,
    store: Store | None = None,
    suite: str | None = None,
    cache_dir: Path | None = None,
    data_dir: Path | None = None,
    profile: Profile | None = None,
) -> Merged:
    """The workspace's ``runs`` (may be empty) and the published sources ``published`` in one table."""
    from srtui.results.scoring.tables import normalise

    merged = Merged(pd.DataFrame())
    frames, aliases = [], _aliases(store)
    for source in parse_sources(published, rule):
        pf = _track(source, rule, runs)
        if pf is None:
            raise PublishedError(f"source {source.name!r} has no table for rule {rule!r}")
        df = _load(source, pf, cache_dir, data_dir)
        if not runs.empty:
            df = _pair_by_file_name(df, set(runs["method"]), source.release)
        if aliases:
            df["task"] = [aliases.get((d, n), t) for d, n, t in zip(df["dataset"], df["noise"], df["task"])]
        frames.append(df)
        merged.sources[source.source_label] = CITATION if source.name in SOURCES else f"file {source.name}"
        merged.notes += _value_notes(rule, source, pf)
        if not runs.empty and pf.protocol is not None and store is not None:
            facts = compare.facts(store, suite, runs, pf.protocol.train_cap)
            merged.warnings += compare.differences(facts, pf.protocol, source.label, profile)
    pub = pd.concat(frames, ignore_index=True)
    if not runs.empty:
        runs, pub = _intersection(runs, pub, merged)
    mine = runs.assign(source=WORKSPACE) if not runs.empty else runs
    pub["method"] = _labels(pub, set(mine["method"]) if not mine.empty else set())
    out = normalise(pd.concat([mine, pub], ignore_index=True) if not mine.empty else pub)
    merged.runs = _fill_release_columns(out)
    return merged


def _pair_by_file_name(pub: pd.DataFrame, workspace_methods: set[str], release: str) -> pd.DataFrame:
    """Published rows stand for the workspace's method file or folder whose name SRBench published
    them under (``SGDRegressor.py`` -> 2021's "Linear"): the very code that made them, so it takes
    the place of a built-in stand-in (``sgd``) in ``srtui_method`` and in ``published_pairs``."""
    from srtui.results.scoring.published import names

    by_name: dict[str, str] = {}
    for m in sorted(workspace_methods):
        by_name.setdefault(names.file_published_name(m, release), m)
    mapped = {p: by_name.get(names.clean_method(p)) for p in pub["method"].unique()}
    pub = pub.copy()
    pub["srtui_method"] = [mapped[p] or s for p, s in zip(pub["method"], pub["srtui_method"])]
    return pub


#: left-out datasets named in a warning line; the ``left_out`` table lists all of them
SHOWN = 8


def _intersection(runs: pd.DataFrame, pub: pd.DataFrame, merged: Merged) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sides cut to the datasets both ran: every rank, median, front and figure is over the
    same datasets. What is left out is said in one warning line and listed in ``left_out``; with
    no dataset in common the published rows are left out (nothing compares like for like)."""
    mine, published = set(runs["task"]), set(pub["task"])
    shared = mine & published
    only_pub, only_mine = sorted(published - shared), sorted(mine - shared)
    merged.left_out = pd.DataFrame(
        [(t, "published, not run here") for t in only_pub] + [(t, "run here, not published") for t in only_mine],
        columns=["dataset", "left_out"],
    )
    if not shared:
        merged.warnings.append(
            f"datasets: none of this workspace's {len(mine)} task(s) is a published dataset; the published "
            f"results ({len(published)} datasets) are left out: nothing to compare like for like"
        )
        return runs, pub.iloc[0:0]
    if only_pub or only_mine:
        parts = []
        if only_pub:
            parts.append(f"{len(only_pub)} published dataset(s) not run here ({_names(only_pub)})")
        if only_mine:
            parts.append(f"{len(only_mine)} task(s) of this workspace not published ({_names(only_mine)})")
        merged.warnings.append(
            f"datasets: ranks, medians and fronts are over the {len(shared)} dataset(s) both sides ran; "
            f"left out: {'; '.join(parts)}"
        )
    return runs[runs["task"].isin(shared)], pub[pub["task"].isin(shared)]


def _names(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (
        f", ... ({len(names) - SHOWN} more: table left_out)" if len(names) > SHOWN else ""
    )


def _labels(pub: pd.DataFrame, workspace_methods: set[str]) -> list[str]:
    """A published method keeps its name, unless a workspace method or another source has it."""
    per_source = pub.groupby("method")["source"].nunique()
    return [
        f"{m} ({s.removeprefix('published: ')})" if m in workspace_methods or per_source[m] > 1 else m
        for m, s in zip(pub["method"], pub["source"])
    ]


def _fill_release_columns(runs: pd.DataFrame) -> pd.DataFrame:
    """Published rows carry plain ``size``/``symbolic_solution``: copy them into the release
    columns (``srbench2021.size``, ...) the rules read first, so both kinds of row are scored."""
    published = runs["source"] != WORKSPACE
    for col in list(runs.columns):
        base = col.split(".", 1)[-1].split(":", 1)[0]
        if "." in col and base in _METRICS and base in runs.columns:
            runs.loc[published, col] = runs.loc[published, base]
    return runs


def _value_notes(rule: str, source: Source, pf: PublishedFile) -> list[str]:
    """Which published value stands where a rule wants per-seed values."""
    if pf.per_run:
        return []
    if rule == "srbench-groundtruth":
        return [
            f"{source.label}: one rate per dataset and noise (the mean over its seeds, genCSVs.py) "
            "taken as one value; its table has noise 0, 0.001 and 0.01 only"
        ]
    seeds = pf.protocol.seeds if pf.protocol else "its"
    if rule == "srbench2025":
        return [f"{source.label}: one median over {seeds} seeds per dataset, used as one seed in the per-seed curves"]
    return [f"{source.label}: one median over {seeds} seeds per dataset (docs/csv), which the rule's median keeps"]


def per_source_failures(runs: pd.DataFrame) -> pd.Series:
    """Failed runs per method, per source (a run never attempted is no failure: the columns
    ``missing``/``pending`` of srtui.results.scoring.coverage count those)."""
    from srtui.results.scoring.base import failures

    parts = [failures(part, "r2_test") for _, part in runs.groupby("source")]
    return pd.concat(parts) if parts else pd.Series(dtype=int)


def pairs(runs: pd.DataFrame, size: str | None = None) -> pd.DataFrame:
    """Per dataset, a workspace method's median test R2 (and size) beside the published method
    that maps to it (``sgd`` beside 2021's ``Linear``)."""
    cols = ["r2_test"] + ([size] if size and size in runs.columns else [])
    ok = runs[(runs["status"] == "ok")]
    med = ok.groupby(["source", "method", "task"])[cols].median().reset_index()
    mine, pub = med[med["source"] == WORKSPACE], med[med["source"] != WORKSPACE]
    maps = runs.loc[runs["source"] != WORKSPACE, ["method", "srtui_method"]].drop_duplicates()
    pub = pub.merge(maps, on="method").rename(columns={"method": "published_method", "srtui_method": "method"})
    out = mine.drop(columns="source").merge(pub, on=["method", "task"], suffixes=("", "_published"))
    if out.empty:
        return pd.DataFrame(columns=["task", "method", "published_method", "source", *cols])
    out = out.rename(columns={"source": "published_source"})
    ordered = ["task", "method", "published_method", "published_source"]
    ordered += [c for c in out.columns if c not in ordered]
    return out[ordered].sort_values(["method", "task"]).reset_index(drop=True).replace([np.inf, -np.inf], np.nan)
