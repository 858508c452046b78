"""The fork server's sealed jobs get their PID 1 from the maker (srtui.engine.process.job_inits): each job
is PID 2 of a namespace of its own, the server its only fork, its init out of its reach, and the
init with whatever the job left goes when the server ends it; no init outlives its job.

Real processes and namespaces, in a child interpreter set up as a fork server is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SERVER = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from srtui.engine.process import job_inits
    from srtui.engine.process.seal import server_start

    maker = job_inits.start(server_start())
    if maker is None:
        print(json.dumps({"skip": "this kernel cannot seal jobs in namespaces"}))
        sys.exit(0)
    out = {"jobs": []}
    for i in range(12):
        r, w = os.pipe()
        job, init = maker.fork_job()
        if job == 0:  # the job: PID 2, no parent in sight, PID 1 not its to read, trace or kill
            os.close(r)
            seen = {"pid": os.getpid(), "ppid": os.getppid()}
            for what in ("root", "environ", "fd"):
                try:
                    os.listdir(f"/proc/1/{what}") if what != "environ" else open(f"/proc/1/{what}", "rb").read(8)
                    seen[what] = "read"
                except OSError as exc:
                    seen[what] = exc.errno
            os.kill(1, signal.SIGKILL)  # ignored: an init from inside its namespace
            if i == 0 and os.fork() == 0:  # an escapee: its own session, a sleeping grandchild
                os.close(w)
                os.setsid()
                if os.fork() == 0:
                    time.sleep(600)
                os._exit(0)
            time.sleep(0.05)
            seen["init alive"] = os.path.exists("/proc/1/stat")
            os.write(w, json.dumps(seen).encode())
            os._exit(3)
        os.close(w)
        with os.fdopen(r) as fh:
            seen = json.loads(fh.read() or "{}")
        _, status = os.waitpid(job, 0)
        seen["exit"] = os.waitstatus_to_exitcode(status)
        init.end()
        out["jobs"].append(seen)
    time.sleep(0.2)
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as fh:
        kids = [int(p) for p in fh.read().split()]
    out["server children"] = len(kids)
    marked = []  # every process of this test still there: the server and the maker, no init, no escapee
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if os.environ["MARK"].encode() in fh.read():
                    marked.append(int(entry))
        except (OSError, ValueError):
            pass
    out["others"] = sorted(set(marked) - {os.getpid(), *kids})
    print(json.dumps(out))
    """
)


def test_each_sealed_job_is_pid_2_of_its_own_init_and_nothing_outlives_it(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "SRTUI_SEAL": "namespaces"}
    env["MARK"] = f"srtui-test-job-inits-{tmp_path.name}-{os.getpid()}"
    proc = subprocess.run(
        [sys.executable, "-c", SERVER], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert len(out["jobs"]) == 12
    for seen in out["jobs"]:
        assert seen["pid"] == 2 and seen["ppid"] == 0, seen  # the server is outside its namespace
        assert seen["exit"] == 3, seen
        assert seen["init alive"] is True, seen  # the job's SIGKILL did not reach its init
    if os.geteuid() != 0:  # (root's job is root here: the seal gives it a uid of its own later, in enter)
        for seen in out["jobs"]:
            assert all(seen[w] != "read" for w in ("root", "environ", "fd")), seen  # not dumpable
    assert out["server children"] == 1  # the maker; its jobs reaped
    assert out["others"] == [], out  # every init ended with its job, and the escapee with its namespace
