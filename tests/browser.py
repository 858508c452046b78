"""A real headless browser for the tests: Debian's chromium driven over the DevTools protocol on
a pipe (``--remote-debugging-pipe``: fd 3 in, fd 4 out, NUL-separated JSON), so no port and no
websocket library. ``open_page(path)`` loads a local file offline and records every console
message, page error, log entry and network request the page makes."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    """Debian's chromium binary (not its /usr/bin shell wrapper, which does not keep fds 3 and 4)."""
    direct = Path("/usr/lib/chromium/chromium")
    if direct.is_file():
        return str(direct)
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)


@dataclass
class Page:
    url: str
    console: list[dict[str, Any]] = field(default_factory=list)  # Runtime.consoleAPICalled
    errors: list[dict[str, Any]] = field(default_factory=list)  # Runtime.exceptionThrown
    log: list[dict[str, Any]] = field(default_factory=list)  # Log.entryAdded (CSP, network, ...)
    requests: list[str] = field(default_factory=list)  # Network.requestWillBeSent URLs
    values: dict[str, Any] = field(default_factory=dict)  # the expressions evaluated


class Browser:
    def __init__(self, timeout: float = 60.0) -> None:
        exe = chromium()
        if exe is None:
            raise RuntimeError("chromium is not installed")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="srtui-chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def wire() -> None:  # in the child: the pipes on the fds chromium reads and writes
            a, b = os.dup(cmd_r), os.dup(res_w)  # above 4 first, so neither dup2 clobbers the other
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--remote-debugging-pipe",
                "--no-sandbox",  # CI runs as root
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--metrics-recording-only",
                "--proxy-server=127.0.0.1:9",  # offline: any request that escaped would fail, and be seen
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            preexec_fn=wire,  # a test helper: no threads to race the fork
            close_fds=False,  # fds 3 and 4 (dup2 above) stay open; os.pipe fds close on exec
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("SRTUI_BROWSER_DEBUG") else subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self.cmd_w, self.res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self.res_r], [], [], left)
            if ready:
                chunk = os.read(self.res_r, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, name: str, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == name and e.get("sessionId") == session for e in self.events):
            self.events.append(self._read(deadline))

    def open_page(self, path: Path, expressions: dict[str, str], settle_s: float = 1.0) -> Page:
        url = Path(path).resolve().as_uri()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session)
        self.events.clear()
        self.send("Page.navigate", session, url=url)
        self.wait_event("Page.loadEventFired", session)
        page = Page(url)
        for name, expr in expressions.items():
            res = self.send("Runtime.evaluate", session, expression=expr, returnByValue=True)
            page.values[name] = res.get("result", {}).get("value")
        end = time.monotonic() + settle_s  # late console messages and requests
        while time.monotonic() < end:
            try:
                self.events.append(self._read(end))
            except TimeoutError:
                break
        for e in self.events:
            if e.get("sessionId") != session:
                continue
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled":
                page.console.append(p)
            elif e["method"] == "Runtime.exceptionThrown":
                page.errors.append(p)
            elif e["method"] == "Log.entryAdded":
                page.log.append(p["entry"])
            elif e["method"] == "Network.requestWillBeSent":
                page.requests.append(p["request"]["url"])
        return page
