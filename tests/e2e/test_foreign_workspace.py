"""Issue 54, 3: no workspace file can hang a command (results/store/guard.py).

A foreign trigger with an endless recursive CTE made `srtui run` spin for good, deaf to SIGINT
and SIGTERM (the query ran inside SQLite). Foreign objects are now refused on open (the fuzz of
tests/e2e/test_workspace_fuzz.py), and every statement on a store's connection runs under
a progress handler: here an endless statement on a real store, in a process of its own, ends
within 2 s of SIGINT (the default handler), of SIGTERM (the run's handlers,
srtui/cli/interrupts.py), and by itself past its time budget."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import srtui

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
SCRIPT = f"""
import sys, threading, time
from pathlib import Path
from srtui.engine.workspace import Workspace
from srtui.results.store.guard import why_stopped
from srtui.results.store.store import Store

store = Store(Workspace(Path(sys.argv[1])), readonly=True)
if sys.argv[2] == "handlers":  # as during `srtui run`
    from srtui.cli.interrupts import install_interrupt_handlers
    install_interrupt_handlers(threading.Event(), threading.Event(), lambda text: None)
print("querying", flush=True)
try:
    store.conn.execute({ENDLESS!r}).fetchone()
except Exception as exc:
    print(f"stopped {{time.monotonic()}}", flush=True)  # the clock every process shares
    print(why_stopped(exc), file=sys.stderr)
    sys.exit(130)
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("ws54") / "ws"
    srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--seeds", "1", "-w", str(ws), check=True
    )
    return ws


def _start(workspace: Path, mode: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(workspace), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "querying"
    time.sleep(1.0)  # well inside SQLite by now
    assert proc.poll() is None, "the endless statement ended by itself"
    return proc


@pytest.mark.parametrize(
    ("mode", "signum"), [("plain", signal.SIGINT), ("handlers", signal.SIGINT), ("handlers", signal.SIGTERM)]
)
def test_an_endless_statement_ends_within_2_s_of_a_signal(workspace: Path, mode: str, signum: int) -> None:
    """The statement ends within 2 s of the signal (the time the process itself reports, so a
    loaded machine's slow interpreter exit after it does not count); the process then exits."""
    proc = _start(workspace, mode)
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        proc.wait(timeout=30.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"still running 30 s after signal {signum}")
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted" in err and "Traceback" not in err, err
    stopped = float(out.split("stopped ")[1].split()[0])
    assert stopped - sent < 2.0, f"the statement ran {stopped - sent:.2f} s past signal {signum}"


def test_an_endless_statement_ends_past_its_budget(workspace: Path) -> None:
    proc = _start(workspace, "plain", {"SRTUI_QUERY_BUDGET_S": "2"})
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the statement ran past its budget and on")
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130 and "budget" in err and "Traceback" not in err, err


def test_trusted_schema_is_off_on_every_store_connection(workspace: Path) -> None:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store

    for readonly in (True, False):
        store = Store(Workspace(workspace), readonly=readonly)
        try:
            assert store.conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        finally:
            store.close()
