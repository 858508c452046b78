"""The fork-server launcher against the exec launcher, through the real CLI and real processes:
methods that import at fit time, start threads or fork their own children behave the same; the
servers are replaced when they die or leak and never outlive their driver."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from conftest import REPO, results_json, srtui

_HEAD = """
import os, sys
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


def _note(what):
    # where the job ran (a forked job's command line is its server's), on the job's stderr: a
    # sealed job sees no folder of the test's, and the driver keeps its stderr in logs/
    with open("/proc/self/cmdline") as fh:
        where = fh.read().replace("\\0", " ")
    print("test-note", what, where, file=sys.stderr, flush=True)


def model(est, X=None):
    return repr(est.mean_)
"""

FOLDERS = {
    # imports at fit time a library the server has not imported (a C extension among them)
    "importer": """
class Importer(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        import sqlite3, statistics, xml.dom.minidom
        _note("importer")
        with sqlite3.connect(":memory:") as db:
            total = db.execute("SELECT ?", (float(statistics.fsum(y)),)).fetchone()[0]
        self.mean_ = total / len(y) + len(xml.dom.minidom.parseString("<a/>").documentElement.tagName) - 1
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


est = Importer()
""",
    # starts threads during fit, and leaves one non-daemon thread running: the interpreter
    # waits for it at exit (so its note is in the job's stderr once the job is done), under fork too
    "threads": """
import threading, time


class Threads(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        _note("threads")
        parts = [0.0] * 4
        def work(i):
            parts[i] = float(np.sum(y[i::4]))
        workers = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        self.mean_ = sum(parts) / len(y)
        def late():
            time.sleep(0.5)
            _note("late-thread")
        threading.Thread(target=late).start()
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


est = Threads()
""",
    # forks its own children: a multiprocessing pool (fork context) and a bare os.fork
    "forker": """
import multiprocessing


def _half_sum(part):
    return float(np.sum(part))


class Forker(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        _note("forker")
        with multiprocessing.get_context("fork").Pool(2) as pool:
            sums = pool.map(_half_sum, [y[0::2], y[1::2]])
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 7
        self.mean_ = sum(sums) / len(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


est = Forker()
""",
}


@pytest.fixture
def folders(tmp_path: Path) -> list[Path]:
    out = []
    for name, body in FOLDERS.items():
        folder = tmp_path / "methods" / name
        folder.mkdir(parents=True)
        (folder / "regressor.py").write_text(textwrap.dedent(_HEAD) + textwrap.dedent(body))
        out.append(folder)
    return out


def _suite(tmp_path: Path, fork_safe: bool | None) -> Path:
    path = tmp_path / f"fork-{fork_safe}.toml"
    path.write_text(
        'name = "forks"\ntasks = ["smoke-linear"]\nmethods = ["linear", "probe-forks"]\nseeds = [1, 2]\n'
        '[params."probe-forks"]\nn = 3\nsleep_s = 0.2\n'
        + ("" if fork_safe is None else f"[srbench]\nfork_safe = {'true' if fork_safe else 'false'}\n")
    )
    return path


def _run(tmp_path: Path, folders: list[Path], launcher: str) -> tuple[list[dict], list[tuple[str, str]]]:
    """The run's results, and the notes its jobs wrote on their stderr: (what, where it ran)."""
    args = [
        "run",
        str(_suite(tmp_path, True)),
        "--methods",
        "linear,probe-forks,importer,threads,forker",
        "--jobs",
        "2",
        "--launcher",
        launcher,
        "--workspace",
        str(tmp_path / f"ws-{launcher}"),
    ]
    for folder in folders:
        args += ["--method-dir", str(folder)]
    proc = srtui(*args)
    assert proc.returncode == 0, proc.stderr
    notes = []
    for log in sorted((tmp_path / f"ws-{launcher}" / "logs").glob("*.stderr")):
        for line in log.read_text().splitlines():
            if line.startswith("test-note "):
                what, where = line.split(" ", 2)[1:]
                notes.append((what, where))
    return results_json(tmp_path / f"ws-{launcher}"), notes


@pytest.mark.slow  # 15-35 s: the default run stays well under 15 minutes; CI runs it in its slow step
def test_fit_time_imports_threads_and_children_behave_as_under_exec(tmp_path: Path, folders: list[Path]) -> None:
    forked, fork_notes = _run(tmp_path, folders, "fork")
    execd, exec_notes = _run(tmp_path, folders, "exec")
    key = lambda r: (r["method"], r["seed"])  # noqa: E731
    assert len(forked) == len(execd) == 10
    for a, b in zip(sorted(forked, key=key), sorted(execd, key=key)):
        assert a["status"] == b["status"] == "ok", (a, b)
        assert a["model"] == b["model"], (a, b)  # the same model, fit for fit
        assert a["job_id"] == b["job_id"]
    for notes, marker in (
        (fork_notes, "srtui.engine.process.fork_server"),
        (exec_notes, "srtui.engine.process.job_worker"),
    ):
        # every job of each folder noted its fit, and the thread it left running noted after it
        noted = Counter(what for what, _ in notes)
        assert noted == dict.fromkeys(["importer", "threads", "forker", "late-thread"], 2), notes
        assert all(marker in where for _, where in notes), notes  # really forked / exec'd


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_folders_fork_when_their_imports_are_known_fork_safe_unless_the_suite_says(
    tmp_path: Path, folders: list[Path]
) -> None:
    # a folder importing a library not known fork-safe (here at fit time) is exec'd, and says why
    odd = tmp_path / "methods" / "odd"
    odd.mkdir()
    (odd / "regressor.py").write_text(textwrap.dedent(_HEAD) + "def fit():\n    import notforksafe\n\nest = None\n")
    # a folder of its own numpy would get the server's numpy when forked: exec'd
    shadow = tmp_path / "methods" / "shadow"
    shadow.mkdir()
    (shadow / "regressor.py").write_text(textwrap.dedent(_HEAD) + "est = None\n")
    (shadow / "numpy.py").write_text("")
    folders = [*folders, odd, shadow]
    measured = "fork for forker, importer, linear, probe-forks, threads;"
    for fork_safe, expected in (
        (False, "fork for linear, probe-forks;"),
        (True, "fork for forker, importer, linear, odd, probe-forks, shadow, threads;"),
        (None, measured),
    ):
        args = [
            "run",
            str(_suite(tmp_path, fork_safe)),
            "--methods",
            "linear,probe-forks,importer,threads,forker,odd,shadow",
            "--dry-run",
            "--workspace",
            str(tmp_path / "ws"),
        ]
        for folder in folders:
            args += ["--method-dir", str(folder)]
        proc = srtui(*args, check=True)
        assert expected in proc.stdout, proc.stdout
        notes = [line for line in proc.stderr.splitlines() if "runs exec'd" in line]
        if fork_safe is None:
            assert notes == [
                "note: odd runs exec'd: it imports notforksafe, not known fork-safe",
                "note: shadow runs exec'd: its own numpy would shadow the library a fork server pre-imports",
            ], proc.stderr
        else:
            assert notes == [], proc.stderr
    forced = srtui(
        "run",
        str(_suite(tmp_path, False)),
        "--methods",
        "importer",
        "--method-dir",
        str(folders[0]),
        "--launcher",
        "fork",
        "--dry-run",
        "--workspace",
        str(tmp_path / "ws"),
        check=True,
    )
    assert "importer is not declared fork-safe" in forced.stderr


_DRIVER = """
import os, sys, time
from pathlib import Path
import numpy as np
from srtui.engine.process import fork_client, launch
from srtui.engine.process.job_io import JobPayload
from srtui.engine.process.supervise import run_job
from srtui.engine.spec import JobSpec, Limits

tmp = Path(sys.argv[1])
X = np.arange(40.0).reshape(20, 2)
np.savez(tmp / "d.npz", X_train=X, y_train=X[:, 0] * 2 + 1, X_test=X, feature_names=np.array(["x0", "x1"]))
def job(i, seconds=0.0):
    params = {"seconds": seconds} if sys.argv[2] == "probe-sleep" else {}
    spec = JobSpec("s", "t", sys.argv[2], i, Limits(time_s=90, mem_mb=2000), "f", "v", params)
    payload = JobPayload(spec, 1, "fstest", data_path=str(tmp / "d.npz"), launcher="fork")
    return run_job(payload, tmp / f"j{i}")

def server_pid():
    [server] = launch.POOL.servers.values()
    return server.pid

first = job(0)
print("first", first.status, first.model, server_pid(), flush=True)
if sys.argv[2] == "linear":
    os.kill(server_pid(), 9)  # a crashed server
    time.sleep(0.5)
    second = job(1)
    print("second", second.status, second.model, server_pid(), flush=True)
    fork_client.LEAK_BYTES = 0  # any growth now counts as a leak
    third = job(2)
    print("third", third.status, third.model, server_pid(), flush=True)
else:
    job(1, 80)  # sleeps until the driver is killed
"""


def _driver(tmp_path: Path, method: str) -> subprocess.Popen:
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), method],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_crashed_or_leaking_server_is_replaced(tmp_path: Path) -> None:
    driver = _driver(tmp_path, "linear")
    out, err = driver.communicate(timeout=240)
    assert driver.returncode == 0, err
    lines = dict((ln.split()[0], ln.split()[1:]) for ln in out.splitlines())
    assert [lines[k][0] for k in ("first", "second", "third")] == ["ok", "ok", "ok"], out
    assert lines["first"][1:-1] == lines["second"][1:-1] == lines["third"][1:-1]  # the same model
    pids = [lines[k][-1] for k in ("first", "second", "third")]
    assert len(set(pids)) == 3, pids  # killed: replaced; leaking: replaced
    assert not psutil.pid_exists(int(pids[0])) or psutil.Process(int(pids[0])).status() == psutil.STATUS_ZOMBIE


def _forked_jobs(server: psutil.Process) -> list[psutil.Process]:
    """The server's children that carry a job's token (its other child makes its jobs' inits)."""
    out = []
    for child in server.children():
        try:
            if not child.environ().get("SRTUI_JOB_TOKEN", "forkserver-").startswith("forkserver-"):
                out.append(child)
        except psutil.Error:
            continue
    return out


def test_server_and_its_jobs_die_with_the_driver(tmp_path: Path) -> None:
    driver = _driver(tmp_path, "probe-sleep")
    try:
        assert driver.stdout is not None
        line = driver.stdout.readline()
        assert line.startswith("first"), (line, driver.stderr.read() if driver.stderr else "")
        server = psutil.Process(int(line.split()[-1]))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _forked_jobs(server):
            time.sleep(0.05)
        assert _forked_jobs(server), "the sleeping job never started"
        jobs = server.children(recursive=True)  # its jobs, and the maker of their inits with the inits
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    _gone, alive = psutil.wait_procs([server, *jobs], timeout=10)
    assert not alive, alive


def test_the_probe_folders_of_the_containment_tests_fork_from_the_folder_server(tmp_path: Path) -> None:
    # tests/probe_folders.py: `--launcher folder` runs each probe as a folder, which auto forks
    args = ["run", "--launcher", "folder", "smoke", "--methods", "probe-escape,probe-sleep,linear"]
    args += ["--workspace", str(tmp_path / "ws")]
    proc = srtui(*args, "--dry-run", check=True)
    assert "launcher: fork for linear, probe-escape, probe-sleep;" in proc.stdout, proc.stdout
    assert "runs exec'd" not in proc.stderr, proc.stderr
    from probe_folders import as_launched

    assert as_launched(args)[:3] == ["run", "--launcher", "auto"]
    assert sum(a == "--method-dir" for a in as_launched(args)) == 2
