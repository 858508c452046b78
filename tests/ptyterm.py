"""A process on a real pseudo-terminal, for tests (no pexpect): start it, read what it draws
(escape sequences stripped), type keys, hang up."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time

ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMNOPc]")


class PtyProcess:
    def __init__(self, argv: list[str], *, env: dict | None = None, size=(80, 24), controlling: bool = True, cwd=None):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))

        def make_controlling() -> None:  # after setsid: the pty becomes the session's terminal
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=make_controlling if controlling else None,
        )
        os.close(slave)
        self._raw = bytearray()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closing.is_set():
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the other side is gone, or we closed the master
                return
            if not data:
                return
            with self._lock:
                self._raw += data

    @property
    def text(self) -> str:
        """Everything drawn so far, escape sequences removed (words of one style stay together)."""
        with self._lock:
            raw = bytes(self._raw)
        return ANSI.sub(b"", raw).decode("utf-8", "replace")

    def mark(self) -> int:
        with self._lock:
            return len(self._raw)

    def since(self, mark: int) -> str:
        with self._lock:
            raw = bytes(self._raw[mark:])
        return ANSI.sub(b"", raw).decode("utf-8", "replace")

    def wait_for(self, needle: str, timeout: float = 30.0, mark: int = 0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.since(mark)
            if needle in text:
                return text
            if self.proc.poll() is not None and needle not in self.since(mark):
                time.sleep(0.2)  # the reader may still hold the last bytes
                if needle in self.since(mark):
                    return self.since(mark)
                raise AssertionError(
                    f"process exited ({self.proc.returncode}) before {needle!r}:\n{self.since(mark)[-2000:]}"
                )
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} not drawn within {timeout} s:\n{self.since(mark)[-2000:]}")

    def send(self, data: str | bytes) -> None:
        os.write(self.master, data.encode() if isinstance(data, str) else data)

    def hangup(self) -> None:
        """Close our side, as sshd does when the connection drops."""
        self._closing.set()  # a read in progress would keep the master open
        self._reader.join(timeout=5)
        if self._closed:
            return
        self._closed = True
        os.close(self.master)

    def signal(self, sig=signal.SIGHUP) -> None:
        self.proc.send_signal(sig)

    def wait_exit(self, timeout: float) -> tuple[int | None, float]:
        start = time.monotonic()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - start
        return code, time.monotonic() - start

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.hangup()
