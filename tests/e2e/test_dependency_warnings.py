"""Issue 59: a dependency's warnings about itself never reach srtui's user.

asyncssh 2.24 with cryptography 51 printed ten lines of ``CryptographyDeprecationWarning: DSA is
deprecated`` before every SSH-cluster message. The error paths here run through the real CLI with
every warning turned on (``PYTHONWARNINGS=default``, and ``error::DeprecationWarning``), once with
srtui's whole policy and once with only its table of known warnings (``SRTUI_SHOW_WARNINGS=1``):
the second fails on any dependency warning not in ``srtui.warnings_policy.KNOWN``, so a new one
shows up in CI's newest-versions step, not in a user's terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from clusters import free_port

from srtui import warnings_policy

REPO = Path(__file__).resolve().parents[2]
SUITE = 'name = "bad"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\nseeds = [1]\n'
SSH = """[ssh]
hosts = ["127.0.0.1", "127.0.0.1"]
workers_per_host = 1
remote_python = "{python}"
host = "127.0.0.1"
scheduler_port = {scheduler}
start_timeout = 20
[ssh.connect_options]
port = {port}
known_hosts = false
"""
MODES = {  # name -> the environment the command runs under
    "all-warnings": {"PYTHONWARNINGS": "default"},
    "deprecations-are-errors": {"PYTHONWARNINGS": "error::DeprecationWarning"},
    "known-table-only": {"PYTHONWARNINGS": "default", "SRTUI_SHOW_WARNINGS": "1"},
}


def _srtui(args: list[str], cwd: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SRTUI_", "PYTHONWARNINGS"))}
    return subprocess.run(
        [sys.executable, "-m", "srtui", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO), **extra},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_line(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("srtui: error: "), proc.stderr
    assert "Warning" not in proc.stderr + proc.stdout, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("mode", MODES)
def test_the_ssh_cluster_error_paths_are_one_line_with_warnings_on(tmp_path: Path, mode: str) -> None:
    pytest.importorskip("asyncssh", reason="the SSH cluster needs asyncssh (the test extra installs it)")
    (tmp_path / "s.toml").write_text(SUITE)
    refused = free_port()  # nothing listens there: asyncssh is imported, then the connection refused
    config = SSH.format(python=sys.executable, scheduler=free_port(), port=refused)
    (tmp_path / "c.toml").write_text(config)
    proc = _srtui(["run", "s.toml", "--cluster-config", "c.toml", "-w", "ws"], tmp_path, MODES[mode])
    _one_line(proc, "cannot use the dask ssh cluster", "Connect call failed")
    assert not (tmp_path / "ws" / "srtui.db").exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "no-such-suite"], "no-such-suite"),
        (["score", "srbench2021", "-w", "missing-ws"], "missing-ws"),
        (["plot", "no-such-kind", "-w", "missing-ws"], "no-such-kind"),
        (["review", "open", "s", "--expert", "a", "-w", "missing-ws"], "missing-ws"),
    ],
    ids=["run", "score", "plot", "review"],
)
def test_commands_error_paths_are_one_line_with_warnings_on(
    tmp_path: Path, mode: str, args: list[str], fragment: str
) -> None:
    _one_line(_srtui(args, tmp_path, MODES[mode]), fragment)


def test_a_dependency_warning_goes_to_the_log_and_srtuis_own_to_the_terminal(caplog) -> None:
    import logging

    import numpy

    warnings_policy.install()
    library = str(Path(numpy.__file__).parent / "core" / "x.py")  # a file of an installed package
    own = str(REPO / "results" / "x.py")
    assert not warnings_policy.is_own(library) and warnings_policy.is_own(own)
    shown: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        before = warnings.showwarning
        try:
            # the policy's hook wraps whatever showed warnings before it: here, a list
            def record(message, category, filename, lineno, file=None, line=None) -> None:
                shown.append(filename)

            warnings.showwarning = record
            warnings_policy._installed = False
            warnings_policy.install()
            with caplog.at_level(logging.DEBUG, logger="srtui.warnings"):
                warnings.warn_explicit("from a library", UserWarning, library, 1)
                warnings.warn_explicit("from srtui", UserWarning, own, 1)
        finally:
            warnings.showwarning = before
    assert shown == [own]
    assert "from a library" in caplog.text


def test_every_known_warning_says_why() -> None:
    for known in warnings_policy.KNOWN:
        assert issubclass(known.category, Warning) and known.module and len(known.why) > 20
