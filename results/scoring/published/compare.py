"""Comparability: each way the workspace's runs differ from a published protocol, one line each.

The facts of the workspace come from its store (jobs: seeds, limits, params, data fingerprints,
method versions; task_info: training rows and split) and those of the publication from
``sources.Protocol``. ``--strict`` turns any difference into a refusal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pandas as pd

from srtui.engine.protocols import PARSE_EXACT, PARSES
from srtui.results.metrics.profiles import Profile
from srtui.results.scoring.published.sources import Protocol

if TYPE_CHECKING:
    from srtui.results.store.store import Store

_SKLEARN = re.compile(r"scikit-learn==([^\s,;]+)")


@dataclass
class Facts:
    """What the workspace's runs of one suite were made with."""

    seeds: float = 0.0  # median runs per (task, method)
    split_per_seed: bool = False
    split: str = ""
    max_train: int = 0
    big_tasks: list[str] = field(default_factory=list)  # tasks over the published training cap
    time_limits: set[float] = field(default_factory=set)
    tuned: bool = False
    scalings: set[str] = field(default_factory=set)
    sklearn: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    parses: set[str] = field(default_factory=set)  # how the jobs' data files were parsed (srtui.engine.protocols)
    #: methods whose srbench2021.size is srtui's count of their model's nodes (no 2021 definition)
    counted: set[str] = field(default_factory=set)


def _fmt_s(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


def facts(store: Store, suite: str | None, runs: pd.DataFrame, cap: int) -> Facts:
    from srtui.engine.scaling import SCALING_KEY
    from srtui.results.store.tuning import TUNING_SUFFIX

    f = Facts()
    if runs.empty:
        return f
    f.seeds = float(runs.groupby(["task", "method"])["seed"].nunique().median())
    where, args = ("WHERE suite = ?", (suite,)) if suite else ("WHERE suite NOT LIKE ?", (f"%{TUNING_SUFFIX}",))
    jobs = store.conn.execute(
        "SELECT task, seed, limits, params, data_fingerprint, method_version, protocol, method_notes, method "
        f"FROM jobs {where}",
        args,
    )
    prints: dict[str, set[str]] = {}
    for task, _seed, limits, params, fingerprint, version, protocol, notes, method in jobs:
        f.sklearn.update(_recorded_sklearn(notes))
        prints.setdefault(task, set()).add(fingerprint)
        f.parses.add(str(_json(protocol).get("data") or PARSES[PARSE_EXACT]))  # unrecorded: exact
        time_s = _json(limits).get("time_s")
        if isinstance(time_s, (int, float)):
            f.time_limits.add(float(time_s))
        f.scalings.add(str(_json(params).get(SCALING_KEY) or "none"))
        f.sklearn.update(_SKLEARN.findall(version or ""))
        # a folder's version names its file (regressor.py@150fe985a400): say whose it is (#55)
        named = str(version).startswith(("scikit-learn==", str(method)))
        f.versions.add(str(version) if named else f"{method} ({version})")
    f.split_per_seed = any(len(p) > 1 for p in prints.values())
    if suite:
        row = store.conn.execute("SELECT 1 FROM jobs WHERE suite = ? LIMIT 1", (suite + TUNING_SUFFIX,)).fetchone()
        f.tuned = row is not None
    infos = {t: _json(i) for t, i in store.conn.execute("SELECT task, info FROM task_info")}
    mine = [infos.get(t, {}) for t in runs["task"].unique()]
    rows = [int(i.get("n_train") or 0) for i in mine]
    f.max_train = max(rows, default=0)
    f.big_tasks = sorted(str(i.get("name")) for i in mine if cap and int(i.get("n_train") or 0) > cap)
    f.split = "; ".join(sorted({str(i.get("split")) for i in mine if i.get("split")}))[:120]
    f.counted = _counted_sizes(store, where, args)
    return f


def _recorded_sklearn(notes: Any) -> list[str]:
    """The scikit-learn the job's interpreter had, as the driver recorded it (srtui.engine.process.measure:
    a method file in its own environment says 0.24.1 there, whatever the driver has)."""
    found = _json(notes).get("versions")
    version = found.get("scikit-learn") if isinstance(found, dict) else None
    return [version] if isinstance(version, str) and version else []


def _counted_sizes(store: Store, where: str, args: tuple[str, ...]) -> set[str]:
    """The methods with a model whose 2021 size is the count of its nodes (srtui.results.metrics.compute)."""
    from srtui.results.metrics.compute import model_size_2021

    rows = store.conn.execute(
        f"SELECT method, dialect, method_notes FROM jobs {where} AND status = 'ok' AND model IS NOT NULL "
        "GROUP BY method, dialect",
        args,
    )
    return {m for m, d, n in rows if model_size_2021({"method": m, "dialect": d, "method_notes": n}, 1) is None}


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def differences(f: Facts, p: Protocol, label: str, profile: Profile | None) -> list[str]:
    """One line per difference between the workspace's runs and ``label``'s protocol ``p``."""
    out = []
    if f.seeds != p.seeds:
        out.append(f"seeds: {f.seeds:g} run(s) per dataset and method here (median); {label} ran {p.seeds}")
    if p.split == "per seed" and not f.split_per_seed:
        out.append(
            f"split: one split per dataset here ({f.split or 'the task split'}); "
            f"{label} drew a 75/25 split per seed (train_test_split, random_state = seed)"
        )
    if p.train_cap and f.big_tasks:
        shown = ", ".join(f.big_tasks[:3]) + (" ..." if len(f.big_tasks) > 3 else "")
        out.append(
            f"training cap: {label} trained on at most {p.train_cap:,} rows; here {len(f.big_tasks)} task(s) "
            f"train on more (up to {f.max_train:,}: {shown})"
        )
    limits = sorted(f.time_limits)
    if limits and limits != [p.time_s]:
        out.append(f"time limit: {', '.join(_fmt_s(t) for t in limits)} per run here; {label} gave {_fmt_s(p.time_s)}")
    if p.tuning == "search" and not f.tuned:
        out.append(f"tuning: {label} tuned each method per dataset (grid search, 5-fold CV); here no tuning")
    elif p.tuning == "fixed":
        how = "a search per dataset" if f.tuned else "the methods' default parameters"
        out.append(f"tuning: {label} used fixed tuned parameters (SRBench's tuned folders); here {how}")
    scalings = sorted(f.scalings) or ["none"]
    if scalings != [p.scaling]:
        out.append(f"scaling: {'/'.join(scalings)} here; {label} scaled {p.scaling} (StandardScaler)")
    if p.parse and f.parses and f.parses != {PARSES[p.parse]}:
        out.append(f"data: {'/'.join(sorted(f.parses))} here; {label} read {PARSES[p.parse]}")
    if profile == Profile.CORRECTED:
        out.append(
            f"profile: scored with srtui's corrected profile; {label}'s numbers come from its own code (reference)"
        )
    here = ", ".join(sorted(f.sklearn)) or f"{_installed('scikit-learn')} (installed; no run records it)"
    if not p.sklearn:
        out.append(f"scikit-learn: {here} here; {label}'s environment does not pin a version")
    elif sorted(f.sklearn) != [p.sklearn]:
        out.append(f"scikit-learn: {here} here; {label} ran scikit-learn {p.sklearn}")
    if p.sizes == "complexity" and f.counted:
        shown = ", ".join(sorted(f.counted)[:4]) + (" ..." if len(f.counted) > 4 else "")
        out.append(
            f"size: {shown} here: srtui's count of the model's nodes (no 2021 method file to take its size from); "
            f"{label} stored each method file's own complexity()"
        )
    others = sorted(v for v in f.versions if not v.startswith("scikit-learn=="))
    if others:
        shown = ", ".join(others[:4]) + (" ..." if len(others) > 4 else "")
        out.append(f"method versions: {shown} here; {label} records no method versions")
    return out


def _installed(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"
