"""A forked job takes its own environment (srtui.engine.process.fork_child._take_environment):
exactly the job's variables afterwards, whatever the server had, and its token in the slot."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_the_job_has_exactly_its_own_environment_and_token() -> None:
    code = textwrap.dedent(
        """
        import ctypes, os
        from srtui.engine.process import fork_child, tree
        os.environ["SERVER_ONLY"] = "x"  # the server's, not the job's: must go
        os.environ["SHARED"] = "server value"
        room = ctypes.create_string_buffer(b"t" * 40)
        env = {k: v for k, v in os.environ.items() if k != "SERVER_ONLY"}
        env.update({"SHARED": "job value", "JOB_ONLY": "y", tree.TOKEN_ENV: "job-token"})
        fork_child._take_environment(env, (ctypes.addressof(room), 40))
        assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())
        libc = ctypes.CDLL(None)  # the C environment too: what a method's libraries and children read
        libc.getenv.restype = ctypes.c_char_p
        assert libc.getenv(b"SERVER_ONLY") is None and libc.getenv(b"SHARED") == b"job value"
        assert libc.getenv(b"JOB_ONLY") == b"y"
        assert room.raw.split(b"\\0")[0] == b"job-token"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
