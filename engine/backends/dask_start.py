"""Starting a Dask cluster so that every start ends: a deadline, Ctrl-C, and a one-line cause.

The start (SSHCluster's connections, a scheduler, the first workers) runs in a helper thread;
the calling thread waits for it, polling the run's cancel event and the deadline, so a hung
remote Python or an unreachable host can always be interrupted. Dask's own chatter (the SSH
cluster relays every remote log line at INFO) goes to a log file, and its last lines are kept
in memory to quote the cause when a start fails.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srtui.engine.backends.base import BackendError

DASK_LOGGERS = ("distributed", "dask_jobqueue", "asyncssh", "tornado", "bokeh")
#: the env variable that marks every process an SSH cluster start spawned on a remote host
SSH_TOKEN_ENV = "SRTUI_CLUSTER_TOKEN"


class StartInterrupted(BackendError):
    """Ctrl-C while the cluster was starting: nothing was claimed, the run ends with 130."""


class RecentLines(logging.Handler):
    """The last log lines of Dask, to quote the cause of a failed start."""

    def __init__(self, keep: int = 50) -> None:
        super().__init__(logging.INFO)
        self.lines: deque[str] = deque(maxlen=keep)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a bad log record must not break the start
            pass

    def cause(self) -> str:
        """The most telling recent line: an error or exception line, else the last one."""
        lines = [ln.strip() for ln in self.lines if ln.strip()]
        for line in reversed(lines):
            if re.search(r"(Error|Exception|error:|No such file|not found|denied|refused|in use)", line):
                return _clean(line)
        return _clean(lines[-1]) if lines else ""


def _clean(line: str) -> str:
    line = re.sub(r"^\S+ - [\w.]+ - \w+ - ", "", line)  # Dask's "time - logger - LEVEL - " prefix
    return line[:300]


def route_dask_logs(log_path: Path | None) -> RecentLines:
    """Send Dask's loggers to ``log_path`` (not the terminal) and to memory; errors reach the
    CLI as one line through BackendError instead."""
    import distributed  # noqa: F401 - its import installs its own stderr handler: replace it after

    recent = RecentLines()
    handlers: list[logging.Handler] = [recent]
    if log_path is not None:
        from srtui.engine.untrusted import open_append

        # never through a link a job put in logs/ (logging.FileHandler would follow it)
        file_handler = logging.StreamHandler(open(open_append(log_path), "a", encoding="utf-8"))  # noqa: SIM115
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        handlers.append(file_handler)
    for name in DASK_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = list(handlers)
        logger.propagate = False
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)
    for name, child in list(logging.Logger.manager.loggerDict.items()):  # distributed.client has its own
        if isinstance(child, logging.Logger) and name.split(".")[0] in DASK_LOGGERS and "." in name:
            child.handlers, child.propagate = [], True  # to its root's handlers above, not stderr
    logging.getLogger("asyncssh").setLevel(logging.WARNING)  # one line per channel otherwise
    return recent


def start_within(
    start: Callable[[], Any],
    *,
    what: str,
    timeout: float,
    cancel: threading.Event | None,
    cause: Callable[[], str],
    abandon: Callable[[], None] = lambda: None,
) -> Any:
    """Run ``start`` in a helper thread; its result, or BackendError after ``timeout`` seconds
    (quoting ``cause()``), or StartInterrupted when ``cancel`` is set. ``abandon`` tidies up
    what a start that never returned left behind (remote processes)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = start()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="srtui-dask-start", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while thread.is_alive():
        thread.join(0.2)
        if cancel is not None and cancel.is_set():
            abandon()
            raise StartInterrupted(f"interrupted while starting the {what}; nothing was run")
        if time.monotonic() > deadline and thread.is_alive():
            why = cause()  # before abandon(): tidying up logs errors of its own
            abandon()
            raise BackendError(f"the {what} did not start within {timeout:g} s" + (f": {why}" if why else ""))
    if "error" in box:
        raise box["error"]
    return box.get("value")


def is_local_address(host: str) -> bool:
    try:
        return socket.gethostbyname(host).startswith("127.")
    except OSError:
        return False


def check_port_free(host: str, port: int, what: str) -> None:
    """A scheduler port already taken here, said so (Dask reports 'Worker failed to start')."""
    if not port or not is_local_address(host):
        return
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((socket.gethostbyname(host), port))
        except OSError:
            raise BackendError(
                f"the {what} port {port} on {host} is in use: free it or set another port in the cluster config"
            ) from None


def sweep_ssh_hosts(hosts: list[str], connect_options: dict[str, Any], token: str, timeout: float = 20.0) -> None:
    """Kill, on every host, the processes an abandoned SSH start left (marked by ``token`` in
    their environment): a hung remote Python must not outlive the run."""
    import asyncio

    import asyncssh

    script = (
        f"for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -qx '{SSH_TOKEN_ENV}={token}' "
        "&& kill -9 ${p#/proc/} 2>/dev/null; done; true"
    )

    async def sweep(host: str) -> None:
        try:
            async with asyncssh.connect(host, **connect_options) as conn:
                await conn.run(script, check=False)
        except (OSError, asyncssh.Error):
            pass  # an unreachable host has nothing of ours running

    async def all_hosts() -> None:
        await asyncio.wait_for(asyncio.gather(*(sweep(h) for h in dict.fromkeys(hosts))), timeout)

    try:
        asyncio.run(all_hosts())
    except (TimeoutError, OSError):
        pass
