"""Ctrl-C during a run: the CLI's signal handlers (the core, runs, only sees the two events)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

from srtui.results.store.guard import request_stop

Handler = Callable[[int, FrameType | None], None]


def install_interrupt_handlers(cancel: threading.Event, force: threading.Event, notify: Callable[[str], None]) -> None:
    """First Ctrl-C: stop scheduling and terminate running jobs; second: kill them at once."""

    def handler(signum: int, frame: FrameType | None) -> None:
        request_stop()  # a workspace query still running a moment later is stopped (results/store/guard.py)
        if not cancel.is_set():
            cancel.set()
            notify("stopping: no new jobs; running jobs are being terminated (Ctrl-C again to force)")
        else:
            force.set()
            notify("forcing: killing running jobs now")

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    _keep_handlers(handler)


_original_signal = signal.signal


def _keep_handlers(ours: Handler) -> None:
    """Libraries imported later must not take Ctrl-C away from the run (dask_jobqueue sets
    SIGINT to sys.exit() on import): while our handler is installed, other code's changes to
    SIGINT/SIGTERM are ignored; everything else passes through."""

    def guarded(signum: int, handler: object) -> object:
        if signum in (signal.SIGINT, signal.SIGTERM) and handler is not ours and signal.getsignal(signum) is ours:
            return ours
        return _original_signal(signum, handler)  # type: ignore[arg-type]

    signal.signal = guarded  # type: ignore[assignment]
