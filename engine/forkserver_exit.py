"""Imported first by the model checkers' forkserver (``CHECK_PRELOAD``): it ends at once when
its driver has gone, instead of tearing down sympy's modules for a fifth of a second.

multiprocessing's forkserver holds the driver's stdout and stderr (inherited), so a pipe
reading ``srtui methods check --json`` saw its end only once that teardown had finished, after
the driver itself had exited (issue 56). Here, imported by that server's preload, it registers
an exit handler that flushes and leaves with ``os._exit``: the server owns no file to finish
(its socket's folder is the driver's to remove) and its children leave by ``os._exit`` already.
Imported anywhere else (a driver, a test walking every module) it does nothing.
"""

from __future__ import annotations

import atexit
import os
import sys
from types import FrameType


def in_forkserver_preload() -> bool:
    """Whether this import runs inside multiprocessing's forkserver ``main`` (its preload)."""
    where = os.path.join("multiprocessing", "forkserver.py")
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_code.co_filename.endswith(where):
            return True
        frame = frame.f_back
    return False


def _leave_now() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


#: whether this process is that server (the handler is registered): read by its tests
ARMED = in_forkserver_preload()
if ARMED:
    atexit.register(_leave_now)
