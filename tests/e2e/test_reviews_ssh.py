"""The forced-command SSH entry (`srtui review ssh-setup`) against a real sshd on 127.0.0.1.

sshd runs in the foreground on a free high port with its own host key, config and
authorized_keys in a temp dir, for the user running the tests. An expert's key rates and
resumes in a PTY session, and only ever reaches that expert's own assignments; `ssh -T` and a
remote command are refused with one line; a dropped connection ends the rating process.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ptyterm import PtyProcess
from test_reviews_processes import _workspace

from srtui.engine.workspace import Workspace
from srtui.results.store.store import Store

SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/bin/sshd") if os.access(p, os.X_OK)), None)
pytestmark = [
    pytest.mark.skipif(
        SSHD is None or not shutil.which("ssh") or not shutil.which("ssh-keygen"),
        reason="needs OpenSSH's sshd, ssh and ssh-keygen (apt-get install openssh-server; .ci/run does)",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30)
    return path.with_suffix(".pub").read_text().strip()


def _setup_line(root: Path, expert: str, key: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srtui",
            "review",
            "ssh-setup",
            "s",
            "--expert",
            expert,
            "--key",
            key,
            "--workspace",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


class Server:
    def __init__(self, home: Path, root: Path, experts: list[str]) -> None:
        home.mkdir()
        self.root = root
        self.home, self.port, self.user = home, _free_port(), getpass.getuser()
        _keygen(home / "host_key")
        self.keys = {e: home / f"{e}_key" for e in experts}
        lines = [_setup_line(root, e, _keygen(k)) for e, k in self.keys.items()]
        (home / "authorized_keys").write_text("\n".join(lines) + "\n")
        config = home / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {home / 'host_key'}",
                    f"PidFile {home / 'sshd.pid'}",
                    f"AuthorizedKeysFile {home / 'authorized_keys'}",
                    "StrictModes no",
                    "UsePAM no",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    f"AllowUsers {self.user}",
                    "LogLevel ERROR",
                    "",
                ]
            )
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.log = open(home / "sshd.log", "w")  # noqa: SIM115 - sshd writes to it until stop()
        assert SSHD is not None  # the fixture skips without one
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.skip(f"sshd did not start here: {(home / 'sshd.log').read_text().strip()[-300:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("sshd did not listen within 20 s")

    def ssh(self, expert: str, *args: str) -> list[str]:
        return [
            "ssh",
            "-F",
            "/dev/null",
            "-i",
            str(self.keys[expert]),
            "-p",
            str(self.port),
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            *args,
            f"{self.user}@127.0.0.1",
        ]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _raters(root: Path) -> list[int]:
    """Our rating processes (found by this test's own workspace path on their command line)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"review" in cmd and b"open" in cmd and str(root).encode() in cmd:
            pids.append(int(entry.name))
    return pids


def _by_expert(root: Path) -> dict[str, list[int]]:
    store = Store(Workspace(root))
    try:
        out: dict[str, list[int]] = {}
        for expert, rating in store.conn.execute("SELECT expert, rating FROM review_ratings ORDER BY submitted_at"):
            out.setdefault(expert, []).append(rating)
        return out
    finally:
        store.close()


def _wait(condition, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} not within {timeout} s")


@pytest.fixture
def server(tmp_path):
    root = _workspace(tmp_path, 4, ["alice", "bob"])
    srv = Server(tmp_path / "sshd", root, ["alice", "bob"])
    yield srv
    srv.stop()
    for pid in _raters(root):  # only if a test failed midway
        os.kill(pid, signal.SIGKILL)


def _session(server: Server, expert: str, *ssh_args: str) -> PtyProcess:
    env = {**os.environ, "TERM": "xterm-256color"}
    return PtyProcess(server.ssh(expert, "-tt", *ssh_args), env=env)


def test_pty_session_rates_resumes_and_ends_with_the_connection(server):
    root = server.root
    term = _session(server, "alice")
    try:
        term.wait_for("Item 1 of 4", timeout=60)
        assert "s - alice" in term.text
        term.send("4")
        term.send("\r")
        _wait(lambda: _by_expert(root).get("alice") == [4], 20, "alice's rating")
        assert _raters(root)
        term.proc.kill()  # the connection drops (no goodbye from the client)
        _wait(lambda: not _raters(root), 5, "the rating process ending after the connection dropped")
    finally:
        term.kill()
    term = _session(server, "alice")  # resumes at the first unrated item
    try:
        term.wait_for("Item 2 of 4", timeout=60)
        term.send("2")
        term.send("\r")
        _wait(lambda: _by_expert(root).get("alice") == [4, 2], 20, "alice's second rating")
    finally:
        term.kill()
    _wait(lambda: not _raters(root), 5, "the rating process ending")


def test_an_expert_reaches_only_their_own_session(server):
    term = _session(server, "bob")
    try:
        term.wait_for("Item 1 of 4", timeout=60)
        assert "s - bob" in term.text and "alice" not in term.text
        term.send("5")
        term.send("\r")
        _wait(lambda: _by_expert(server.root) == {"bob": [5]}, 20, "bob's rating")
    finally:
        term.kill()
    # alice's key asking for bob's session gets nothing: the forced command wins and refuses
    proc = subprocess.run(
        [*server.ssh("alice", "-tt"), "srtui review open s --expert bob"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "only opens your review" in proc.stdout + proc.stderr
    assert _by_expert(server.root) == {"bob": [5]}


def test_no_pty_and_remote_commands_are_refused_at_once(server):
    for extra, command, words in ((["-T"], [], "no terminal"), ([], ["ls", "/"], "only opens your review")):
        start = time.monotonic()
        # stdin stays open, like an interactive client that asked for no PTY
        proc = subprocess.Popen(
            server.ssh("alice", *extra) + command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode != 0 and time.monotonic() - start < 30
        assert words in err and err.strip().count("\n") == 0, err
    assert not _raters(server.root)
    assert _by_expert(server.root) == {}
