"""Issue 27: every file a job leaves is untrusted. ``result.json`` or ``predictions.npz`` replaced
by a FIFO, a link to ``/dev/zero``, a directory or a 1 TB sparse file makes that job an error
(the driver neither hangs nor fills its memory and goes on); the workspace's logs are never
written through a link a job planted; a job's scratch dir is removed whatever it left."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import FALLBACK, results_json, srtui

REGRESSOR = """
import atexit, os
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
WHICH, HOW = {which!r}, {how!r}
def plant():
    # after the worker wrote its files (atexit runs when it exits): put something else there
    os.remove(WHICH)
    if HOW == "fifo":
        os.mkfifo(WHICH)
    elif HOW == "devzero":
        os.symlink("/dev/zero", WHICH)
    elif HOW == "dir":
        os.mkdir(WHICH)
    elif HOW == "sparse":
        with open(WHICH, "wb") as fh:
            fh.truncate(1 << 40)
class Hostile(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        atexit.register(plant)
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Hostile()
def model(est, X=None):
    return "x1"
"""

CASES = [(which, how) for which in ("result.json", "predictions.npz") for how in ("fifo", "devzero", "dir", "sparse")]


def _folder(root: Path, name: str, text: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "regressor.py").write_text(text)
    return folder


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_hostile_result_files_make_their_jobs_errors_and_the_run_goes_on(workspace: Path, tmp_path: Path) -> None:
    dirs: list[str] = []
    names = []
    for which, how in CASES:
        name = f"hostile-{which.split('.')[0].replace('_', '')}-{how}"
        names.append(name)
        dirs += ["--method-dir", str(_folder(tmp_path, name, REGRESSOR.format(which=which, how=how)))]
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        ",".join([*names, "probe-noop"]),
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        *dirs,
        "--workspace",
        str(workspace),
        timeout=240,  # today's driver hangs on the FIFO until killed
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["method"]: r for r in results_json(workspace)}
    assert rows["probe-noop"]["status"] == "ok"
    for name in names:
        row = rows[name]
        assert row["status"] == "error", row
        assert "worker result unreadable" in row["error"] and "\n" not in row["error"], row
    assert not any((workspace / "cache" / "jobs").iterdir()), "a scratch dir was left behind"


LOG_PLANTER = """
import os
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
TARGET, MODE = {target!r}, {mode!r}
class Planter(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        logs = os.path.join("..", "..", "..", "logs")  # the job's cwd is cache/jobs/JOB-aN
        job = os.path.basename(os.getcwd())
        job_id, attempt = job.rsplit("-a", 1)
        if MODE == "dir":
            os.rename(logs, logs + ".moved")
            os.symlink(TARGET, logs)
        elif MODE == "hardlink":  # a regular file, but one whose writes land in a file elsewhere
            # reached from the cwd's mount (the workspace's sibling): a root driver's job reaches
            # TARGET's path through a mount of its own namespace, and a link across mounts is EXDEV
            outside = os.path.join("..", "..", "..", "..", os.path.basename(TARGET), "stdout")
            os.link(outside, os.path.join(logs, f"{{job_id}}.a{{attempt}}.stdout"))
        else:
            for stream in ("stdout", "stderr"):
                os.symlink(os.path.join(TARGET, stream), os.path.join(logs, f"{{job_id}}.a{{attempt}}.{{stream}}"))
        print("output of the planter " * 10)
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Planter()
def model(est, X=None):
    return "x1"
"""


def _open_to_the_job(tmp_path: Path, workspace: Path, target: Path) -> None:
    """Under root the fallback's job runs as a uid of its own that may not write logs/ at all
    (engine/process/fallback.py, docs/untrusted-jobs.md): the test opens the workspace and its
    logs/ to everyone, as an ordinary user's fallback job (that user) may write them, so the
    planter really plants and the driver's own guard is what is tested. No sticky bit: the
    kernel's protected_symlinks would then refuse the links in srtui's stead. The target is
    reachable and writable for the hard link (protected_hardlinks: read and write access)."""
    if os.geteuid() != 0:
        return  # the job runs as this user: it can write the workspace already
    workspace.mkdir()
    (workspace / "logs").mkdir()
    for folder in (tmp_path, workspace, workspace / "logs", target):
        folder.chmod(0o777 if folder != tmp_path else 0o755)  # tmp_path: seen whole in the job's namespace
    (target / "stdout").chmod(0o666)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("mode", ["dir", "file", "hardlink"])
def test_nothing_is_written_through_links_planted_in_logs(workspace: Path, tmp_path: Path, mode: str) -> None:
    target = tmp_path / "outside"
    target.mkdir()
    (target / "stdout").write_text("precious\n")
    folder = _folder(tmp_path, "planter", LOG_PLANTER.format(target=str(target), mode=mode))
    _open_to_the_job(tmp_path, workspace, target)
    proc = srtui(
        "run",
        "smoke",
        "--methods",
        "planter",
        "--tasks",
        "smoke-linear",
        "--seeds",
        "1",
        "--method-dir",
        str(folder),
        "--workspace",
        str(workspace),
        env=FALLBACK,  # the fallback's guard: a sealed job does not see logs/ at all (test_seal_battery)
    )
    assert proc.returncode == 0, proc.stderr
    assert (target / "stdout").read_text() == "precious\n"
    assert sorted(p.name for p in target.iterdir()) == ["stdout"], "a log was written through a link"
    [row] = results_json(workspace)
    assert row["status"] == "ok", row
    logs = workspace / "logs"
    assert logs.is_dir() and not logs.is_symlink()
    [stdout] = [p for p in logs.iterdir() if p.name.endswith(".stdout")]
    assert not stdout.is_symlink() and "output of the planter" in stdout.read_text()
    assert not os.listdir(workspace / "cache" / "jobs")


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_database_links_and_empty_database_are_refused_by_every_command(workspace: Path, tmp_path: Path) -> None:
    workspace.mkdir()
    db = workspace / "srtui.db"
    db.write_bytes(b"")
    for args in (["run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear"], ["status"], ["results"]):
        proc = srtui(*args, "--workspace", str(workspace))
        assert proc.returncode == 2 and "empty (0 bytes)" in proc.stderr, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1
    assert db.stat().st_size == 0  # not silently made a new database
    db.unlink()
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(b"")
    db.symlink_to(elsewhere)
    proc = srtui("run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(workspace))
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
    assert elsewhere.stat().st_size == 0


def test_result_json_bombs_are_refused_before_they_become_objects(tmp_path: Path) -> None:
    """Attacks found after the first version: a few MB of ``{},`` (gigabytes of dicts in the
    driver), JSON nested past Python's recursion limit, an npz whose array header claims 2**40
    floats, all made the job's error at once."""
    import io
    import zipfile

    import numpy as np

    from srtui.engine.process.job_files import read_result
    from srtui.engine.process.job_io import JobOutcome

    good = io.BytesIO()
    np.savez(good, train_pred=np.zeros(3), test_pred=np.zeros(2))
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2**40,)})
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w") as zf:
        zf.writestr("train_pred.npy", header.getvalue() + b"\0" * 16)
        zf.writestr("test_pred.npy", header.getvalue() + b"\0" * 16)
    cases = [
        ('{"pareto": [' + ",".join(["{}"] * 200_000) + "]}", good.getvalue()),
        ("[" * 100_000 + "]" * 100_000, good.getvalue()),
        ('{"model": "x0"}', bomb.getvalue()),
    ]
    for text, npz in cases:
        (tmp_path / "result.json").write_text(text)
        (tmp_path / "predictions.npz").write_bytes(npz)
        outcome = JobOutcome("j", 1, "ok", "h", "a", "b", 0.0)
        read_result(tmp_path, outcome)
        assert outcome.status == "error" and "unreadable" in (outcome.error or ""), (text[:40], outcome.error)
