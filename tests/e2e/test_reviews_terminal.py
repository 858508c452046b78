"""The apps and their terminal: no TTY is refused at once; a hang-up ends them within seconds,
with every rating given kept. Real processes on real pseudo-terminals (tests/ptyterm.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ptyterm import PtyProcess
from test_reviews_processes import _workspace

from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store

REPO = Path(__file__).resolve().parents[2]
#: "within 2 s" on an idle machine; the bound leaves room for a loaded 2-core host
HANGUP_S = 6


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "COLUMNS", "LINES", "NO_COLOR")}
    return {**env, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", **extra}


def _review_argv(root: Path, expert: str = "alice") -> list[str]:
    return [sys.executable, "-m", "srtui", "review", "open", "s", "--expert", expert, "--workspace", str(root)]


def _ratings(root: Path) -> dict[str, int]:
    store = Store(Workspace(root))
    try:
        return dict(store.conn.execute("SELECT assignment_id, rating FROM review_ratings"))
    finally:
        store.close()


def _wait_ratings(root: Path, n: int, timeout: float = 20) -> dict[str, int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        rows = _ratings(root)
        if len(rows) >= n:
            return rows
        time.sleep(0.1)
    raise AssertionError(f"{n} rating(s) not stored within {timeout} s: {_ratings(root)}")


def test_without_a_tty_both_apps_refuse_at_once(tmp_path):
    root = _workspace(tmp_path, 3, ["alice"])
    for argv, words in (
        (_review_argv(root), "ssh HOST"),
        ([sys.executable, "-m", "srtui", "--workspace", str(root)], "srtui status"),
    ):
        start = time.monotonic()
        # stdin a pipe that stays open (an ssh client without a PTY), stdout a pipe
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
        )
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - start
        assert proc.returncode != 0 and took < 20, (proc.returncode, took, err)  # not the 30 s of a hang
        assert err.count("\n") == 1 and "no terminal" in err and words in err, err
        assert out == ""
    assert _ratings(root) == {}


def test_a_remote_command_through_the_forced_key_is_refused(tmp_path):
    root = _workspace(tmp_path, 3, ["alice"])
    proc = subprocess.run(
        _review_argv(root),
        env=_env(SSH_ORIGINAL_COMMAND="srtui review open s --expert bob"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "only opens your review" in proc.stderr and proc.stderr.count("\n") == 1


def test_term_dumb_names_the_cli_instead(tmp_path):
    root = _workspace(tmp_path, 3, ["alice"])
    term = PtyProcess([sys.executable, "-m", "srtui", "--workspace", str(root)], env=_env(TERM="dumb"))
    try:
        code, _took = term.wait_exit(30)
        assert code not in (None, 0)
        text = term.text
        assert "TERM=dumb" in text and "srtui status" in text and "srtui results" in text
        assert "\x1b[?1049h" not in text  # never switched to the full-screen buffer
    finally:
        term.kill()


def _rate_first_item(term: PtyProcess, root: Path) -> dict[str, int]:
    term.wait_for("Item 1 of 4")
    term.send("4")
    term.send("\r")
    return _wait_ratings(root, 1)


def test_sighup_ends_the_expert_app_within_2_s_ratings_kept(tmp_path):
    root = _workspace(tmp_path, 4, ["alice"])
    term = PtyProcess(_review_argv(root), env=_env())
    try:
        saved = _rate_first_item(term, root)
        assert list(saved.values()) == [4]
        term.signal(signal.SIGHUP)
        code, took = term.wait_exit(10)
        assert code is not None and took < HANGUP_S, (code, took)
        assert _ratings(root) == saved
    finally:
        term.kill()


def test_terminal_closed_ends_the_expert_app_within_2_s(tmp_path):
    # no controlling terminal, so no SIGHUP from the kernel: the app must see the hang-up itself
    root = _workspace(tmp_path, 4, ["alice"])
    term = PtyProcess(_review_argv(root), env=_env(), controlling=False)
    try:
        saved = _rate_first_item(term, root)
        term.hangup()
        code, took = term.wait_exit(10)
        assert code is not None and took < HANGUP_S, (code, took)
        assert _ratings(root) == saved
    finally:
        term.kill()


def test_sighup_ends_the_main_app_within_2_s(tmp_path):
    root = _workspace(tmp_path, 2, ["alice"])
    term = PtyProcess([sys.executable, "-m", "srtui", "--workspace", str(root)], env=_env())
    try:
        term.wait_for("Monitor")
        term.signal(signal.SIGHUP)
        code, took = term.wait_exit(10)
        assert code is not None and took < HANGUP_S, (code, took)
    finally:
        term.kill()
