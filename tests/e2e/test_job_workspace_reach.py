"""Issue 27 (attacks after the merge): a job's reach into the workspace.

A job runs as the user next to the workspace, so it can rewrite the shared task data
(``cache/data/<fingerprint>.npz``) other jobs read, put a FIFO, a folder or a link in its place, or
replace a workspace folder on the way (``cache``, ``cache/data``) by a link to a folder elsewhere.
The next job of another method on the same task must fit the true data (its result equals a
clean run's), and srtui must write nothing through the link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import results_json, srtui

HOSTILE = """
import os, pathlib, shutil
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
MODE = os.environ["SRTUI_PROBE_MODE"]
OUTSIDE = pathlib.Path(os.environ["SRTUI_PROBE_OUTSIDE"])
def _workspace():
    here = pathlib.Path.cwd()
    for p in [here, *here.parents]:
        if (p / "srtui.db").exists():
            return p
    raise RuntimeError("no workspace above " + str(here))
def _attack():
    ws = _workspace()
    data = ws / "cache" / "data"
    for f in sorted(data.glob("*.npz")):
        if MODE == "rewrite":  # in place, same inode: the target's values made zero
            with np.load(f) as z:
                arrays = {k: z[k] for k in z.files}
            arrays["y_train"] = np.zeros_like(arrays["y_train"])
            arrays["X_train"] = np.zeros_like(arrays["X_train"])
            with open(f, "r+b") as fh:
                np.savez(fh, **arrays)
                fh.truncate()
            continue
        f.unlink()
        if MODE == "fifo":
            os.mkfifo(f)
        elif MODE == "dir":
            f.mkdir()
        elif MODE == "symlink":
            os.symlink("/dev/zero", f)
    if MODE == "cache-link":  # the whole cache folder: a link to a folder elsewhere
        os.rename(ws / "cache", ws / "cache-moved")
        os.symlink(OUTSIDE, ws / "cache")
    elif MODE == "data-link":
        os.rename(data, ws / "cache" / "data-moved")
        os.symlink(OUTSIDE, data)
class Hostile(RegressorMixin, BaseEstimator):
    def __init__(self, max_time=100):
        self.max_time = max_time
    def fit(self, X, y):
        _attack()
        self.mean_ = float(np.mean(y))
        return self
    def predict(self, X):
        return np.full(len(X), self.mean_)
est = Hostile()
def model(est, X=None):
    return str(est.mean_)
"""

KEYS = ("status", "r2_test", "r2_train", "model", "mse_test")


def _run(ws: Path, methods: str, env: dict[str, str], folder: Path | None = None) -> list[dict]:
    args = ["run", "smoke", "--methods", methods, "--tasks", "smoke-linear", "--seeds", "1", "--jobs", "1"]
    if folder is not None:
        args += ["--method-dir", str(folder)]
    proc = srtui(*args, "--workspace", str(ws), env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return results_json(ws)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict:
    ws = tmp_path_factory.mktemp("clean") / "ws"
    [row] = _run(ws, "linear", {})
    assert row["status"] == "ok", row
    return {k: row[k] for k in KEYS}


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.lstat().st_size) for p in folder.rglob("*"))


SLOW = pytest.mark.slow  # the same guard as the fast cases: another kind of file in the way


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    "mode",
    [
        "rewrite",
        "fifo",
        "cache-link",
        pytest.param("dir", marks=SLOW),
        pytest.param("symlink", marks=SLOW),
        pytest.param("data-link", marks=SLOW),
    ],
)
def test_a_job_cannot_change_the_data_the_next_job_fits(mode: str, clean: dict, tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "regressor.py").write_text(HOSTILE)
    outside = tmp_path / "outside"  # where a link points: shaped like the folder it replaced
    for sub in ("jobs", "pids", "data", "tasks"):
        (outside / sub).mkdir(parents=True)
    (outside / "data" / "marker").write_text("the user's own file")
    before = _listing(outside)
    ws = tmp_path / "ws"
    env = {"SRTUI_PROBE_MODE": mode, "SRTUI_PROBE_OUTSIDE": str(outside), "SRTUI_CHECK_TIMEOUT_S": "20"}
    rows = _run(ws, "hostile,linear", env, folder)
    linear = next(r for r in rows if r["method"] == "linear")
    # the job after the attack fitted the true data: the clean run's result, to the last digit
    assert {k: linear[k] for k in KEYS} == clean, (mode, linear)
    assert _listing(outside) == before, "srtui wrote through the link"
    for part in (ws / "cache", ws / "cache" / "data"):
        assert part.is_dir() and not part.is_symlink(), part
    # and the file is true again for whatever reads it next (a later run, the app)
    [data] = [p for p in (ws / "cache" / "data").iterdir() if p.suffix == ".npz"]
    assert data.is_file() and not data.is_symlink()
    again = _run(ws, "linear", {}, None)  # nothing to run again: the stored result stands
    assert {k: next(r for r in again if r["method"] == "linear")[k] for k in KEYS} == clean
    assert os.stat(data).st_size > 0


@pytest.mark.parametrize("kind", ["symlink", "fifo", "dir", "link-above"])
def test_a_log_srtui_appends_to_is_never_written_through_what_a_job_put_there(kind: str, tmp_path: Path) -> None:
    """logs/dask.log (logging.FileHandler followed a link): appended through no link, in a folder
    reached through no link; whatever is in the way is replaced."""
    from srtui.engine.untrusted import open_append
    from srtui.engine.workspace import Workspace

    ws = Workspace(tmp_path / "ws").ensure()
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "dask.log"
    target.write_text("the user's own file")
    log = ws.logs / "dask.log"
    if kind == "symlink":
        os.symlink(target, log)
    elif kind == "fifo":
        os.mkfifo(log)
    elif kind == "dir":
        log.mkdir()
    else:  # logs/ itself a link to a folder elsewhere
        ws.logs.rmdir()
        os.symlink(outside, ws.logs)
    fd = open_append(log)
    try:
        os.write(fd, b"srtui\n")
    finally:
        os.close(fd)
    assert target.read_text() == "the user's own file"
    assert not ws.logs.is_symlink() and not log.is_symlink() and log.read_text() == "srtui\n"
