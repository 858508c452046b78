"""`srtui review ...` through the real CLI: the organiser's flow, one-line errors, the expert's
generic errors, the network file system refusal, and a session over a real `srtui run`."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from conftest import srtui
from test_reviews_seed import SRBENCH_METHODS, seeded_copy

from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store
from srtui.reviews import ExpertSession

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop"


@pytest.fixture
def ws(tmp_path):
    return seeded_copy(tmp_path / "ws").root


@pytest.mark.slow
def test_organiser_flow(ws):
    w = ("--workspace", str(ws))
    out = srtui(
        "review",
        "create",
        "r1",
        "--suite",
        "demo-realworld",
        "--experts",
        "alice,bob",
        "--repeats",
        "2",
        "--tasks",
        "demo-epidemic-cases,demo-epidemic-hosp",
        "--select",
        "best",
        "--seed",
        "9",
        *w,
        check=True,
    )
    assert "18 items, 2 expert(s)" in out.stdout and "2 hidden repeat(s)" in out.stdout
    store = Store(Workspace(ws))
    for expert in ("alice", "bob"):
        es = ExpertSession.open(store, "r1", expert)
        for i in range(len(es)):
            es.rate(i, 1 + (i * 7 + len(expert)) % 5)
    added = srtui("review", "add-expert", "r1", "carol", *w, check=True)
    assert "carol added with 20 item(s)" in added.stdout and "--expert carol" in added.stdout
    twice = srtui("review", "add-expert", "r1", "carol", *w)
    assert twice.returncode == 2 and twice.stderr.strip() == "srtui: error: 'carol' is already an expert of review 'r1'"
    status = json.loads(srtui("review", "status", "r1", "--json", *w, check=True).stdout)
    assert [(e["expert"], e["rated"], e["assigned"]) for e in status["experts"]] == [
        ("alice", 20, 20),
        ("bob", 20, 20),
        ("carol", 0, 20),
    ]
    blinded = srtui("review", "report", "r1", "--format", "md", *w, check=True).stdout
    assert "is blinded" in blinded and not any(m in blinded for m in SRBENCH_METHODS)
    bad = srtui("review", "unblind", "r1", *w)
    assert bad.returncode == 2 and "close it first" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    early = srtui("score", "srbench2022-realworld", "--review", "r1", *w)
    assert early.returncode == 2 and "still blinded" in early.stderr
    srtui("review", "close", "r1", *w, check=True)
    srtui("review", "unblind", "r1", *w, check=True)
    scored = json.loads(
        srtui("score", "srbench2022-realworld", "--review", "r1", "--format", "json", *w, check=True).stdout
    )
    assert scored["rule"] == "srbench2022-realworld"
    report = json.loads(srtui("review", "report", "r1", "--format", "json", *w, check=True).stdout)
    tables = report["tables"]
    board = tables["leaderboard (srbench2022-realworld)"]
    assert {r["method"] for r in board} == set(SRBENCH_METHODS) and all(r["trust"] is not None for r in board)
    assert report["options"]["blinded"] is False and report["options"]["select"] == "best"
    assert {r["measure"] for r in tables["agreement"]} == {"Krippendorff's alpha (ordinal)", "ICC(2,k)"}
    for fmt in ("table", "csv", "latex"):
        assert "leaderboard" in srtui("review", "report", "r1", "--format", fmt, *w, check=True).stdout
    listing = srtui("review", "list", *w, check=True).stdout
    assert "r1  closed, unblinded" in listing
    again = srtui("review", "create", "r1", *w)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_expert_errors_are_generic_and_ssh_setup(ws):
    w = ("--workspace", str(ws))
    srtui("review", "create", "r2", "--experts", "alice", *w, check=True)
    out = srtui(
        "review", "open", "r2", "--expert", "mallory", *w, env={"SSH_ORIGINAL_COMMAND": "srtui review report r2"}
    )
    assert out.returncode == 2 and "cannot be opened" in out.stderr
    assert not any(m.lower() in out.stderr.lower() for m in SRBENCH_METHODS)
    line = srtui("review", "ssh-setup", "r2", "--expert", "alice", "--key", KEY, *w, check=True).stdout.strip()
    match = re.fullmatch(r'restrict,pty,command="([^"]*)" ssh-ed25519 \S+ srtui-review:r2:alice', line)
    assert match, line
    command = match.group(1)
    assert shlex.split(command)[-7:] == ["review", "open", "r2", "--expert", "alice", "--workspace", str(ws)]
    out = srtui("review", "ssh-setup", "r2", "--expert", "bob", "--key", KEY, *w)
    assert out.returncode == 2 and "not an expert" in out.stderr
    help_text = srtui("review", "open", "--help").stdout.lower()
    assert not any(m.lower() in help_text for m in (*SRBENCH_METHODS, "linear", "lasso", "operon", "gplearn", "ffx"))


def test_network_filesystem_is_refused(tmp_path, monkeypatch, capsys):
    from srtui.cli import main

    ws = Workspace(tmp_path / "ws").ensure()
    Store(ws, create=True).close()
    monkeypatch.setattr(Workspace, "filesystem_type", lambda self: "nfs4")
    with pytest.raises(SystemExit) as exc:
        main(["review", "open", "r", "--expert", "alice", "--workspace", str(ws.root)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "network file system (nfs4)" in err and "WAL" in err and "tell the organiser" in err
    # every writer refuses it, `srtui run` included; the store is left as it was
    before = ws.db_path.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["run", "smoke", "--methods", "linear", "--workspace", str(ws.root)])
    assert exc.value.code == 2 and "network file system (nfs4)" in capsys.readouterr().err
    assert ws.db_path.read_bytes() == before


@pytest.mark.slow
def test_session_over_a_real_run(tmp_path):
    """linear, lasso and poly2 really fitted on the simulated epidemic; all are baselines."""
    ws = tmp_path / "ws"
    w = ("--workspace", str(ws))
    srtui(
        "run",
        "demo-realworld",
        "--methods",
        "linear,lasso,poly2",
        "--tasks",
        "demo-epidemic-cases",
        "--seeds",
        "1",
        "-j",
        "2",
        *w,
        check=True,
        timeout=600,
    )
    out = srtui("review", "create", "real", "--suite", "demo-realworld", *w)
    assert out.returncode == 2 and "--include-baseline" in out.stderr
    srtui(
        "review",
        "create",
        "real",
        "--suite",
        "demo-realworld",
        "--include-baseline",
        "--experts",
        "a,b",
        *w,
        check=True,
    )
    store = Store(Workspace(ws))
    contents = [json.loads(c) for (c,) in store.conn.execute("SELECT content FROM review_items")]
    assert len(contents) == 3 and all(c["series"]["dates_train"] for c in contents)
    assert any(c["black_box"] for c in contents)  # poly2's 90-feature expansion
    text = json.dumps(contents).lower()
    assert not any(m in text for m in ("linear", "lasso", "poly2"))


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_comments_reach_the_organiser_blinded_in_every_format_and_status_fits_80_columns(ws):
    from srtui.reviews import create_session
    from srtui.reviews.items import build_items
    from srtui.reviews.report import render

    w = ("--workspace", str(ws))
    store = Store(Workspace(ws))
    items = build_items(store, tasks=["demo-epidemic-cases"], include_baseline=True)
    create_session(store, "rc", items, ["alice", "bob"], repeats=0, seed=3)
    alice = ExpertSession.open(store, "rc", "alice")
    alice.rate(0, 2, "  the lag-14 weight looks too large\x1b[31m  ")
    alice.rate(1, 4)
    ExpertSession.open(store, "rc", "bob").rate(0, 5, "fine")
    for fmt in ("csv", "md", "latex", "json"):
        text = render(store, "rc", fmt)
        assert "the lag-14 weight looks too large" in text, fmt
        assert "fine" in text and "\x1b" not in text
        assert not any(m in text for m in SRBENCH_METHODS), fmt  # blinded as the ratings are
    store.close()
    table = srtui("review", "report", "rc", *w, check=True).stdout
    assert "comments" in table and "the lag-14 weight looks too large" in table and "\x1b" not in table
    tables = json.loads(srtui("review", "report", "rc", "--format", "json", *w, check=True).stdout)["tables"]
    assert sorted((c["expert"], c["rating"]) for c in tables["comments"]) == [("alice", 2), ("bob", 5)]
    assert set(tables["comments"][0]) == {"item", "task", "expert", "showing", "rating", "comment"}
    srtui("review", "close", "rc", *w, check=True)
    srtui("review", "unblind", "rc", *w, check=True)
    store = Store(Workspace(ws))
    unblinded = json.loads(render(store, "rc", "json"))["tables"]
    store.close()
    assert unblinded["comments"][0]["method"] in SRBENCH_METHODS
    lines = srtui("review", "status", "rc", *w, check=True).stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    assert re.search(r"last \d\d-\d\d \d\d:\d\d$", lines[1]), lines
