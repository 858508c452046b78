"""Tuning as the results show it: each final job's chosen configuration and the scores behind it,
and how far the tuning of a suite has got (the app's monitor).

A protocol run stores its tuning jobs as suite ``SUITE@tuning`` and, when it picks a final job's
configuration, a summary in the store's meta table under ``tuning:JOB_ID`` (written by
``srtui.runs.tuning_search.next_jobs``): per iteration, the rows each fold trained on and, per candidate,
its params, mean validation R2 and fold R2s, and the chosen params.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from srtui.engine.spec import MAX_AUTO_ATTEMPTS, RETRY_AUTOMATIC, TERMINAL

if TYPE_CHECKING:
    from srtui.results.store.store import Store

TUNING_SUFFIX = "@tuning"
SUMMARY_PREFIX = "tuning:"
ENDED = tuple(sorted(TERMINAL))


class JobScore(NamedTuple):
    """What a tuning choice reads of one stored job."""

    status: str
    r2_test: float | None
    attempt: int = 0
    error: str | None = None


def given_up(score: JobScore) -> bool:
    """Lost or interrupted on its last automatic attempt: no run starts it again, so its search
    counts it as a failed fold instead of waiting for it."""
    return score.status in RETRY_AUTOMATIC and score.attempt >= MAX_AUTO_ATTEMPTS


def failure_text(score: JobScore) -> str:
    """Why a fold has no score, in a few words: its status (and attempts when given up), its error."""
    what = f"{score.status} after {score.attempt} attempts" if given_up(score) else score.status
    return f"{what}: {score.error}" if score.error else what


def summaries(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """{final job_id: tuning summary} of every tuned final job in the store."""
    out = {}
    for key, value in conn.execute(
        "SELECT key, value FROM meta WHERE key LIKE ? ESCAPE '\\'", (SUMMARY_PREFIX.replace("_", "\\_") + "%",)
    ):
        try:
            summary = json.loads(value)
        except (TypeError, ValueError):
            continue  # not ours to explain: shown as untuned
        if isinstance(summary, dict):
            out[key[len(SUMMARY_PREFIX) :]] = summary
    return out


def summary_text(summary: dict[str, Any]) -> str:
    """One line: the protocol, the chosen params and each iteration's candidates with their mean R2."""
    parts = [f"{summary.get('protocol')} {summary.get('search')}: chosen {_params(summary.get('chosen'))}"]
    for i, it in enumerate(summary.get("iterations") or []):
        cands = "; ".join(_candidate_text(c) for c in it.get("candidates") or [])
        parts.append(f"iteration {i + 1} ({it.get('rows')} rows): {cands}")
    return " | ".join(parts)


def _candidate_text(candidate: dict[str, Any]) -> str:
    """A candidate's params and mean R2, and why each of its failed folds has no score."""
    failed = [f for f in candidate.get("failed") or [] if isinstance(f, dict)]
    why = ", ".join(f"fold {f.get('fold')}: {f.get('why')}" for f in failed)
    nan = ", ".join(str(f) for f in candidate.get("nan_folds") or [])
    mean = "mean R2 nan" if candidate.get("mean_nan") else _r2(candidate.get("mean_r2"))
    text = f"{_params(candidate.get('params'))} {mean}" + (f" (failed {why})" if why else "")
    return text + (f" (R2 nan on fold {nan}: one validation row)" if nan else "")


def _params(params: Any) -> str:
    return json.dumps(params, sort_keys=True) if params else "{defaults}"


def _r2(value: Any) -> str:
    return "mean R2 -" if value is None else f"mean R2 {value:.6g}"


@dataclass(frozen=True)
class TuningProgress:
    """One suite's tuning: tuning jobs ended / planned so far (a halving search plans each
    iteration when the previous one ends), final jobs ended / planned."""

    suite: str
    tuning_done: int
    tuning_total: int
    final_done: int
    final_total: int


def progress(conn: sqlite3.Connection, suites: list[str] | None = None) -> list[TuningProgress]:
    """Tuning progress of the suites that have tuning jobs (only ``suites``, if given)."""
    ended = ",".join("?" * len(ENDED))
    rows = conn.execute(f"SELECT suite, count(*), sum(status IN ({ended})) FROM jobs GROUP BY suite", ENDED).fetchall()
    counts = {suite: (int(done or 0), int(total)) for suite, total, done in rows}
    out = []
    for suite, (done, total) in sorted(counts.items()):
        if not suite.endswith(TUNING_SUFFIX):
            continue
        base = suite[: -len(TUNING_SUFFIX)]
        if suites is not None and base not in suites:
            continue
        final_done, final_total = counts.get(base, (0, 0))
        out.append(TuningProgress(base, done, total, final_done, final_total))
    return out


def active_progress(store: Store) -> list[TuningProgress]:
    """Tuning progress of the suites a run is going on now (the monitor's lines)."""
    conn = store.conn
    suites = [row[0] for row in conn.execute("SELECT DISTINCT suite FROM runs WHERE status = 'running'")]
    return progress(conn, suites) if suites else []


def progress_text(p: TuningProgress) -> str:
    return f"{p.suite}: tuning {p.tuning_done}/{p.tuning_total} jobs done, final {p.final_done}/{p.final_total}"
