"""Issue 54, 2: what srtui keeps outside a workspace lives in one private folder per user
(engine/private.py), and nothing another account plants is acted on.

Before, every `srtui run` swept ``$TMPDIR/srtui-pids-UID-HASH`` and killed what its records
named, whoever owned them, and Dask workers opened ``$TMPDIR/srtui-cores-UID-HASH/core-N``
through any link. These tests plant files as a real second account (``srtuitest``, through
``runuser``): a record naming a process of ours (a ``sleep`` carrying this test's own token) in
the old folder, in the workspace's ``cache/pids`` and in a private folder the other account made
first; core-lock links to a file that must never be created. Nothing is killed or created, and
a private folder of another owner is never used, nor does it stop srtui (session 19): srtui says
so in one line and goes to its spare folder in its home's cache, checked the same way."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

USER = "srtuitest"


def _second_account() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: files are planted as a second account")
    if shutil.which("runuser") is None:
        pytest.skip("needs runuser (util-linux) to plant files as a second account")
    if subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
        made = subprocess.run(["useradd", "-m", USER], capture_output=True, text=True)
        if made.returncode != 0 and subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
            pytest.skip(f"cannot make the account {USER}: {made.stderr.strip()}")


def as_other(*argv: str) -> None:
    subprocess.run(["runuser", "-u", USER, "--", *argv], check=True, capture_output=True, timeout=60)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable temp dir (as /tmp) the second account can reach."""
    _second_account()
    folder = Path(tempfile.mkdtemp(prefix="srtui54-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def victim() -> Iterator[psutil.Process]:
    """A process of ours that a planted record names: it carries this test's own token, and
    only this test ends it."""
    token = f"srtui54-victim-{uuid.uuid4().hex}"
    proc = subprocess.Popen(["sleep", "600"], env={"PATH": os.environ["PATH"], "SRTUI54": token})
    yield psutil.Process(proc.pid)
    proc.kill()
    proc.wait()


def record_of(pid: int) -> str:
    p = psutil.Process(pid)
    return f"driver 1:0.000 {'0' * 32}\n{pid} {p.create_time()!r} {os.getsid(pid)}\n"


def env_with(tmpdir: Path) -> dict[str, str]:
    """The temp dir and a home of this test's own (``tmpdir/home``: where a spare folder goes)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME")}
    env["TMPDIR"] = str(tmpdir)
    (tmpdir / "home").mkdir(mode=0o700, exist_ok=True)
    env["HOME"] = str(tmpdir / "home")
    return env


def spare_of(tmpdir: Path) -> Path:
    """The spare folder of ``tmpdir``'s private folder (srtui.engine.private.spare_dir)."""
    usual = tmpdir / f"srtui-{os.geteuid()}"
    code = "from pathlib import Path; from srtui.engine.private import spare_dir; "
    code += f"print(spare_dir(Path({str(usual)!r})))"
    done = subprocess.run([sys.executable, "-P", "-c", code], env=env_with(tmpdir), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def warnings_in(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr[-2000:]
    return [line for line in stderr.splitlines() if line.startswith("srtui: warning:")]


def srtui_run(workspace: Path, tmpdir: Path, suite: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "srtui", "run", str(suite), "-w", str(workspace), "--retry-failed"]
    return subprocess.run(argv, env=env_with(tmpdir), capture_output=True, text=True, timeout=600)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "p.toml"
    path.write_text('name = "p"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\nseeds = [1]\n')
    return path


@pytest.mark.slow  # three runs, over 8 s (16 s under load): CI's slow step runs it
def test_records_another_account_planted_are_never_acted_on(shared: Path, victim, suite: Path) -> None:
    workspace = shared / "ws"
    first = srtui_run(workspace, shared, suite)
    assert first.returncode == 0, first.stderr[-2000:]
    with sqlite3.connect(f"file:{workspace / 'srtui.db'}?mode=ro", uri=True) as conn:
        workspace_id = conn.execute("SELECT value FROM meta WHERE key = 'workspace_id'").fetchone()[0]
    digest = hashlib.sha1(workspace_id.encode()).hexdigest()[:12]
    record = record_of(victim.pid)
    # the folder an older srtui swept, made and filled by the other account
    old = shared / f"srtui-pids-0-{digest}"
    as_other("mkdir", "-m", "0777", str(old))
    as_other("sh", "-c", f"printf '%s' '{record}' > {old}/job-a1")
    # a record in the workspace's own cache/pids: written by the other account, moved in
    as_other("sh", "-c", f"printf '%s' '{record}' > {shared}/planted")
    (workspace / "cache" / "pids").mkdir(parents=True, exist_ok=True)
    os.rename(shared / "planted", workspace / "cache" / "pids" / "job-a1")
    again = srtui_run(workspace, shared, suite)
    assert again.returncode == 0, again.stderr[-2000:]
    assert victim.is_running() and victim.status() != psutil.STATUS_ZOMBIE, "a planted record killed our process"
    # our own record without this user's tag (forged by copying our file's form) is not acted on either
    (workspace / "cache" / "pids" / "forged").write_text(record)
    third = srtui_run(workspace, shared, suite)
    assert third.returncode == 0, third.stderr[-2000:]
    assert victim.is_running() and victim.status() != psutil.STATUS_ZOMBIE


def test_a_private_folder_another_account_made_first_is_never_used_nor_stops_srtui(
    shared: Path, victim, suite: Path
) -> None:
    """The other account makes ``$TMPDIR/srtui-0`` (root's private folder) itself, with a record
    and core-lock links inside: srtui uses none of it, says so in one line and runs in its spare
    folder; nothing is killed, nothing created where a link points."""
    target = shared / "root-would-create-this"
    folder = shared / f"srtui-{os.geteuid()}"
    as_other("mkdir", "-m", "0700", str(folder))
    as_other("mkdir", "-p", str(folder / "pids" / "x"), str(folder / "cores" / "y"))
    as_other("sh", "-c", f"printf '%s' '{record_of(victim.pid)}' > {folder}/pids/x/job-a1")
    for core in range(os.cpu_count() or 1):
        as_other("ln", "-s", str(target), str(folder / "cores" / "y" / f"core-{core}"))
    proc = srtui_run(shared / "ws", shared, suite)
    assert proc.returncode == 0, proc.stderr[-2000:]
    spare, warned = spare_of(shared), warnings_in(proc.stderr)
    assert len(warned) == 1, proc.stderr
    assert f"{folder} belongs to uid" in warned[0] and "refused" in warned[0] and f"using {spare} instead" in warned[0]
    st = spare.lstat()
    assert st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o700 and (spare / "key").exists()
    # a Dask worker's core lock (srtui.engine.backends.dask_worker.worker_core), in a process of its own
    code = "from srtui.engine.backends.dask_worker import worker_core; print(worker_core('y'))"
    lock = subprocess.run([sys.executable, "-P", "-c", code], env=env_with(shared), capture_output=True, text=True)
    assert lock.returncode == 0 and len(warnings_in(lock.stderr)) == 1, lock.stderr
    assert list((spare / "cores" / hashlib.sha1(b"y").hexdigest()[:12]).iterdir()), "the lock is in the spare folder"
    assert not target.exists(), "a core lock was created where another account's link pointed"
    assert victim.is_running() and victim.status() != psutil.STATUS_ZOMBIE
    assert {p.name for p in folder.iterdir()} == {"pids", "cores"}, "srtui wrote into the other account's folder"


def methods_check(tmpdir: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "srtui", "methods", "check", "probe-noop"]
    env = {**env_with(tmpdir), "SRTUI_KEEP_SERVER_S": "0"}  # no fork server outlives the test's folders
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, cwd=tmpdir)


def test_a_link_or_a_file_another_account_planted_does_not_stop_a_command(shared: Path) -> None:
    """`srtui methods check` (it needs the private folder) with another account's link or file at
    its name: it works in the spare folder, with one warning; once the spare folder exists, a
    later command goes there too (quietly) after the planted file is gone, so every process of
    this user agrees on one folder."""
    folder = shared / f"srtui-{os.geteuid()}"
    elsewhere = shared / "elsewhere"
    as_other("mkdir", "-m", "0777", str(elsewhere))
    as_other("ln", "-s", str(elsewhere), str(folder))
    proc = methods_check(shared)
    assert proc.returncode == 0, proc.stderr[-2000:]
    spare = spare_of(shared)
    warned = warnings_in(proc.stderr)
    assert len(warned) == 1 and str(folder) in warned[0] and str(spare) in warned[0], proc.stderr
    assert not list(elsewhere.iterdir()), "srtui wrote through the other account's link"
    as_other("rm", str(folder))
    as_other("touch", str(folder))
    proc = methods_check(shared)
    assert proc.returncode == 0 and len(warnings_in(proc.stderr)) == 1, proc.stderr[-2000:]
    as_other("rm", str(folder))
    proc = methods_check(shared)
    assert proc.returncode == 0 and warnings_in(proc.stderr) == [], proc.stderr[-2000:]
    assert not folder.exists(), "a later process went back to the usual folder"


def test_a_spare_folder_another_account_made_first_is_refused_in_one_line(shared: Path) -> None:
    """The spare folder is owner-checked too: a home cache others may write in (sticky, as /tmp)
    where the other account made ``srtui`` first: the command fails in one line naming both
    folders, and never uses either."""
    folder = shared / f"srtui-{os.geteuid()}"
    as_other("mkdir", "-m", "0700", str(folder))
    env_with(shared)
    (shared / "home").chmod(0o711)  # the other account may pass through, not write
    cache = shared / "home" / ".cache"
    cache.mkdir(mode=0o700)
    cache.chmod(0o1777)
    as_other("mkdir", "-m", "0777", str(cache / "srtui"))
    proc = methods_check(shared)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(folder) in lines[0] and f"{cache / 'srtui'} is not a folder of uid" in lines[0], lines[0]
    assert not list((cache / "srtui").iterdir())


def test_core_locks_never_follow_links_planted_in_the_old_folder(shared: Path) -> None:
    """The old ``$TMPDIR/srtui-cores-UID-HASH`` full of links is no longer used: the locks are
    made in the private folder, 0700, of ours."""
    scope = "tcp://127.0.0.1:1"
    digest = hashlib.sha1(scope.encode()).hexdigest()[:12]
    old = shared / f"srtui-cores-{os.geteuid()}-{digest}"
    target = shared / "root-would-create-this"
    as_other("mkdir", "-m", "0777", str(old))
    for core in range(os.cpu_count() or 1):
        as_other("ln", "-s", str(target), str(old / f"core-{core}"))
    code = f"from srtui.engine.backends.dask_worker import worker_core; print(worker_core({scope!r}))"
    lock = subprocess.run([sys.executable, "-P", "-c", code], env=env_with(shared), capture_output=True, text=True)
    assert lock.returncode == 0, lock.stderr
    assert not target.exists()
    mine = shared / f"srtui-{os.geteuid()}"
    st = mine.lstat()
    assert st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o700
    assert list((mine / "cores" / digest).iterdir()), "the lock lives in the private folder"


def test_a_private_folder_open_to_others_is_refused_in_one_line(tmp_path: Path, suite: Path) -> None:
    """No second account needed: our own folder with mode 755 (or a link) is refused, not fixed."""
    tmpdir = tmp_path / "t"
    tmpdir.mkdir()
    folder = tmpdir / f"srtui-{os.geteuid()}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    proc = srtui_run(tmp_path / "ws", tmpdir, suite)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "mode 755" in proc.stderr
    folder.rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    folder.symlink_to(tmp_path / "elsewhere")
    proc = srtui_run(tmp_path / "ws", tmpdir, suite)
    assert proc.returncode != 0 and "not a folder" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
