"""Typed messages that thread workers post back to the screens (the UI thread applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from srtui.views import (
    Board,
    ExpressionDetail,
    MonitorSnapshot,
    PredictionSeries,
    ResultsPage,
    ResultsQuery,
    SuiteAggregate,
)


@dataclass
class SnapshotReady(Message):
    """A monitor poll finished."""

    snapshot: MonitorSnapshot


@dataclass
class PageReady(Message):
    """A page (or grouped summary) of the results explorer was read."""

    page: ResultsPage


@dataclass
class CountReady(Message):
    """The exact count of a page whose count was first estimated."""

    query: ResultsQuery
    total: int


@dataclass
class DetailReady(Message):
    detail: ExpressionDetail


@dataclass
class SeriesReady(Message):
    series: PredictionSeries


@dataclass
class AggregateReady(Message):
    aggregate: SuiteAggregate


@dataclass
class LeaderboardReady(Message):
    board: Board


@dataclass
class RunFinished(Message):
    """A run started from the app ended (or failed to start: ``error``)."""

    summary: str
    error: str | None = None
