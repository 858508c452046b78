"""Blinded expert trust-scoring sessions (the SRBench 2022 real-world track's expert ratings).

Organiser: :func:`reviews.items.build_items` + :func:`create_session`, :func:`status`,
:func:`add_expert`, :func:`close`, :func:`unblind`, :mod:`reviews.report`. Expert: :class:`ExpertSession` (only that
expert's assignments, in their own seeded order, no method names). SSH: :mod:`reviews.ssh`.
"""

from reviews.storage import (
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
    status,
    unblind,
)

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
    "session_row",
    "sessions",
    "status",
    "unblind",
]
