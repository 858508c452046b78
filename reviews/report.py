"""The organiser's report of a session: scores per expert and pooled, agreement, self-consistency,
time per item and - once the session is unblinded - the ``srbench2022-realworld`` leaderboard with
the pooled trust scores filled in.

Repeat items measure self-consistency only: scores and agreement use each expert's rating of the
first showing. The trust score of a (task, method) is the mean of the experts' ratings.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from srtui.results.store.store import Store
from srtui.reviews.agreement import agreement, self_consistency
from srtui.reviews.storage import ReviewError, session_row

RULE = "srbench2022-realworld"


def ratings_frame(store: Store, name: str) -> pd.DataFrame:
    """Long table: expert, item, task, method, is_repeat, rating, elapsed_s, comment."""
    cur = store.conn.execute(
        "SELECT r.expert, r.item_id AS item, i.task, i.method, a.is_repeat, r.rating, r.elapsed_s, r.comment "
        "FROM review_ratings r JOIN review_assignments a ON a.assignment_id = r.assignment_id "
        "JOIN review_items i ON i.item_id = r.item_id WHERE r.session = ? ORDER BY r.expert, a.position",
        (name,),
    )
    return pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])


def trust_frame(store: Store, name: str) -> pd.DataFrame:
    """(task, method, trust): the pooled mean rating of first showings, for the scoring rule."""
    r = ratings_frame(store, name)
    r = r[r["is_repeat"] == 0]
    if r.empty:
        return pd.DataFrame(columns=["task", "method", "trust"])
    means = r.groupby(["task", "method"], as_index=False).agg(trust=("rating", "mean"))
    return means[["task", "method", "trust"]]


def _comments(r: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Every comment an expert wrote, with its rating, keyed as the scores are (no method while
    the session is blinded); a repeat showing's comment is marked as such."""
    columns = [*keys, "expert", "showing", "rating", "comment"]
    said = r[r["comment"].fillna("").str.strip() != ""]
    if said.empty:
        return pd.DataFrame(columns=columns)
    said = said.assign(showing=said["is_repeat"].map({0: "first", 1: "repeat"}), comment=said["comment"].str.strip())
    return said.sort_values([*keys, "expert"])[columns].reset_index(drop=True)


def _timing(r: pd.DataFrame) -> pd.DataFrame:
    if r.empty:
        return pd.DataFrame(columns=["expert", "rated", "median_s", "mean_s", "p90_s"])
    t = r.groupby("expert")["elapsed_s"]
    return pd.DataFrame(
        {"rated": t.size(), "median_s": t.median(), "mean_s": t.mean(), "p90_s": t.quantile(0.9)}
    ).reset_index()


def leaderboard(
    store: Store, name: str, trust: pd.DataFrame, select: str = "median"
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The rule's tables over the session's (task, method) runs, with the session's trust."""
    from srtui.results.scoring import ScoreError, score
    from srtui.results.scoring.tables import runs_frame

    row = session_row(store, name)
    pairs = pd.DataFrame(
        store.conn.execute("SELECT DISTINCT task, method FROM review_items WHERE session = ?", (name,)).fetchall(),
        columns=["task", "method"],
    )
    runs = runs_frame(store, row["suite"])
    if runs.empty:
        return {}, [
            "the leaderboard needs the session's runs, and the workspace "
            f"has none{' of suite ' + row['suite'] if row['suite'] else ''}"
        ]
    runs = runs.merge(pairs, on=["task", "method"])
    try:
        result = score(RULE, runs, trust=trust, representative=select)
    except ScoreError as exc:
        return {}, [f"no leaderboard: {exc}"]
    return {
        f"leaderboard ({RULE})": result.tables["leaderboard"],
        "leaderboard per task": result.tables["per_task"],
    }, result.notes


def build(store: Store, name: str) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Every table of the report, and the options line (session, status, blinding)."""
    row = session_row(store, name)
    blinded = not row["unblinded_at"]
    r = ratings_frame(store, name)
    first = r[r["is_repeat"] == 0]
    tables: dict[str, pd.DataFrame] = {}
    notes: list[str] = []

    keys = ["item", "task"] if blinded else ["task", "method", "item"]
    wide = (
        first.pivot_table(index=keys, columns="expert", values="rating", aggfunc="first")
        if len(first)
        else pd.DataFrame()
    )
    if len(wide):
        wide.columns.name = None
        wide["pooled"] = wide.mean(axis=1)
        wide["n"] = wide.drop(columns="pooled").notna().sum(axis=1)
        tables["scores per item"] = wide.reset_index()
        if not blinded:
            by_method = first.pivot_table(index="method", columns="expert", values="rating", aggfunc="mean")
            by_method.columns.name = None
            by_method["pooled"] = first.groupby("method")["rating"].mean()
            tables["mean trust per method"] = by_method.reset_index()
    else:
        notes.append("no ratings yet")

    ag = agreement(first[["expert", "item", "rating"]])
    tables["agreement"] = pd.DataFrame(
        [
            {
                "measure": "Krippendorff's alpha (ordinal)",
                "value": ag.alpha,
                "ci95_low": None,
                "ci95_high": None,
                "items": int((first.groupby("item")["expert"].nunique() >= 2).sum()) if len(first) else 0,
            },
            {
                "measure": "ICC(2,k)",
                "value": ag.icc["icc"],
                "ci95_low": ag.icc["ci95_low"],
                "ci95_high": ag.icc["ci95_high"],
                "items": ag.icc["items"],
            },
        ]
    )
    if len(ag.kappa):
        tables["weighted kappa (quadratic), pairs of experts"] = ag.kappa
    notes += ag.notes

    reps = r[r["is_repeat"] == 1][["expert", "item", "rating"]].rename(columns={"rating": "repeat"})
    pairs = reps.merge(first[["expert", "item", "rating"]].rename(columns={"rating": "first"}), on=["expert", "item"])
    consistency = self_consistency(pairs)
    if len(consistency):
        tables["self-consistency (hidden repeats)"] = consistency
    elif row["settings"].get("repeats", 0):
        notes.append("self-consistency: no repeat item rated together with its first showing yet")
    else:  # no table and no word was read as a missing result (#55)
        notes.append("self-consistency: this session shows no hidden repeats (`srtui review create --repeats N`)")
    tables["time per item (s)"] = _timing(r)
    tables["comments"] = _comments(r, keys)

    if blinded:
        notes.append(
            f"the session is blinded: methods and the {RULE} leaderboard appear after "
            f"`srtui review close {name}` and `srtui review unblind {name}`"
        )
    else:
        board, board_notes = leaderboard(store, name, trust_frame(store, name), row["settings"].get("select", "median"))
        tables.update(board)
        notes += board_notes
    if notes:
        tables["notes"] = pd.DataFrame({"note": notes})
    options = {
        "session": name,
        "status": row["status"],
        "blinded": blinded,
        "select": row["settings"].get("select"),
        "repeats": row["settings"].get("repeats"),
    }
    return tables, options


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else value


def _chosen(store: Store, name: str, table: str | None) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """The report's tables (only ``table`` when given) and its options without the unset ones."""
    tables, options = build(store, name)
    if table is not None:
        if table not in tables:
            raise ReviewError(f"review report has no table {table!r} (tables: {', '.join(tables)})")
        tables = {table: tables[table]}
    return tables, {k: v for k, v in options.items() if v is not None}


def csv_report_files(store: Store, name: str, stem: str, table: str | None = None) -> dict[str, str]:
    """File name -> plain CSV (one table per file, no comment lines: what pandas reads) and
    ``STEM.meta.json`` with the session's options, as `srtui export` writes them."""
    from srtui.results.outputs.export import csv_files

    tables, options = _chosen(store, name, table)
    return csv_files(stem, tables, f"review {name}", options)


def render(store: Store, name: str, fmt: str = "table", table: str | None = None) -> str:
    from srtui.results.outputs.export import ExportError, render_tables

    tables, options = _chosen(store, name, table)
    if fmt == "csv" and table is not None:  # one table: the plain CSV alone
        return next(iter(csv_report_files(store, name, "report", table).values()))
    if fmt == "table":  # a missing value reads as "-" on screen, not "None" (csv/json keep it empty/null)
        tables = {k: df.astype(object).map(_cell) for k, df in tables.items()}
    try:
        return render_tables(tables, fmt, f"review {name}", options)
    except ExportError as exc:
        raise ReviewError(str(exc)) from None
