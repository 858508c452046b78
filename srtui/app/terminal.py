"""The terminal the apps run in: refuse to start without one, leave promptly when it goes away.

Without a TTY a Textual app never notices its input has ended (an SSH client that asked for no
PTY, a pipe): it keeps polling a closed stdin at most of a core, re-parented to init when the
client leaves. So both apps refuse to start unless stdin and stdout are terminals, and while they
run, a watch ends them within a second of SIGHUP/SIGTERM or of the terminal hanging up (the PTY's
other side closed: ssh dropped, tmux killed). Ratings and runs are written as they happen, so
leaving at once loses nothing; a process that cannot finish its exit in time (its output blocked
on the dead terminal) is ended with ``os._exit`` after a grace period.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO

#: exit code of an app whose terminal went away (128 + SIGHUP, as a shell reports a hang-up)
HANGUP_CODE = 129


def terminal_problem(
    stdin: IO[str] | None = None, stdout: IO[str] | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why a full-screen app cannot run here, in a few words, or None when it can."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    environ = os.environ if environ is None else environ

    def tty(stream: IO[str] | None) -> bool:
        try:
            return stream is not None and stream.isatty()
        except (ValueError, OSError):  # closed
            return False

    if not (tty(stdin) and tty(stdout)):
        return "no terminal (stdin and stdout must be a TTY)"
    if environ.get("TERM", "") in ("dumb", "unknown"):
        return f"TERM={environ.get('TERM')} cannot draw a full-screen app"
    return None


class HangupWatch:
    """Calls ``on_gone`` once when the terminal goes away; forces the exit ``grace`` s later.

    ``grace`` is a callable so the app can allow longer while it stops a run it started."""

    def __init__(self, on_gone: Callable[[], None], grace: Callable[[], float], fd: int = 0) -> None:
        self.on_gone = on_gone
        self.grace = grace
        self.fd = fd
        self._fired = threading.Event()
        self._stop = threading.Event()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGHUP, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.fire)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: the poll below still sees a hang-up
        threading.Thread(target=self._poll, args=(loop,), name="srtui-hangup", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _poll(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait (without spinning) for the terminal to hang up or the parent to change."""
        poller = select.poll()
        poller.register(self.fd, 0)  # no events asked: only POLLHUP, POLLERR and POLLNVAL report
        parent = os.getppid()
        while not self._stop.is_set() and not self._fired.is_set():
            events = poller.poll(250)
            if events or os.getppid() != parent:
                loop.call_soon_threadsafe(self.fire)
                return

    def fire(self) -> None:
        if self._fired.is_set() or self._stop.is_set():
            return
        self._fired.set()
        grace = max(float(self.grace()), 0.1)
        timer = threading.Timer(grace, os._exit, args=(HANGUP_CODE,))
        timer.daemon = True
        timer.start()
        self.on_gone()
