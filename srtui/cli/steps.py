"""Progress of a command's slow steps on stderr: `score`, `plot`, `report`, `export` (issue 56).

Each of these reads the runs, scores them and draws or writes: seconds each on a large workspace,
where before nothing was printed until the end. On a terminal the steps are a rich progress line
(a spinner, the step, a bar where the count is known, the time so far), gone when the command
ends. Piped (a log, CI), one plain line per step, ``srtui: COMMAND: STEP (i/n)``, once the steps
are past a second of work: the CPU time since the first, which a busy machine does not stretch, so
a small workspace's output (a one-line error included) is the same on every machine.
``SRTUI_PROGRESS_AFTER_S`` sets that second (0: every step). stdout is the command's own output.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from srtui.engine.textsafe import visible

#: the CPU seconds after which a piped command prints its steps, and the variable that sets them
AFTER_S = 1.0
AFTER_ENV = "SRTUI_PROGRESS_AFTER_S"


def _after_s() -> float:
    try:
        return max(0.0, float(os.environ.get(AFTER_ENV, AFTER_S)))
    except ValueError:
        return AFTER_S


def _terminal() -> bool:
    """Is stderr a terminal rich would draw on? Asked without importing rich.console (40 ms a
    piped command would pay for nothing); rich's own answer decides when it may be one."""
    from srtui.engine.textsafe import raw_stream

    stream = raw_stream(sys.stderr)  # the CLI's stderr says "no terminal" to styled output
    if not stream.isatty() and not os.environ.get("FORCE_COLOR") and not os.environ.get("TTY_COMPATIBLE"):
        return False
    from rich.console import Console

    return Console(file=stream).is_terminal


class Steps:
    """``with Steps("plot pareto") as steps: steps.step("reading the runs", 1, 2) ...``"""

    def __init__(self, command: str) -> None:
        self.command = command
        self._progress: Any = None
        self._task: Any = None
        self._line = ""  # the current step's line, printed once the command is past AFTER_S
        self._shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None
        self._cpu0 = 0.0

    def __enter__(self) -> Steps:
        if _terminal():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            from srtui.engine.textsafe import raw_stream

            columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
            console = Console(file=raw_stream(sys.stderr))
            self._progress = Progress(*columns, TimeElapsedColumn(), console=console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.command, total=None)
        elif _after_s() == 0:
            self._shown = True
        else:
            self._cpu0 = time.process_time()
            self._watch = threading.Thread(target=self._watching, name="srtui-steps", daemon=True)
            self._watch.start()
        return self

    def _watching(self) -> None:
        """Print the step under way once the steps are past AFTER_S of CPU, then stop watching."""
        after = self._cpu0 + _after_s()
        while not self._stop.wait(0.1):
            if time.process_time() >= after:
                with self._lock:
                    self._shown = True
                    self._print()
                return

    def _print(self) -> None:
        if self._line:
            print(self._line, file=sys.stderr, flush=True)

    def step(self, what: str, done: int | None = None, total: int | None = None) -> None:
        """Step ``done`` of ``total`` (1-based; either may be unknown) begins: ``what`` it does."""
        text = visible(f"{self.command}: {what}", one_line=True)  # suite names are the user's text
        if self._progress is not None:
            self._progress.update(self._task, description=text, completed=(done or 1) - 1, total=total)
            return
        count = f" ({done}/{total})" if done is not None and total is not None else ""
        with self._lock:
            self._line = f"srtui: {text}{count}"
            if self._shown:
                self._print()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.join()
        if self._progress is not None:
            self._progress.stop()
