"""User tasks: ``srtui tasks add NAME FILE.csv --target COL [--test FILE] [--truth EXPR]
[--property P] [--irrelevant a,b] [--shortcut c,d] [--noiseless-task NAME]``.

Stored as files in the workspace, ``<workspace>/tasks/NAME/{train.csv,test.csv,task.json}``, with
features renamed to Python identifiers. Everything is validated before anything is written, and the
folder appears in one atomic rename, so a failed ``add`` leaves the workspace as it was.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from srtui.engine.names import RULE, is_name, quoted
from srtui.engine.untrusted import UntrustedFileError, read_file
from srtui.tasks.build import make_task, shuffled_split, stable_seed
from srtui.tasks.datafiles import sha256_file
from srtui.tasks.entry import TaskContext, TaskEntry, TaskError
from srtui.tasks.loaders.tables import numeric_xy, read_table, sanitise_names
from srtui.tasks.model import PROPERTIES, Task

TRACK = "user"
#: what ``--property`` accepts: the task properties, ``noise`` short for noise_robustness
PROPERTY_ALIASES = {**{p: p for p in PROPERTIES}, "noise": "noise_robustness"}


@dataclass(frozen=True)
class Declared:
    """What the user says about a task beyond its data (``tasks add`` options)."""

    truth: str | None = None
    property: str | None = None
    irrelevant: tuple[str, ...] = ()
    shortcut: tuple[str, ...] = ()
    noiseless_task: str | None = None


MAX_COLUMNS = 10_000
MAX_HEADER_BYTES = 1 << 20


def check_header(path: Path) -> None:
    """Refuse a header line that is too long or has too many columns, reading at most
    MAX_HEADER_BYTES: a 10^6-column file would otherwise cost minutes and gigabytes in pandas."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(MAX_HEADER_BYTES + 1)
    except OSError:
        return  # the loader reports a missing or unreadable file in its own words
    line, newline, _ = head.partition(b"\n")
    if not newline and len(head) > MAX_HEADER_BYTES:
        raise TaskError(f"{path}: the header line is longer than {MAX_HEADER_BYTES >> 20} MB")
    if line.count(b",") + 1 > MAX_COLUMNS:
        raise TaskError(f"{path}: {line.count(b',') + 1} columns, more than the {MAX_COLUMNS} srtui accepts")


#: a user task's stored files, read through the one bounded reader (no link, FIFO or device)
MAX_META_BYTES = 1 << 20
MAX_FILE_BYTES = 1 << 31


def user_dir(workspace: Path) -> Path:
    return Path(workspace) / "tasks"


def _feature_list(option: str, names: tuple[str, ...], mapping: dict[str, str], csv: Path) -> list[str]:
    """Column names (as in the file, or as renamed) -> the stored feature names."""
    renamed = set(mapping.values())
    out = []
    for name in names:
        if name in mapping:
            out.append(mapping[name])
        elif name in renamed:
            out.append(name)
        else:
            raise TaskError(f"--{option}: no feature column {quoted(name)} in {csv} (columns: {', '.join(mapping)})")
    return sorted(set(out))


def _property(declared: Declared, has_test: bool) -> str:
    """The property to score, checked against what it needs."""
    if declared.property is None:
        if declared.irrelevant or declared.shortcut:
            return "feature_absence"
        return "exact_rediscovery" if declared.truth else "accuracy"
    prop = PROPERTY_ALIASES.get(declared.property)
    if prop is None:
        raise TaskError(f"--property {declared.property!r}: choose one of {', '.join(PROPERTY_ALIASES)}")
    needs = {
        "exact_rediscovery": (declared.truth, "--truth EXPR (the formula to rediscover)"),
        "feature_absence": (declared.irrelevant or declared.shortcut, "--irrelevant and/or --shortcut columns"),
        "extrapolation": (has_test, "--test FILE (the out-of-range rows)"),
        "noise_robustness": (declared.noiseless_task, "--noiseless-task NAME (the noiseless twin it is compared with)"),
    }
    if prop in needs and not needs[prop][0]:
        raise TaskError(f"--property {declared.property} needs {needs[prop][1]}")
    return prop


def add_user_task(
    workspace: Path,
    name: str,
    csv: Path,
    target: str,
    test: Path | None = None,
    declared: Declared = Declared(),
    *,
    reserved: Collection[str],
) -> Task:
    """Validate the files and store the task; returns the Task as it will be loaded. ``reserved``:
    the built-in tasks' names (the catalogue's :func:`~srtui.tasks.catalogue.add_user_task` gives them)."""
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    if not is_name(name) or name != name.lower():
        raise TaskError(f"task name {quoted(name)} must be kebab-case: {RULE}, in lower case")
    if name in reserved:
        raise TaskError(f"task name {quoted(name)} is a built-in task; choose another")
    folder = user_dir(workspace) / name
    if folder.exists():
        raise TaskError(f"user task {quoted(name)} already exists at {folder}")
    for path in (csv, test):
        if path is not None:
            check_header(Path(path))
    train_df = read_table(Path(csv), sep=",")
    columns, X, y = numeric_xy(train_df, target, str(csv))
    if test is not None:
        test_df = read_table(Path(test), sep=",")
        test_cols, X_test, y_test = numeric_xy(test_df, target, str(test), min_rows=1)
        if test_cols != columns:
            raise TaskError(f"{test}: columns differ from {csv} (expected {', '.join(columns)})")
    elif len(y) < 4:
        raise TaskError(f"{csv}: {len(y)} rows are too few to split into train and test; give --test")
    mapping = sanitise_names(columns)
    features = [mapping[c] for c in columns]
    if declared.truth is not None:
        from srtui.tasks.truth import parse_truth

        parse_truth(declared.truth, features)
    prop = _property(declared, test is not None)
    meta = {
        "name": name,
        "target": target,
        "features": features,
        "columns": columns,
        "ground_truth": declared.truth,
        "property": prop,
        "irrelevant_features": _feature_list("irrelevant", declared.irrelevant, mapping, csv),
        "shortcut_features": _feature_list("shortcut", declared.shortcut, mapping, csv),
        "noiseless_task": declared.noiseless_task,
        "train_file": str(Path(csv).resolve()),
        "train_sha256": sha256_file(Path(csv)),
        "test_file": str(Path(test).resolve()) if test is not None else None,
        "test_sha256": sha256_file(Path(test)) if test is not None else None,
    }
    user_dir(workspace).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=user_dir(workspace)))
    try:
        out = pd.DataFrame(X, columns=features).assign(**{"__target__": y})
        out.rename(columns={"__target__": target}).to_csv(staging / "train.csv", index=False)
        if test is not None:
            pd.DataFrame(X_test, columns=features).assign(**{target: y_test}).to_csv(staging / "test.csv", index=False)
        (staging / "task.json").write_text(json.dumps(meta, indent=1))
        os.replace(staging, folder)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise TaskError(f"cannot store user task {quoted(name)}: {exc}") from None
    return load_user_task(folder)


def load_user_task(folder: Path) -> Task:
    import pandas as pd  # lazy: keeps `tasks list` and `srtui run` start-up light

    try:
        meta = json.loads(read_file(folder / "task.json", MAX_META_BYTES))
        target, features = meta["target"], meta["features"]
        train = pd.read_csv(io.BytesIO(read_file(folder / "train.csv", MAX_FILE_BYTES)))
        X = train[features].to_numpy(dtype=float)
        y = train[target].to_numpy(dtype=float)
        has_test = (folder / "test.csv").exists() or (folder / "test.csv").is_symlink()
        test = pd.read_csv(io.BytesIO(read_file(folder / "test.csv", MAX_FILE_BYTES))) if has_test else None
    except (OSError, ValueError, KeyError, TypeError, RecursionError, UntrustedFileError) as exc:
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise TaskError(f"user task at {folder} is damaged: {why}") from None
    if test is not None:
        X = np.vstack([X, test[features].to_numpy(dtype=float)])
        y = np.concatenate([y, test[target].to_numpy(dtype=float)])
        idx = np.arange(len(y))
        tr, te = idx[: len(train)], idx[len(train) :]
        split = "the given train and test files"
    else:
        tr, te = shuffled_split(len(y), 0.75, stable_seed(meta["name"], "split"))
        split = "random 75/25 (seeded by the task name)"
    renamed = {c: f for c, f in zip(meta["columns"], features) if c != f}
    default = "exact_rediscovery" if meta.get("ground_truth") else "accuracy"  # task.json of older srtui
    provenance = {
        "source": "user",
        "train_file": meta["train_file"],
        "train_sha256": meta["train_sha256"],
        "test_file": meta["test_file"],
        "test_sha256": meta["test_sha256"],
        "renamed_columns": renamed,
    }
    if meta.get("noiseless_task"):
        provenance["noiseless_task"] = meta["noiseless_task"]
    return make_task(
        meta["name"],
        TRACK,
        features,
        target,
        X,
        y,
        tr,
        te,
        ground_truth=meta.get("ground_truth"),
        split=split,
        property=meta.get("property") or default,
        irrelevant_features=frozenset(meta.get("irrelevant_features") or ()),
        shortcut_features=frozenset(meta.get("shortcut_features") or ()),
        provenance=provenance,
        description=f"User task from {Path(meta['train_file']).name}",
    )


def _build(folder: Path, context: TaskContext) -> Task:
    return load_user_task(folder)  # a user task is its own cache: no context needed


def user_entries(workspace: Path) -> list[TaskEntry]:
    folder = user_dir(workspace)
    if not folder.is_dir():
        return []
    found = []
    for meta in sorted(folder.glob("*/task.json")):
        path = meta.parent
        if path.name.startswith("."):
            continue  # an `add` still being written
        found.append(TaskEntry(path.name, TRACK, partial(_build, path), description=f"user task ({path})"))
    return found
