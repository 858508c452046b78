"""A fork server's heap on huge pages (srtui.engine.process.huge_pages): the regions it reads are
this process's own anonymous ones, and moving them changes no byte of what they hold."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

from srtui.engine.process import huge_pages


def test_regions_are_the_private_anonymous_writable_mappings_with_their_resident_bytes() -> None:
    block = bytearray(b"\x01" * (8 << 20))  # 8 MB written: resident
    address = ctypes.addressof((ctypes.c_char * len(block)).from_buffer(block))
    regions = huge_pages._regions()
    holding = [(lo, hi, rss) for lo, hi, rss in regions if lo <= address < hi]
    assert len(holding) == 1
    lo, hi, rss = holding[0]
    assert hi - lo >= len(block) and rss >= len(block) - (1 << 20)
    with open("/proc/self/maps") as fh:
        libraries = {int(ln.split("-")[0], 16) for ln in fh if ".so" in ln}
    assert not libraries & {lo for lo, _, _ in regions}  # no file's mapping among them


def test_collapse_keeps_every_byte_and_a_fork_sees_the_same() -> None:
    """In a process of its own (the collapse is for a fork server's whole heap): a pattern
    written before is read back after, in the process and in a child forked from it."""
    code = textwrap.dedent(
        """
        import os, hashlib
        from srtui.engine.process import huge_pages
        data = bytearray(os.urandom(1 << 20) * 24)
        before = hashlib.sha256(data).hexdigest()
        moved = huge_pages.collapse()
        assert hashlib.sha256(data).hexdigest() == before
        pid = os.fork()
        if pid == 0:
            data[12345] ^= 0xFF  # the child's write is its own
            os._exit(0 if hashlib.sha256(data).hexdigest() != before else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert hashlib.sha256(data).hexdigest() == before  # the parent's bytes are untouched
        print(moved)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 0
