"""A review of real gplearn and pyoperon models, read off the expert's screen in tmux at 80x24.

gplearn (with its protected div, log and sqrt) and pyoperon (``X1``-numbered, 17-digit
constants) run for real on a task of one's own whose features have names (``speed``, ``mass``,
``temp``). `srtui review create` checks the items for handwriting; the expert's screen shows no
protected operator, no ``X0``-style name and one constant format, and the frozen items say the
same for the whole models (the screen shows their first lines).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.workspace import Workspace
from results.store.store import Store
from reviews import ExpertSession
from reviews.blinding import number_format

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")
SUITE = """name = "neutral"
tasks = ["law"]
methods = ["gplearn", "pyoperon"]
seeds = [1]
scoring = "srbench2022-realworld"

[limits]
time_s = 8
mem_mb = 2000

[params.gplearn]
function_set = ["add", "sub", "mul", "div", "log", "sqrt"]

[params.pyoperon]
allowed_symbols = "add,sub,mul,div,log,sqrt,constant,variable"
"""


def _srtui(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "SRTUI_DATA_DIR")}
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> tuple[Path, str]:
    """A workspace with one gplearn and one pyoperon model on `law`, and review `s` of both."""
    tmp = tmp_path_factory.mktemp("neutral")
    rng = np.random.default_rng(3)
    for name, n in (("train", 150), ("test", 50)):
        X = rng.uniform(0.5, 3.0, size=(n, 3))
        y = X[:, 0] * X[:, 1] / (X[:, 2] + 1.0) + np.log(X[:, 0])
        rows = ["speed,mass,temp,y", *(",".join(f"{v:.6g}" for v in (*x, t)) for x, t in zip(X, y))]
        (tmp / f"{name}.csv").write_text("\n".join(rows) + "\n")
    (tmp / "neutral.toml").write_text(SUITE)
    ws = tmp / "ws"
    _srtui("tasks", "add", "law", "train.csv", "--test", "test.csv", "--target", "y", "-w", str(ws), cwd=tmp)
    _srtui("run", "neutral.toml", "-w", str(ws), "-j", "2", cwd=tmp)
    created = _srtui("review", "create", "s", "--experts", "alice", "--seed", "1", "-w", str(ws), cwd=tmp)
    return ws, created.stderr


def _raw_models(ws: Path) -> dict[str, str]:
    store = Store(Workspace(ws))
    try:
        return dict(store.conn.execute("SELECT method, model FROM jobs WHERE status = 'ok'"))
    finally:
        store.close()


def _numbers_in_one_format(text: str) -> None:
    for literal in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?", text):
        assert number_format(literal) in ("integer", "3 significant digits"), (literal, text)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_the_method_strings_have_handwriting_the_items_do_not(session):
    ws, create_stderr = session
    raw = _raw_models(ws)
    assert set(raw) == {"gplearn", "pyoperon"}, raw
    assert re.search(r"\b(div|log|sqrt|mul|add|sub)\(", raw["gplearn"])  # gplearn's prefix calls
    assert re.search(r"\d\.\d{10,}", raw["pyoperon"])  # pyoperon's long constants
    assert "warning: blinding" not in create_stderr, create_stderr  # no handwriting found
    store = Store(Workspace(ws))
    try:
        expert = ExpertSession.open(store, "s", "alice")
        for i in range(len(expert)):
            c = expert.content(i)
            assert not c["black_box"], c["plain"]
            for form in (c["plain"], c["expression"], c["expression_ascii"]):
                assert not re.search(r"pdiv|plog|pinv|\b(add|sub|mul|div)\(|\bX_?\d", form), form
                _numbers_in_one_format(form)
            assert c["footnote"].startswith("Division, log and square root may be protected")
            assert c["size"] and c["size"] > 1
    finally:
        store.close()


def test_the_expert_screen_at_80x24_in_tmux(session):
    ws, _ = session
    name = f"srtui-neutral-{os.getpid()}"
    command = " ".join(
        [
            f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color",
            shlex.quote(sys.executable), "-m", "srtui", "review", "open", "s", "--expert", "alice",
            "--workspace", shlex.quote(str(ws)),
        ]
    )  # fmt: skip
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command], check=True)

    def pane(waiting_for: str) -> str:
        """The screen once it shows ``waiting_for`` and has stopped changing (not mid-redraw)."""
        deadline, text, last = time.monotonic() + 90, "", None
        while time.monotonic() < deadline:
            text = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if waiting_for in text and "Model" in text and "╰" in text and "R²" in text:
                if text == last:
                    return text
                last = text
            time.sleep(0.5)
        raise AssertionError(f"{waiting_for!r} not on the screen within 90 s:\n{text}")

    try:
        screens = [pane("Item 1 of 2")]
        subprocess.run(["tmux", "send-keys", "-t", name, "n"], check=True)
        screens.append(pane("Item 2 of 2"))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)
    for screen in screens:
        lines = screen.split("\n")
        assert len(lines) >= 24 and max(len(line) for line in lines) <= 80
        box = screen[screen.index("Model") : screen.index("╰")]
        assert re.search(r"speed|mass|temp", box), screen
        assert not re.search(r"pdiv|plog|pinv|\b(add|sub|mul|div)\(|\bX_?\d", screen), screen
        _numbers_in_one_format(box.replace("│", " "))
