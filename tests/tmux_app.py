"""The app in a real terminal: `srtui tui` in a detached tmux session at 80x24, read back with
capture-pane (the tests that read screens as a user sees them share this one driver)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO


class TmuxApp:
    """``with TmuxApp(name, workspace) as app``: the app running; the session killed on exit."""

    def __init__(self, name: str, workspace: Path) -> None:
        self.name = name
        self.command = " ".join(
            [
                f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color",
                shlex.quote(sys.executable), "-m", "srtui", "tui", "-w", shlex.quote(str(workspace)),
            ]
        )  # fmt: skip

    def __enter__(self) -> TmuxApp:
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "80", "-y", "24", self.command], check=True)
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False)

    def keys(self, *sent: str, pause: float = 0.3) -> None:
        for key in sent:
            subprocess.run(["tmux", "send-keys", "-t", self.name, key], check=True)
            time.sleep(pause)

    def pane(self, waiting_for: str, *, gone: str = "", timeout: float = 120) -> str:
        """The screen once ``waiting_for`` is on it (and ``gone`` is not)."""
        deadline, text = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            text = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
            ).stdout
            if waiting_for in text and (not gone or gone not in text):
                return text
            time.sleep(0.3)
        raise AssertionError(f"{waiting_for!r} not on the screen within {timeout:g} s:\n{text}")
