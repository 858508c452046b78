"""Blinded expert trust-scoring sessions (the SRBench 2022 real-world track's expert ratings).

Organiser: :func:`srtui.reviews.items.build_items` + :func:`create_session`, :func:`status`,
:func:`add_expert`, :func:`close`, :func:`unblind`, :mod:`srtui.reviews.report`. Expert:
:class:`ExpertSession` (only that expert's assignments, in their own seeded order, no method
names). SSH: :mod:`srtui.reviews.ssh`.
This module's names are the package's API for the app (``srtui.app`` imports only them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if __name__ != "srtui.reviews":  # one import package: a top-level `reviews` would be a second copy
    raise ImportError(f"srtui's reviews is imported as srtui.reviews, not as {__name__}")

from srtui.reviews.storage import (
    LIKERT,
    ExpertError,
    ExpertSession,
    FrozenItem,
    ReviewError,
    add_expert,
    audit,
    check_name,
    close,
    create_session,
    events,
    session_row,
    sessions,
    short_time,
    status,
    unblind,
)

if TYPE_CHECKING:
    from srtui.results.store.store import Store

__all__ = [
    "LIKERT",
    "ExpertError",
    "ExpertSession",
    "FrozenItem",
    "ReviewError",
    "add_expert",
    "audit",
    "check_name",
    "close",
    "create_session",
    "events",
    "render_report",
    "session_row",
    "sessions",
    "short_time",
    "status",
    "unblind",
]


def render_report(store: Store, name: str, fmt: str = "table") -> str:
    """:func:`srtui.reviews.report.render`, imported when called: the report needs pandas (and pingouin)."""
    from srtui.reviews.report import render

    return render(store, name, fmt)
