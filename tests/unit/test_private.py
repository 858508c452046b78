"""engine/private.py: srtui's one private folder outside a workspace (issue 54)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from srtui.engine import private


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import tempfile

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_the_folder_is_made_0700_and_ours(tmpdir_env: Path) -> None:
    folder = private.folder_for("pids", "a workspace id")
    for path in (tmpdir_env / f"srtui-{os.geteuid()}", folder):
        st = path.lstat()
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700


def test_an_open_mode_or_a_link_is_refused_not_repaired(tmpdir_env: Path) -> None:
    base = tmpdir_env / f"srtui-{os.geteuid()}"
    base.mkdir(mode=0o700)
    base.chmod(0o770)
    with pytest.raises(private.PrivateDirError, match="mode 770"):
        private.private_dir()
    assert stat.S_IMODE(base.stat().st_mode) == 0o770
    base.rmdir()
    (tmpdir_env / "other").mkdir(mode=0o700)
    base.symlink_to(tmpdir_env / "other")
    with pytest.raises(private.PrivateDirError, match="not a folder"):
        private.private_dir()


def test_files_open_through_no_link_and_only_if_ours(tmpdir_env: Path) -> None:
    folder = private.private_dir("cores")
    target = tmpdir_env / "elsewhere"
    (folder / "core-0").symlink_to(target)
    with pytest.raises(OSError) as caught:
        private.open_file(folder / "core-0", os.O_CREAT | os.O_RDWR)
    assert caught.value.errno == errno.ELOOP and not target.exists()
    fd = private.open_file(folder / "core-1", os.O_CREAT | os.O_RDWR)
    os.close(fd)
    assert stat.S_IMODE((folder / "core-1").stat().st_mode) == 0o600
    if os.geteuid() == 0:  # a file of another owner in the folder is refused
        os.chown(folder / "core-1", 65534, 65534)
        with pytest.raises(private.PrivateDirError, match="not a regular file of uid"):
            private.open_file(folder / "core-1", os.O_RDWR)


def test_tags_verify_only_with_this_users_key(tmpdir_env: Path) -> None:
    mark = private.tag("record x")
    assert private.tagged("record x", mark) and not private.tagged("record y", mark)
    assert not private.tagged("record x", "0" * 32)
    key = private.private_dir() / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_the_runtime_dir_is_used_only_when_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert private.base_dir() == runtime / "srtui"
    runtime.chmod(0o777)
    assert private.base_dir() != runtime / "srtui"


def test_interpreters_started_through_multiprocessing_get_minus_p() -> None:
    code = (
        "import multiprocessing.util as u; from srtui.engine.private import isolate_interpreters; "
        "isolate_interpreters(); isolate_interpreters(); print(u._args_from_interpreter_flags())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().count("'-P'") == 1, out.stdout


def test_multiprocessing_imported_after_the_cli_starts_gets_minus_p_too() -> None:
    """A command that never starts such a child does not import multiprocessing for it (#56):
    the flags are wrapped as the module is imported, before its importer sees it."""
    code = (
        "import sys; from srtui.engine.private import isolate_interpreters; isolate_interpreters(); "
        "assert 'multiprocessing.util' not in sys.modules; "
        "from multiprocessing import util as u; import multiprocessing.spawn; isolate_interpreters(); "
        "print(u._args_from_interpreter_flags())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().count("'-P'") == 1, out.stdout + out.stderr


def test_a_long_tmpdir_does_not_break_the_checkers_forkserver(tmp_path) -> None:
    """Python 3.11 puts multiprocessing's forkserver socket in the temp dir as it is: a long
    TMPDIR (pytest's under xdist) made `srtui methods check` fail "AF_UNIX path too long". The
    socket's folder is now private and short (srtui.engine.private.socket_dir)."""
    import os
    import subprocess
    import sys

    long = tmp_path / ("x" * 60) / ("y" * 40)
    long.mkdir(parents=True)
    code = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(3,), daemon=True).start()  # not single-threaded: forkserver\n"
        "from srtui.engine.outcome_check import start_checkers\n"
        "start_checkers()\n"
        "from srtui.engine.pool import TimedPool\n"
        "pool = TimedPool(abs, workers=1, timeout=30)\n"
        "print(pool.ctx.get_start_method(), [r.value for r in pool.run([(1, -3)])])\n"
        "pool.close()\n"
    )
    env = {**os.environ, "TMPDIR": str(long)}
    done = subprocess.run([sys.executable, "-P", "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["forkserver", "[3]"], done.stdout
