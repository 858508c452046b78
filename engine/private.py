"""The one private folder srtui keeps outside a workspace, per user and host.

Pid records of Dask workers' jobs, core locks, the fork servers' cwd: before this folder they
lived under names like ``$TMPDIR/srtui-pids-UID-HASH`` in the shared temp directory, where
another account could plant them first (a record naming a root process, a ``core-N`` link to a
root-owned file). Now everything goes under ``$XDG_RUNTIME_DIR/srtui`` (when that is set and
ours) or ``<tempdir>/srtui-UID``, made 0700 and checked on every use: a link, a file or a
group/world-accessible mode of ours is refused in one line, never repaired. What another account
put at that name (a folder, a link, a file) is never used either, but neither does it stop srtui:
it goes to a spare folder in a place only this user can write, ``<cache>/srtui/run-HOST-DIGEST``
(``$XDG_CACHE_HOME`` or ``~/.cache``; DIGEST: of the usual folder's path), every part checked,
with a one-line warning per process. Once the spare folder exists, every process of this user
that would use that usual folder uses it (whatever is there now), so concurrent processes agree
on one folder (their fork servers, pid records and core locks). Files in it open with
``O_NOFOLLOW``. A record is acted on only when its file is ours and carries a tag
made with ``secret()``, a key only this user can read.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

from srtui.engine.errors import SrtuiError

#: the flags of a file opened here: never through a link, never a terminal, not inherited
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class PrivateDirError(SrtuiError):
    """The private folder (or a file in it) is not this user's alone; one line."""


class ForeignDirError(PrivateDirError):
    """What sits at a private folder's name belongs to another account: never used, but srtui
    goes to its spare folder (``spare_dir``) rather than failing."""


def base_dir() -> Path:
    """Where the private folder is: ``$XDG_RUNTIME_DIR/srtui`` when that runtime dir exists and
    is ours, else ``<tempdir>/srtui-UID``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        try:
            st = os.stat(runtime)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022:
                return Path(runtime) / "srtui"
        except OSError:
            pass
    return Path(tempfile.gettempdir()) / f"srtui-{os.geteuid()}"


def _checked(path: Path) -> Path:
    """``path`` made 0700 if missing, then refused unless it is a real folder of ours, 0700
    (``ForeignDirError`` when what is there, of any kind, is another account's)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise PrivateDirError(f"srtui's private folder {path} is unusable: {exc.strerror}") from None
    if st.st_uid != os.geteuid():  # first: a link or a file another account planted is theirs too
        raise ForeignDirError(f"srtui's private folder {path} belongs to uid {st.st_uid}, not {os.geteuid()}: refused")
    if not stat.S_ISDIR(st.st_mode):
        raise PrivateDirError(f"srtui's private folder {path} is not a folder (a link or a file): refused")
    if st.st_mode & 0o077:
        raise PrivateDirError(
            f"srtui's private folder {path} has mode {stat.S_IMODE(st.st_mode):o}, not 700: refused (remove it)"
        )
    return path


def spare_dir(usual: Path) -> Path:
    """Where srtui goes when another account holds ``usual``: ``<cache>/srtui/run-HOST-DIGEST``,
    in this user's own cache folder, one per host (a home shared over NFS) and per usual folder."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(xdg) and not os.path.isabs(os.environ.get("HOME", "/")):
        raise RuntimeError("no home folder (HOME is not an absolute path)")  # HOME="" would be /
    cache = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    host = "".join(c if c.isalnum() or c in "-._" else "_" for c in os.uname().nodename)[:64]
    return cache / "srtui" / f"run-{host}-{hashlib.sha1(os.fsencode(usual)).hexdigest()[:8]}"


def _steady(path: Path, st: os.stat_result) -> None:
    """A folder the spare folder sits in: this user's or root's, and nobody else may rename
    what is in it (not group/world-writable, or sticky as /tmp)."""
    if not stat.S_ISDIR(st.st_mode) or st.st_uid not in (os.geteuid(), 0):
        raise PrivateDirError(f"{path} is not a folder of uid {os.geteuid()}")
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise PrivateDirError(f"{path} is writable by others (mode {stat.S_IMODE(st.st_mode):o})")


def _spare(usual: Path, why: str) -> Path:
    """``spare_dir(usual)``, each part made 0700 if missing and checked: the cache folder and its
    parent steady (``_steady``; links followed: a cache moved to another disk), ``srtui`` a real
    folder of ours, the spare folder as the private folder (``_checked``)."""
    try:
        spare = spare_dir(usual)
        top = spare.parent
        _steady(top.parent.parent, os.stat(top.parent.parent))
        with contextlib.suppress(FileExistsError):
            os.mkdir(top.parent, 0o700)
        _steady(top.parent, os.stat(top.parent))
        with contextlib.suppress(FileExistsError):
            os.mkdir(top, 0o700)
        st = os.lstat(top)
        if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid():
            raise PrivateDirError(f"{top} is not a folder of uid {os.geteuid()}")
        _steady(top, st)
        return _checked(spare)
    except (PrivateDirError, OSError, RuntimeError) as exc:  # RuntimeError: no home folder
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PrivateDirError(f"{why}; its spare folder is unusable: {detail}") from None


def _resolved(usual: Path) -> Path:
    """``usual`` checked, or its spare folder where another account holds it (or once did: a
    spare folder that exists is used by every process, so all of them agree)."""
    try:
        gone = os.path.lexists(spare_dir(usual))
    except RuntimeError:  # no home folder: the usual folder or nothing
        gone = False
    if not gone:
        try:
            return _checked(usual)
        except ForeignDirError as exc:
            return _went(usual, str(exc))
    try:
        owner = os.lstat(usual).st_uid
    except OSError:
        owner = os.geteuid()
    if owner == os.geteuid():  # nobody else's now: stay with the processes already there
        return _spare(usual, f"srtui's private folder {usual} was refused once, its spare folder used since")
    return _went(usual, f"srtui's private folder {usual} belongs to uid {owner}, not {os.geteuid()}: refused")


def _went(usual: Path, why: str) -> Path:
    """The spare folder of a refused ``usual``, said once per process (stderr, one line)."""
    import sys

    spare = _spare(usual, why)
    if usual not in _WARNED:
        _WARNED.add(usual)
        print(f"srtui: warning: {why}; using {spare} instead", file=sys.stderr)
    return spare


_WARNED: set[Path] = set()


def private_dir(*parts: str) -> Path:
    """The private folder (or a folder under it, each made 0700), checked now: ``base_dir()``,
    or its spare folder where another account holds it."""
    path = _resolved(base_dir())
    for part in parts:
        if not part or "/" in part or part in (".", ".."):
            raise ValueError(f"not a folder name: {part!r}")
        path = _checked(path / part)
    return path


#: the longest folder multiprocessing's socket folder may sit in: ``pymp-XXXXXXXX/listener-XXXXXXXX``
#: under it must fit an AF_UNIX address (107 bytes)
SOCKET_BASE_MAX = 60


#: where a short private folder is made when the usual one's path is too long for a socket
SHORT_TMP = Path("/tmp")


def socket_dir() -> Path:
    """A private folder whose path is short enough for a socket under it (multiprocessing's
    forkserver, the kept fork servers): the private folder, or (a long ``TMPDIR``)
    ``/tmp/srtui-UID``, checked as the private folder is (its spare folder too); else (both
    spare folders too long: a long home) ``/tmp/srtui-UID-TAG``, TAG made with this user's key:
    a name no other account can know to take first, the same for all of this user's processes."""
    for usual in (base_dir(), SHORT_TMP / f"srtui-{os.geteuid()}"):
        if len(os.fsencode(usual)) > SOCKET_BASE_MAX:
            continue
        folder = _resolved(usual)
        if len(os.fsencode(folder)) <= SOCKET_BASE_MAX:
            return folder
    return _checked(SHORT_TMP / f"srtui-{os.geteuid()}-{tag('socket folder')[:16]}")


def multiprocessing_sockets_in_private() -> None:
    """multiprocessing's own temp folder (its forkserver's listening socket) goes under
    ``socket_dir()``: a long ``TMPDIR`` made the checkers' forkserver fail with "AF_UNIX path too
    long" (Python 3.11 puts it in the temp dir as it is), and a shared one held it beside others'
    files. Done once, before the first forkserver starts."""
    import multiprocessing.process as mp_process
    import multiprocessing.util as mp_util

    with _SOCKETS_LOCK:
        if mp_process.current_process()._config.get("tempdir"):  # type: ignore[attr-defined]
            return  # made already: multiprocessing keeps the first for the process's life
        before = tempfile.tempdir
        tempfile.tempdir = str(socket_dir())
        try:
            mp_util.get_temp_dir()  # made now (0700, removed at exit by multiprocessing), then kept
        finally:
            tempfile.tempdir = before


_SOCKETS_LOCK = threading.Lock()


def folder_for(kind: str, scope: str, make: bool = True) -> Path:
    """A folder of one ``kind`` (``pids``, ``cores``) for one scope (a workspace id, a cluster):
    the scope is hashed, so any text can name it. ``make=False``: its path, not made (a sweep of
    what may not exist: a folder made for each `methods check`'s workspace was never removed)."""
    name = hashlib.sha1(scope.encode()).hexdigest()[:12]
    return private_dir(kind, name) if make else private_dir(kind) / name


def open_file(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` of a file in a private folder: never through a link, made with ``O_EXCL``
    where it is new, and refused unless it is a regular file of ours."""
    flags |= NOFOLLOW
    fd = -1
    if flags & os.O_CREAT:
        try:
            fd = os.open(path, flags | os.O_EXCL, mode)
        except FileExistsError:
            fd = os.open(path, flags & ~os.O_CREAT)
    else:
        fd = os.open(path, flags)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        raise PrivateDirError(f"{path} is not a regular file of uid {os.geteuid()}: refused")
    os.set_blocking(fd, True)
    return fd


def secret() -> bytes:
    """This user's key on this host (``private_dir()/key``, 0600, made once): what tags
    srtui's own records, so a record another account wrote is never acted on."""
    path = private_dir() / "key"
    if not os.path.lexists(path):  # written whole under a name of its own, then linked: the first wins
        fresh = path.with_name(f".key.{os.getpid()}.{threading.get_ident()}")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
        try:
            os.write(fd, os.urandom(32).hex().encode())
        finally:
            os.close(fd)
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(fresh)
    fd = open_file(path, os.O_RDONLY)
    try:
        key = os.read(fd, 128)
    finally:
        os.close(fd)
    if len(key) < 32:
        raise PrivateDirError(f"{path} is not srtui's key (too short): refused (remove it)")
    return key


def tag(text: str) -> str:
    """A tag of ``text`` that only this user can make (an HMAC with ``secret()``)."""
    return hmac.new(secret(), text.encode(), hashlib.sha256).hexdigest()[:32]


def tagged(text: str, mark: str) -> bool:
    """Is ``mark`` this user's tag of ``text``? False when the key is unusable."""
    try:
        return hmac.compare_digest(tag(text), mark)
    except (PrivateDirError, OSError):
        return False


def owned(fd: int) -> bool:
    """Is the open file ``fd`` this user's?"""
    try:
        return os.fstat(fd).st_uid == os.geteuid()
    except OSError as exc:
        if exc.errno == errno.EBADF:
            raise
        return False


#: the flag every interpreter srtui starts gets: no script folder, no cwd, first on ``sys.path``
#: (``python -m`` would put the cwd there, ``-c`` an empty entry: the cwd, or a planted
#: ``engine/`` in a shared temp dir, imported before srtui's own). Unlike ``-I`` it keeps
#: PYTHONPATH (a method environment finds this engine through it) and an editable install's .pth.
SAFE_PATH = "-P"


def python_command(python: str, *args: str) -> list[str]:
    """The argv of an interpreter srtui starts: ``python -P ARGS``."""
    return [python, SAFE_PATH, *args]


def isolate_interpreters() -> None:
    """Every interpreter this process starts without srtui choosing its argv (multiprocessing's
    forkserver and spawn children: the checkers, a local Dask cluster's workers) starts with
    ``-P`` too. Multiprocessing copies the parent's flags (``sys.flags``) through one function,
    which gets ``-P`` added here; not PYTHONSAFEPATH, which every other child would inherit
    (pip building a package whose setup.py imports a module beside it). Called at the CLI's
    start; a process started with ``-P`` passes it on by itself. When multiprocessing is not
    imported yet (most commands never start such a child), the function is wrapped as soon as
    ``multiprocessing.util`` is, before its importer gets it (8 ms a command saved, #56)."""
    import sys

    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is None:
        if not any(isinstance(f, _SafePathOnImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _SafePathOnImport())
        return
    _with_safe_path(mp_util)


class _SafePathOnImport:
    """A finder that wraps ``multiprocessing.util``'s loader so the module gets ``-P`` added
    (``_with_safe_path``) as soon as it has run, then steps aside."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "multiprocessing.util":
            return None
        import importlib.util
        import sys

        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None:
            return spec
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _with_safe_path(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _with_safe_path(mp_util: Any) -> None:
    flags = mp_util._args_from_interpreter_flags
    if getattr(flags, "srtui_safe_path", False):
        return

    def with_safe_path() -> list[str]:
        args: list[str] = flags()
        return args if SAFE_PATH in args or "-I" in args else [*args, SAFE_PATH]

    with_safe_path.srtui_safe_path = True  # type: ignore[attr-defined]
    mp_util._args_from_interpreter_flags = with_safe_path
