"""The expert screen and the organiser views, driven with Textual's Pilot on a seeded session.

Blinding is checked on what is actually drawn: every item's screen (and the help) is exported
as a screenshot and its text searched for every method name of the workspace and every job id.
"""

from __future__ import annotations

import asyncio
import html
import re

import pytest
from test_reviews_seed import SRBENCH_METHODS, seeded_copy
from textual.app import App

from srtui.app.review.expert import ExpertScreen, ReviewApp
from srtui.app.review.organiser import ReviewSessionScreen, ReviewSessionsScreen
from srtui.results.store.store import Store
from srtui.reviews import ExpertSession, create_session
from srtui.reviews.items import build_items

SIZE = (150, 48)


@pytest.fixture
def store(tmp_path):
    s = Store(seeded_copy(tmp_path / "ws"))
    items = build_items(s, include_baseline=True)
    create_session(s, "s1", items, ["alice", "bob"], repeats=2, seed=5, suite="demo-realworld")
    yield s
    s.close()


def screen_text(app: App) -> str:
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S))).replace("\xa0", " ")


def _leaks(text: str, store: Store) -> list[str]:
    low = text.lower()
    jobs = [r[0] for r in store.conn.execute("SELECT job_id FROM jobs")]
    return [m for m in SRBENCH_METHODS if m.lower() in low] + [j for j in jobs if j in text]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_every_expert_screen_is_blind(store):
    async def run(expert):
        es = ExpertSession.open(store, "s1", expert)
        app = ReviewApp(es)
        seen = []
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for _ in range(len(es)):
                text = screen_text(app)
                assert "data set demo-epidemic-" in text and "R² " in text and "Simplicity" in text
                assert _leaks(text, store) == [], text
                assert isinstance(app.screen, ExpertScreen)
                seen.append(app.screen.index)
                await pilot.press("n")
                await pilot.pause()
            await pilot.press("f1")
            await pilot.pause()
            text = screen_text(app)
            assert "strongly distrust" in text and "1-5" in text and _leaks(text, store) == []
            await pilot.press("escape")
            await pilot.press("4", "enter")  # a saved rating's message is blind too
            await pilot.pause()
            assert _leaks(screen_text(app), store) == []
        return seen

    for expert in ("alice", "bob"):
        seen = asyncio.run(run(expert))
        assert sorted(seen) == list(range(len(ExpertSession.open(store, "s1", expert))))


def test_rate_comment_skip_back_revise_and_resume(store):
    async def first_visit():
        es = ExpertSession.open(store, "s1", "alice")
        app = ReviewApp(es)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ExpertScreen) and screen.index == 0
            await pilot.press("enter")  # nothing chosen: nothing saved
            assert es.rated == 0 and "choose a rating first" in screen_text(app)
            await pilot.press("4", "c", *"clear trend", "enter")
            await pilot.pause()
            assert screen.index == 1 and "saved 4 (trust)" in screen_text(app)
            await pilot.press("s")  # skip item 2
            await pilot.pause()
            assert screen.index == 2
            await pilot.press("2", "enter")
            await pilot.pause()
            assert screen.index == 3
            await pilot.press("p", "p", "p")  # back to the first item: its saved rating is shown
            await pilot.pause()
            assert screen.index == 0 and screen.choice == 4 and "this one: saved 4 (trust)" in screen_text(app)
            await pilot.press("5", "enter")  # revise
            await pilot.pause()
            assert screen.index == 1  # the next unrated item is the skipped one
            return list(es.order)

    order = asyncio.run(first_visit())
    rows = dict(store.conn.execute("SELECT assignment_id, rating FROM review_ratings WHERE expert = 'alice'"))
    assert rows == {order[0]: 5, order[2]: 2}
    # the comment was shown again on the way back, so the revision kept it
    assert store.conn.execute(
        "SELECT comment, revisions FROM review_ratings WHERE assignment_id = ?", (order[0],)
    ).fetchone() == ("clear trend", 1)
    assert [r[0] for r in store.conn.execute("SELECT action FROM review_audit ORDER BY seq")] == [
        "rate",
        "skip",
        "rate",
        "revise",
    ]

    async def reopen():
        es = ExpertSession.open(store, "s1", "alice")
        assert es.order == order
        app = ReviewApp(es)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, ExpertScreen) and app.screen.index == 1  # the first unrated item
            assert f"Item 2 of {len(es)}" in screen_text(app)

    asyncio.run(reopen())


class Host(App):
    def __init__(self, workspace):
        super().__init__()
        self.workspace = workspace

    def on_mount(self):
        self.push_screen(ReviewSessionsScreen())


def test_organiser_views_close_unblind_and_report(store):
    es = ExpertSession.open(store, "s1", "alice")
    for i in range(4):
        es.rate(i, 1 + i % 5, "odd seasonality" if i == 1 else None)

    async def run():
        app = Host(store.workspace)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "s1" in text and "blinded" in text and "4/" in text
            await pilot.press("enter")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReviewSessionScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            text = screen_text(app)
            assert "alice" in text and "bob" in text and "agreement" in text
            report = str(screen.query_one("#report").render())
            assert "comments" in report and "odd seasonality" in report  # the organiser reads them
            assert not _leaks(report, store)  # blinded as the ratings are
            await pilot.press("u")  # unblind before close: refused
            await pilot.press("u")
            await pilot.pause()
            await pilot.press("c", "c")
            await pilot.pause()
            await pilot.press("u", "u")
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert "leaderboard" in str(screen.query_one("#report").render())
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ReviewSessionsScreen)

    asyncio.run(run())
    assert [r[0] for r in store.conn.execute("SELECT event FROM review_events ORDER BY seq")] == [
        "create",
        "close",
        "unblind",
    ]
