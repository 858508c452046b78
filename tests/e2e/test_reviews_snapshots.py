"""Snapshot tests of the expert's screen at 80x24 (the size of a plain SSH terminal) on a seeded,
blinded session: the first item, after a rating, with the comment open, and the last item.

Update after an intended change with ``pytest tests/e2e/test_reviews_snapshots.py --snapshot-update``
and look at every frame it writes.
"""

from __future__ import annotations

import shutil

import pytest
from test_reviews_seed import seeded_copy
from textual.widgets import Input

from srtui.app.review.expert import ReviewApp
from srtui.results.store.store import Store
from srtui.reviews import ExpertSession, create_session
from srtui.reviews.items import build_items

SIZE = (80, 24)


@pytest.fixture(scope="module")
def session_ws(tmp_path_factory):
    ws = seeded_copy(tmp_path_factory.mktemp("review-snap") / "ws")
    store = Store(ws)
    create_session(store, "s1", build_items(store, include_baseline=True), ["alice"], repeats=1, seed=5)
    store.close()
    return ws.root


@pytest.fixture
def app(session_ws, tmp_path):
    from srtui.engine.workspace import Workspace

    root = tmp_path / "ws"
    shutil.copytree(session_ws, root)  # every test rates on its own copy
    store = Store(Workspace(root))
    yield ReviewApp(ExpertSession.open(store, "s1", "alice"), unicode_ok=True)
    store.close()


def keys(*pressed: str):
    async def run_before(pilot) -> None:
        await pilot.pause()
        for key in pressed:
            await pilot.press(key)
        for widget in pilot.app.screen.query(Input):
            widget.cursor_blink = False
        await pilot.pause(0.2)
        await pilot.pause()

    return run_before


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_first_item(snap_compare, app):
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())


def test_after_a_rating(snap_compare, app):
    # the next item is shown from its top (task and model), with what was saved in the status line
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("4", "enter"))


def test_comment_open(snap_compare, app):
    # the comment takes the line kept for it: the model stays where it was
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("2", "c", *"too simple"))


def test_last_item(snap_compare, app):
    assert snap_compare(app, terminal_size=SIZE, run_before=keys("p"))


def test_below_the_minimum_size_says_so(snap_compare, app):
    assert snap_compare(app, terminal_size=(60, 20), run_before=keys("pagedown"))


WIDE_MODEL = (
    "(x1**2 + 3.0*x2)/(x3 - 1.5) - 3.0*x1*x2/(x3**2 + 4.0) + sin(x1/x2)*x3**3 + x1/(x2+x3) - 3.0*x1 + 0.5"
    " + exp(x1/(x2+x3**2))*x1 + (x2-x1)/(x3*x1+2.25)"
)


class WideFirstItem:
    """The seeded session with a wide 2-D formula as its first item's model (the frozen content
    a session holds), everything else the real session's."""

    def __init__(self, session: ExpertSession) -> None:
        self._session = session

    def __getattr__(self, name: str):
        return getattr(self._session, name)

    def __len__(self) -> int:
        return len(self._session)

    def show(self, index: int) -> dict:
        from srtui.reviews.items import rounded_expression

        content = dict(self._session.show(index))
        if index == 0:
            content.update(rounded_expression(WIDE_MODEL, ("x1", "x2", "x3"), "python"), simplicity=-2.3)
        return content


def test_a_wide_model_is_wrapped_whole_with_the_rating_bar_in_view(snap_compare, session_ws, tmp_path):
    # the whole 2-D formula (its last term "+ 0.5" too) in the box, the symbol count of what is shown
    from srtui.engine.workspace import Workspace

    root = tmp_path / "ws"
    shutil.copytree(session_ws, root)
    store = Store(Workspace(root))
    session = WideFirstItem(ExpertSession.open(store, "s1", "alice"))
    app = ReviewApp(session, unicode_ok=True)  # type: ignore[arg-type]
    assert snap_compare(app, terminal_size=SIZE, run_before=keys())
    store.close()
