"""engine/private.py: srtui's one private folder outside a workspace (issue 54)."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from srtui.engine import private


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp dir and a home of this test's own (a spare folder is made in the home's cache)."""
    import tempfile

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "home").mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(private, "_WARNED", set())
    return tmp_path


OTHER = 65534  # nobody: what another account made is chowned to it


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: a folder of another owner is made with chown")


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


def test_a_folder_link_or_file_of_another_owner_sends_srtui_to_its_spare_folder_once(
    tmpdir_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another account's folder at the usual name is never used, nor does it stop srtui: a spare
    folder in the home's cache is (0700, ours), said once per process in one line."""
    needs_root()
    usual = tmpdir_env / f"srtui-{os.geteuid()}"
    spare = private.spare_dir(usual)
    assert spare.parent == tmpdir_env / "home" / ".cache" / "srtui" and spare.name.startswith("run-")
    target = tmpdir_env / "target"  # where the other account's link points: nothing made there
    target.mkdir()
    for make in (lambda: usual.mkdir(mode=0o700), lambda: usual.symlink_to(target), lambda: usual.write_text("")):
        make()
        os.chown(usual, OTHER, OTHER, follow_symlinks=False)
        private._WARNED.clear()
        assert private.private_dir("pids") == spare / "pids"
        assert private.private_dir() == spare and private.tag("x") == private.tag("x")
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and f"{usual} belongs to uid {OTHER}" in err[0] and f"using {spare} instead" in err[0]
        st = spare.lstat()
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
        assert usual.lstat().st_uid == OTHER and not any(target.iterdir())
        assert not (usual.is_dir() and any(usual.iterdir()))
        usual.rmdir() if usual.is_dir() and not usual.is_symlink() else usual.unlink()


def test_once_the_spare_folder_exists_every_process_uses_it(tmpdir_env: Path, capsys) -> None:
    """The fork servers, pid records and core locks are shared: a process that starts after the
    other account's folder is gone still goes where the others went (quietly), and makes no
    usual folder."""
    needs_root()
    usual = tmpdir_env / f"srtui-{os.geteuid()}"
    usual.mkdir(mode=0o700)
    os.chown(usual, OTHER, OTHER)
    spare = private.private_dir()
    usual.rmdir()
    capsys.readouterr()
    code = "from srtui.engine.private import private_dir; print(private_dir())"
    env = {**os.environ, "TMPDIR": str(tmpdir_env), "HOME": str(tmpdir_env / "home")}
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("XDG_CACHE_HOME", None)
    done = subprocess.run([sys.executable, "-P", "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(spare) and done.stderr == "", done.stderr
    assert not usual.exists()


def test_the_spare_folder_is_owner_checked_too(tmpdir_env: Path) -> None:
    """Each part of the spare folder's path is checked: a part of another owner, a home others
    may write in, a spare folder of ours left open or made a link: refused in one line naming
    the refused usual folder too."""
    needs_root()
    home, usual = tmpdir_env / "home", tmpdir_env / f"srtui-{os.geteuid()}"
    usual.mkdir(mode=0o700)
    os.chown(usual, OTHER, OTHER)
    spare = private.spare_dir(usual)
    cache = home / ".cache" / "srtui"
    cache.mkdir(parents=True, mode=0o700)
    os.chown(cache, OTHER, OTHER)
    why = rf"{re.escape(str(usual))} belongs to uid {OTHER}.*spare folder is unusable.*{re.escape(str(cache))}"
    with pytest.raises(private.PrivateDirError, match=why):
        private.private_dir()
    os.chown(cache, os.geteuid(), os.geteuid())
    home.chmod(0o777)
    with pytest.raises(private.PrivateDirError, match="writable by others"):
        private.private_dir()
    home.chmod(0o700)
    spare.mkdir(mode=0o700)
    spare.chmod(0o755)
    with pytest.raises(private.PrivateDirError, match="mode 755"):
        private.private_dir()
    spare.rmdir()
    spare.symlink_to(tmpdir_env)
    with pytest.raises(private.PrivateDirError, match="not a folder"):
        private.private_dir()
    spare.unlink()
    assert private.private_dir() == spare
    os.chown(spare, OTHER, OTHER)  # made by another account (root could): refused, no third place
    with pytest.raises(private.PrivateDirError, match=f"{re.escape(str(spare))} belongs to uid {OTHER}"):
        private.private_dir()


def test_no_home_no_spare_folder_relative_to_the_cwd(tmpdir_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needs_root()
    usual = tmpdir_env / f"srtui-{os.geteuid()}"
    usual.mkdir(mode=0o700)
    os.chown(usual, OTHER, OTHER)
    monkeypatch.chdir(tmpdir_env)
    for home in ("", "rel"):  # HOME="" is / to Path.home(), "rel" the cwd's folder: neither is used
        monkeypatch.setenv("HOME", home)
        with pytest.raises(RuntimeError, match="no home folder"):  # first: else a regression makes /.cache
            private.spare_dir(usual)
        with pytest.raises(private.PrivateDirError, match=r"spare folder is unusable.*no home folder"):
            private.private_dir()
    assert not (tmpdir_env / "rel").exists()


def test_a_socket_folder_goes_to_the_spare_folder_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """multiprocessing's socket folder: the spare folder when it is short enough."""
    needs_root()
    import shutil
    import tempfile

    short = Path(tempfile.mkdtemp(prefix="s19-", dir="/tmp"))  # a home whose spare fits a socket
    try:
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(short))
        monkeypatch.setattr(tempfile, "tempdir", str(short))
        monkeypatch.setattr(private, "_WARNED", set())
        usual = short / f"srtui-{os.geteuid()}"
        usual.mkdir(mode=0o700)
        os.chown(usual, OTHER, OTHER)
        assert private.socket_dir() == private.spare_dir(usual)
        assert len(os.fsencode(private.socket_dir())) <= private.SOCKET_BASE_MAX
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_a_socket_folder_with_no_short_private_folder_has_a_name_only_this_user_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long TMPDIR, another account's ``/tmp/srtui-UID`` and a long home: the kept fork
    servers' sockets never go into /tmp itself, but into a folder named with this user's key."""
    needs_root()
    import shutil
    import tempfile

    short = Path(tempfile.mkdtemp(prefix="s19-", dir="/tmp"))  # stands for /tmp
    try:
        long = tmp_path / ("x" * 70)
        (long / "home").mkdir(parents=True, mode=0o700)
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(long / "home"))
        monkeypatch.setattr(tempfile, "tempdir", str(long))
        monkeypatch.setattr(private, "SHORT_TMP", short)
        monkeypatch.setattr(private, "_WARNED", set())
        (short / f"srtui-{os.geteuid()}").mkdir(mode=0o700)
        os.chown(short / f"srtui-{os.geteuid()}", OTHER, OTHER)
        folder = private.socket_dir()
        assert folder.parent == short and folder.name == f"srtui-{os.geteuid()}-{private.tag('socket folder')[:16]}"
        st = folder.lstat()
        assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
        assert private.socket_dir() == folder and len(os.fsencode(folder)) <= private.SOCKET_BASE_MAX
        assert (long / f"srtui-{os.geteuid()}" / "key").exists()  # the key: in the (long) private folder
        assert not any(p.name.endswith(".sock") for p in short.iterdir())
    finally:
        shutil.rmtree(short, ignore_errors=True)


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
