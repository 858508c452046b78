"""A kept fork server found unhealthy is ended through its pidfd (never a pid reused since) and
its socket removed only if it is still the one the driver connected to, not a newer server's at
the same path (srtui.engine.process.kept_servers.end). Real servers, in a private folder of the
test's own (a short temp directory: a socket's address must fit)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import REPO

DISCARD = """
import json, os, socket, sys
from srtui.engine.process import kept_servers
from srtui.engine.process.launch import POOL, keep_servers
from srtui.engine.process.worker_env import worker_environment

keep_servers()
server = POOL.server("srtui.engine.methods.probes", worker_environment())
if server is None or server.kept_key is None:
    print(json.dumps({"kept": False}))
    sys.exit(0)
path = kept_servers.paths(server.kept_key)[0]
newer = None
if sys.argv[1] == "replaced":  # by now another server's socket sits at the same path
    os.unlink(path)
    newer = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    newer.bind(str(path))
pid = server.pid
POOL.discard(server)
print(json.dumps({"kept": True, "pid": pid, "socket": os.path.exists(path)}))
"""


@pytest.mark.parametrize("case", ["own", "replaced"])
def test_an_unhealthy_kept_server_is_ended_and_only_its_own_socket_removed(case: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kend-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "XDG_RUNTIME_DIR")}
    env.update({"TMPDIR": str(tmp), "PYTHONPATH": str(REPO), "SRTUI_KEEP_SERVER_S": "60"})
    try:
        proc = subprocess.run(
            [sys.executable, "-c", DISCARD, case], capture_output=True, text=True, timeout=600, cwd=tmp, env=env
        )
        assert proc.returncode == 0, proc.stderr
        found = json.loads(proc.stdout.splitlines()[-1])
        if not found["kept"]:
            pytest.skip("no kept servers here: jobs are not sealed in PID namespaces")
        try:
            psutil.Process(found["pid"]).wait(timeout=30)
        except psutil.NoSuchProcess:
            pass
        assert not psutil.pid_exists(found["pid"]) or psutil.Process(found["pid"]).status() == psutil.STATUS_ZOMBIE
        assert found["socket"] is (case == "replaced")  # a newer server's socket stays
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
