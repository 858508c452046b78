"""A stdout that cannot be written ends every command quietly, never in a traceback (session 19).

Before, `srtui --help >&-` and `srtui status >&-` (stdout closed) ended with a Python traceback
and exit 120. Now (srtui.cli.main): a closed stdout ends a command that writes to it in one line,
exit 1; a stdout whose reader went away (EPIPE: `| head -c1`) ends it quietly, exit 1 (as typer
does); a command that writes nothing there (`srtui run`) is not disturbed. The real CLI runs with
fd 1 closed, and with a pipe whose reading end is closed before it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import srtui


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one finished job (`status`, `results` and `score` have rows to print)."""
    folder = tmp_path_factory.mktemp("stdout-gone")
    suite = folder / "p.toml"
    suite.write_text('name = "p"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\nseeds = [1]\n')
    srtui("run", str(suite), "-w", str(folder / "ws"), check=True)
    return folder


def commands(ran: Path) -> list[list[str]]:
    ws = str(ran / "ws")
    return [["--help"], ["status", "-w", ws], ["results", "-w", ws], ["methods", "list"], ["tasks", "list"]]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}


def assert_no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr[-3000:]


def test_a_closed_stdout_ends_each_command_in_one_line(ran: Path) -> None:
    for args in commands(ran):
        argv = ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "srtui", *args]
        proc = subprocess.run(argv, env=env(), stderr=subprocess.PIPE, text=True, timeout=300)
        assert_no_traceback(proc.stderr)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert proc.stderr.strip().splitlines() == ["srtui: error: standard output is closed: nothing could be written"]


def test_a_stdout_whose_reader_is_gone_ends_each_command_quietly(ran: Path) -> None:
    for args in commands(ran):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before srtui writes anything: every write is EPIPE
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "srtui", *args],
                env=env(),
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=300,
            )
        finally:
            os.close(write)
        assert_no_traceback(proc.stderr)
        assert (proc.returncode, proc.stderr) == (1, ""), (args, proc.returncode, proc.stderr)


def test_head_reading_one_byte_leaves_no_traceback(ran: Path) -> None:
    """As a shell does it: the reader may leave before or after srtui's last write (0 or 1)."""
    for args in commands(ran):
        script = 'set -o pipefail; "$@" | head -c1 >/dev/null'
        argv = ["bash", "-c", script, "bash", sys.executable, "-m", "srtui", *args]
        proc = subprocess.run(
            argv, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300
        )
        assert_no_traceback(proc.stderr)
        if proc.returncode == 0:  # the reader left after the last write: what the command says on stderr
            assert proc.stderr == _own_stderr(args), (args, proc.stderr)
        else:
            assert (proc.returncode, proc.stderr) == (1, ""), (args, proc.returncode, proc.stderr)


def _own_stderr(args: list[str]) -> str:
    """What the command writes to stderr with its stdout piped and read whole (`methods list`
    and `tasks list` count their rows there)."""
    proc = subprocess.run(
        [sys.executable, "-m", "srtui", *args], env=env(), capture_output=True, text=True, timeout=300
    )
    return proc.stderr


def test_a_run_that_writes_nothing_to_stdout_runs_with_it_closed(ran: Path) -> None:
    """`srtui run` reports on stderr: with fd 1 closed its job still runs and it ends 0 (fd 1
    holds /dev/null meanwhile: no file the run opens takes it)."""
    ws = ran / "ws-closed"
    argv = ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "srtui", "run", str(ran / "p.toml"), "-w", str(ws)]
    proc = subprocess.run(argv, env=env(), stderr=subprocess.PIPE, text=True, timeout=600)
    assert_no_traceback(proc.stderr)
    assert proc.returncode == 0 and "ok 1" in proc.stderr, proc.stderr[-2000:]
    done = srtui("results", "-w", str(ws), "--format", "json", check=True)
    assert '"status": "ok"' in done.stdout, done.stdout[-2000:]
