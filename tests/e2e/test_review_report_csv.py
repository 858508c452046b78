"""Issue #55: `srtui review report --format csv` gives plain tables pandas reads: one per file with
--out (and NAME.meta.json), or one with --table; through the real CLI."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from conftest import srtui
from test_reviews_seed import seeded_copy

from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store
from srtui.reviews import ExpertSession


@pytest.mark.slow  # over 8 s on a quiet machine (several CLI runs): CI's slow step runs it
def test_review_report_csv_is_one_plain_table_per_file(tmp_path):
    ws = seeded_copy(tmp_path / "ws").root
    w = ("--workspace", str(ws))
    srtui("review", "create", "r1", "--suite", "demo-realworld", "--experts", "alice", "--seed", "9", *w, check=True)
    store = Store(Workspace(ws))
    es = ExpertSession.open(store, "r1", "alice")
    for i in range(len(es)):
        es.rate(i, 1 + i % 5)
    store.close()
    srtui("review", "close", "r1", *w, check=True)
    srtui("review", "unblind", "r1", *w, check=True)
    out = tmp_path / "csv" / "rep.csv"
    out.parent.mkdir()
    srtui("review", "report", "r1", "--format", "csv", "--out", str(out), *w, check=True)
    meta = json.loads((out.parent / "rep.meta.json").read_text())
    assert meta["rule"] == "review r1" and len(meta["tables"]) > 1
    for name, file in meta["tables"].items():
        text = (out.parent / file).read_text()
        assert not text.startswith("#"), name
        assert len(pd.read_csv(out.parent / file).columns) >= 1, name
    board = next(n for n in meta["tables"] if n.startswith("leaderboard"))
    one = srtui("review", "report", "r1", "--format", "csv", "--table", board, *w, check=True).stdout
    assert "#" not in one.splitlines()[0] and "method" in pd.read_csv(io.StringIO(one)).columns
    bad = srtui("review", "report", "r1", "--table", "nope", *w)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "review report has no table 'nope' (tables: " in bad.stderr
