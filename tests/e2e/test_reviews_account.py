"""`srtui review ssh-setup --account`: what the expert account can execute, checked as that account.

A real account (useradd) and a real sshd on 127.0.0.1. Two installs of srtui's interpreter: the
shared one docs/reviews.md lays out, a venv of the system's Python under /opt (a temporary
directory there; its site-packages reach this test's, instead of a `pip install` of minutes),
and the same venv under a 0700 directory (as a venv or pyenv under /root). ssh-setup refuses the
second in one line naming the closed directory and both ways out, and sshd agrees: the line
written by hand for it ends in "Permission denied", while the first one's key opens the rating
screen as the account.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from ptyterm import PtyProcess
from test_reviews_processes import _workspace
from test_reviews_ssh import SSHD, _free_port, _keygen

from srtui.reviews.account import Account, by_mode_bits, first_closed

SYSTEM_PYTHON = Path("/usr/bin/python3.11")
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="makes a real account: needs root"),
    pytest.mark.skipif(not shutil.which("useradd"), reason="needs useradd"),
    pytest.mark.skipif(SSHD is None or not shutil.which("ssh"), reason="needs OpenSSH's sshd and ssh"),
    pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="needs a system Python 3.11 outside /root"),
]
SITE = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))


def _venv(where: Path) -> Path:
    """A venv of the system's Python whose site-packages reach this srtui's (its dependencies)."""
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    site = next((where / "lib").glob("python3*/site-packages"))
    (site / "srtui-test.pth").write_text(f"import site; site.addsitedir({SITE!r})\n")
    return where / "bin" / "python"


def _end_processes_of(name: str) -> None:
    """The account's processes (the rating screen sshd started for it) end, or are ended: else
    userdel refuses and the account stays behind."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline + 20:  # bounded: a zombie stays owned until its parent reaps it
        pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _owner(p) == uid]
        if not pids:
            return
        if time.monotonic() > deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def _owner(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


@pytest.fixture(scope="module")
def setup():
    base = Path(tempfile.mkdtemp(prefix="srtui-account-", dir="/tmp"))
    shared = Path(tempfile.mkdtemp(prefix="srtui-test-", dir="/opt" if os.access("/opt", os.W_OK) else "/tmp"))
    name = f"srtuix{uuid.uuid4().hex[:8]}"
    try:
        base.chmod(0o755)
        shared.chmod(0o755)  # the shared install of docs/reviews.md, as /opt/srtui
        (base / "closed").mkdir(mode=0o700)
        pythons = {"open": _venv(shared / "srtui"), "closed": _venv(base / "closed" / "venv")}
        subprocess.run(["useradd", "--no-create-home", "-d", str(base), "-s", "/bin/sh", name], check=True)
        subprocess.run(["usermod", "-p", "*", name], check=True)  # unlocked, no password
        account = Account.named(name)
        if first_closed([(SITE, os.R_OK | os.X_OK, "")], by_mode_bits(account)):
            pytest.skip(f"this test's site-packages {SITE} are closed to other accounts")
        root = _workspace(base, 2, ["alice"])
        subprocess.run(["chown", "-R", f"{name}:", str(root)], check=True)
        yield base, name, root, pythons
    finally:
        _end_processes_of(name)
        subprocess.run(["userdel", name], check=False, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)


def _ssh_setup(python: Path, account: str, root: Path, key: str) -> subprocess.CompletedProcess:
    args = ["review", "ssh-setup", "s", "--expert", "alice", "--key", key, "--account", account]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SRTUI_WORKSPACE")}
    return subprocess.run(
        [str(python), "-m", "srtui", *args, "--workspace", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd="/",
    )


def _sshd(home: Path, account: str, lines: list[str]) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    _keygen(home / "host_key")
    (home / "authorized_keys").write_text("\n".join(lines) + "\n")
    config = home / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {home / 'host_key'}",
                f"PidFile {home / 'sshd.pid'}",
                f"AuthorizedKeysFile {home / 'authorized_keys'}",
                "StrictModes no",
                "UsePAM no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                f"AllowUsers {account}",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    assert SSHD is not None
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
    return proc, port


def _ssh(key: Path, port: int, account: str) -> list[str]:
    opts = ["BatchMode=yes", "IdentitiesOnly=yes", "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"]
    options = [arg for o in [*opts, "LogLevel=ERROR"] for arg in ("-o", o)]
    return ["ssh", "-F", "/dev/null", "-i", str(key), "-p", str(port), *options, "-tt", f"{account}@127.0.0.1"]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_an_interpreter_under_a_0700_directory_is_refused_by_name_and_sshd_agrees(setup, tmp_path):
    base, account, root, pythons = setup
    keys = {which: _keygen(tmp_path / f"{which}_key") for which in ("open", "closed")}
    refused = _ssh_setup(pythons["closed"], account, root, keys["closed"])
    assert refused.returncode != 0 and refused.stdout == ""
    err = refused.stderr.strip()
    assert err.count("\n") == 0, err
    assert f"{base / 'closed'} (drwx------ root) is closed to it" in err, err
    assert "/opt" in err and "chmod g+rx" in err, err  # the two ways out

    accepted = _ssh_setup(pythons["open"], account, root, keys["open"])
    assert accepted.returncode == 0, accepted.stderr
    assert f"account {account} can run this srtui" in accepted.stderr
    line = accepted.stdout.strip()
    assert str(pythons["open"]) in line
    # the line ssh-setup would not write, by hand, for the closed install
    closed_line = line.replace(str(pythons["open"]), str(pythons["closed"]))
    closed_line = closed_line.replace(keys["open"].split()[1], keys["closed"].split()[1])
    home = base / f"sshd-{uuid.uuid4().hex[:6]}"  # sshd reads authorized_keys as the account
    home.mkdir(mode=0o755)
    sshd, port = _sshd(home, account, [line, closed_line])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if subprocess.run(["ssh-keyscan", "-p", str(port), "127.0.0.1"], capture_output=True).stdout:
                break
            time.sleep(0.2)
        proc = subprocess.run(
            _ssh(tmp_path / "closed_key", port, account), stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        said = proc.stdout + proc.stderr  # logged in, then the shell could not run the interpreter
        assert proc.returncode != 0 and "Permission denied" in said and "publickey" not in said, said
        term = PtyProcess(_ssh(tmp_path / "open_key", port, account), env={**os.environ, "TERM": "xterm-256color"})
        try:
            term.wait_for("Item 1 of 2", timeout=90)
            assert "s - alice" in term.text
        finally:
            term.kill()
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)
    # the rating screen ran as the account, not as root
    assert pwd.getpwuid(os.stat(root / "srtui.db").st_uid).pw_name == account
