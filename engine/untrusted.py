"""Files a job may have touched, read and written without trusting them.

A job runs with the user's rights next to the workspace (its scratch dir is under
``cache/jobs``), so anything there may be a FIFO, a link to ``/dev/zero`` or to a file of the
user's, a directory, or gigabytes long. Reads here open with ``O_NOFOLLOW | O_NONBLOCK``, accept
regular files only (``fstat``) and stop at a cap; writes never go through a link (a link in the
way is removed, a directory is made anew); a scratch dir is removed whatever its modes.
"""

from __future__ import annotations

import contextlib
import errno
import io
import math
import os
import stat
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from srtui.engine.errors import SrtuiError

if TYPE_CHECKING:
    import numpy as np

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UntrustedFileError(SrtuiError):
    """A job's file that is not a regular file within its cap; one line, the job is an error."""


#: workspace roots (``trust_root``): a path under one is walked a component at a time from it
_roots: set[str] = set()


def trust_root(root: Path) -> None:
    """Paths under ``root`` (a workspace) are opened one folder at a time from it: a link a job
    put in place of any folder on the way (``cache``, ``cache/data``, ``logs``) is never followed.
    The root itself may be a link the user made."""
    _roots.add(os.path.abspath(root))


def _anchor(path: Path) -> tuple[str, list[str]]:
    """(the trusted folder to start from, the names below it down to ``path``)."""
    full = os.path.abspath(path)
    roots = [r for r in _roots if full == r or full.startswith(r.rstrip("/") + "/")]
    if not roots:  # not in a workspace: only the last part is checked
        return os.path.dirname(full), [os.path.basename(full)]
    root = max(roots, key=len)
    rest = full[len(root) :].strip("/")
    return root, rest.split("/") if rest else []


def _child_dir(fd: int, name: str, create: bool) -> int:
    for _ in range(5):
        try:
            return os.open(name, _DIR, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            if not create:
                raise UntrustedFileError(f"{name} is not a directory (a link or a file took its place)") from None
            os.unlink(name, dir_fd=fd)  # a link or a file in the way goes; the folder is made anew
    raise UntrustedFileError(f"{name} keeps being replaced: not written")


def open_dir(path: Path, create: bool = False) -> int:
    """A descriptor of the directory ``path`` itself, each folder below its workspace root opened
    from its parent's descriptor with ``O_NOFOLLOW``: never what a link on the way points to.
    ``create``: a missing folder is made, a link or file in the way replaced by a folder."""
    base, parts = _anchor(path)
    if create:
        os.makedirs(base, exist_ok=True)  # the trusted root itself (a workspace, a cache) may be new
    if not parts:
        return os.open(base, _DIR & ~os.O_NOFOLLOW)
    fd = os.open(base, _DIR & ~os.O_NOFOLLOW)
    try:
        for part in parts:
            child = _child_dir(fd, part, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_capped(dir_fd: int, name: str, cap: int) -> bytes:
    """The bytes of the regular file ``name`` in ``dir_fd``, at most ``cap`` of them."""
    fd = _open_file(dir_fd, name)
    try:
        return _read_fd(fd, name, cap)
    finally:
        os.close(fd)


def read_file(path: Path, cap: int) -> bytes:
    """``read_file_stat`` without the ``fstat``."""
    return read_file_stat(path, cap)[0]


def read_file_stat(path: Path, cap: int) -> tuple[bytes, os.stat_result]:
    """The one reader of a file that is not srtui's own (a cache, a data file, a download, a
    user task's files): ``path`` reached through no link from its workspace root, opened with
    ``O_NOFOLLOW``, a regular file by ``fstat`` of that descriptor, its size checked against
    ``cap`` (what a manifest says it is, at most) before one byte is read, then read whole from
    that descriptor with the cap: the bytes a caller hashes are the bytes it parses. With the
    ``fstat`` of that descriptor (who it was: a cache built from it can tell it changed)."""
    dir_fd = open_dir(path.parent)
    try:
        fd = _open_file(dir_fd, path.name, str(path))
    finally:
        os.close(dir_fd)
    try:
        return _read_fd(fd, str(path), cap), os.fstat(fd)
    finally:
        os.close(fd)


def _open_file(dir_fd: int, name: str, label: str | None = None) -> int:
    """``name`` in ``dir_fd`` opened (never through a link, never blocking on a FIFO) and
    checked to be a regular file on the descriptor itself."""
    try:
        fd = os.open(name, _READ, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileError(f"{label or name} is a symbolic link: not read") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UntrustedFileError(f"{label or name} is not a regular file: not read")
    return fd


def _read_fd(fd: int, name: str, cap: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > cap:
        raise UntrustedFileError(f"{name} is too large ({size} bytes > {cap})")
    chunks, total = [], 0
    while chunk := os.read(fd, min(1 << 20, cap + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:  # it grew while we read it
            raise UntrustedFileError(f"{name} is too large (more than {cap} bytes)")
    return b"".join(chunks)


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file, not a link, reached through no link
    (a workspace file a job could have replaced: the task data the driver reads back)."""
    dir_fd = open_dir(path.parent)
    try:
        fd = _open_file(dir_fd, path.name, str(path))
    finally:
        os.close(dir_fd)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def load_vectors(data: bytes, names: tuple[str, ...], cap: int) -> dict[str, np.ndarray]:
    """float64 vectors of an ``.npz`` a job wrote: each member's size checked before it is
    inflated and each array's header before it is allocated (no zip or header bomb)."""
    import zipfile  # here: a dry run and `srtui status` open no archive

    out = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for name in names:
                info = zf.getinfo(f"{name}.npy")
                if info.file_size > cap:
                    raise UntrustedFileError(f"{name} is too large ({info.file_size} bytes > {cap})")
                raw = zf.read(info)  # zipfile stops at file_size and checks the CRC
                out[name] = _vector(raw, name)
    except (zipfile.BadZipFile, KeyError, EOFError, NotImplementedError) as exc:
        raise UntrustedFileError(f"predictions unreadable: {exc}") from None
    return out


def _vector(raw: bytes, name: str) -> np.ndarray:
    import numpy as np  # here: `srtui status` reads no job file and should not load numpy

    fh = io.BytesIO(raw)
    version = np.lib.format.read_magic(fh)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(fh)
    count = math.prod(int(n) for n in shape)  # Python ints: a huge shape cannot wrap around
    if dtype.hasobject or count * dtype.itemsize > len(raw):
        raise UntrustedFileError(f"{name}: header does not match its data")
    return np.asarray(np.load(io.BytesIO(raw), allow_pickle=False), dtype=np.float64).reshape(-1)


def real_dir(path: Path) -> Path:
    """``path`` as a directory of its own, and every folder on the way from its workspace root: a
    link (or file) in place of any of them is removed and the folder made anew."""
    os.close(open_dir(path, create=True))
    return path


def write_file(path: Path, data: bytes, atomic: bool = False, readable: bool = False) -> None:
    """Write ``data`` to ``path`` in a real directory reached through no link (``open_dir``):
    whatever is in the way (a symlink, a FIFO, a hard link to a file elsewhere) is removed first,
    and the file is created new (``O_EXCL``, ``O_NOFOLLOW``): one put back in between makes this
    fail, not write. ``atomic``: written under a temporary name, then renamed into place (a
    reader sees the old file or the whole new one). ``readable``: 0644 whatever the umask (a
    sealed job's input, read by the uid of its own a root driver gives it)."""
    dir_fd = open_dir(path.parent, create=True)
    name = f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp" if atomic else path.name
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
        try:
            if readable:
                os.fchmod(fd, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        if atomic:
            _replace_at(dir_fd, name, path.name)
    finally:
        os.close(dir_fd)


def open_append(path: Path) -> int:
    """A descriptor to append to the regular file ``path`` (made if missing), in a folder reached
    through no link; a link, FIFO or folder in its place is removed first (a log srtui keeps)."""
    dir_fd = open_dir(path.parent, create=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        for _ in range(3):
            try:
                fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                    raise
                _remove_at(dir_fd, path.name)
                continue
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.set_blocking(fd, True)
                return fd
            os.close(fd)
            _remove_at(dir_fd, path.name)
        raise UntrustedFileError(f"{path.name} keeps being replaced: not written")
    finally:
        os.close(dir_fd)


def open_partial(dir_fd: int, name: str) -> tuple[int, int]:
    """(descriptor, bytes it holds) of a download's partial file ``name`` in ``dir_fd``, open
    for reading and appending: a regular file of one link is resumed; anything else there (a
    link, a FIFO, a hard link to a file elsewhere) is removed and the file made anew with
    ``O_CREAT | O_EXCL | O_NOFOLLOW`` (one put back in between makes this fail, not write)."""
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise
    else:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            os.set_blocking(fd, True)
            return fd, st.st_size
        os.close(fd)
    _remove_at(dir_fd, name)
    fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dir_fd)
    os.set_blocking(fd, True)
    return fd, 0


def rename_checked(dir_fd: int, name: str, target: str, fd: int) -> None:
    """Rename ``name`` over ``target`` in ``dir_fd`` (``renameat``), then check what arrived is
    the file ``fd`` holds (the one hashed); anything else swapped in is removed, not kept."""
    _replace_at(dir_fd, name, target)
    st, mine = os.stat(target, dir_fd=dir_fd, follow_symlinks=False), os.fstat(fd)
    if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
        _remove_at(dir_fd, target)
        raise UntrustedFileError(f"{target} was replaced while it was downloaded: not kept")


def _replace_at(dir_fd: int, name: str, target: str) -> None:
    """Rename ``name`` over ``target`` in ``dir_fd``; a directory a job made at ``target`` goes."""
    try:
        os.replace(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except IsADirectoryError:
        _remove_at(dir_fd, target)
        os.replace(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise


#: how long removing one tree may take before it gives up (UntrustedFileError); tests lower it
REMOVE_DEADLINE_S = float(os.environ.get("SRTUI_REMOVE_DEADLINE_S", "120"))


def _remove_at(dir_fd: int, name: str, deadline_s: float | None = None) -> None:
    """Remove ``name`` in ``dir_fd`` and all below it, by descriptors only (no link followed, no
    path re-walked), whatever modes the job set. Iterative (a 20,000-deep folder recurses
    nowhere) with one descriptor open at a time: it climbs back through ``..``, checked to be
    the folder it came from; past ``deadline_s`` it stops with UntrustedFileError."""
    try:
        os.unlink(name, dir_fd=dir_fd)
        return
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError):
        pass  # a directory (Linux says EISDIR, some systems EPERM)
    try:
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)  # replaced by a link or a file meanwhile
        return
    limit = REMOVE_DEADLINE_S if deadline_s is None else deadline_s
    deadline = time.monotonic() + limit
    path: list[tuple[str, tuple[int, int]]] = []  # the folders below ``name`` we are in
    top, steps = _ident(fd), 0
    try:
        while True:
            steps += 1
            if steps % 1024 == 0 and time.monotonic() > deadline:
                raise UntrustedFileError(f"{name}: not removed within {limit:g} s ({len(path)} folders deep)")
            child = _empty_or_descend(fd)
            if child is not None:  # go down into a folder
                path.append((child[0], _ident(child[1])))
                os.close(fd)
                fd = child[1]
                continue
            if not path:
                break
            below, _ = path.pop()
            up = os.open("..", _DIR, dir_fd=fd)
            os.close(fd)
            fd = up
            if _ident(fd) != (path[-1][1] if path else top):
                raise UntrustedFileError(f"{name}: a folder was moved while it was removed")
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(below, dir_fd=fd)
    finally:
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(name, dir_fd=dir_fd)


def _ident(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _empty_or_descend(fd: int) -> tuple[str, int] | None:
    """Unlink every non-folder in ``fd``; the first folder met is returned opened (name, fd) to
    go into; None once ``fd`` is empty."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)
    for entry in os.listdir(fd):
        try:
            os.unlink(entry, dir_fd=fd)
            continue
        except FileNotFoundError:
            continue
        except (IsADirectoryError, PermissionError):
            pass
        try:
            child = _open_subdir(fd, entry)
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry, dir_fd=fd)
            continue
        return entry, child
    return None


def _open_subdir(fd: int, name: str) -> int:
    """The folder ``name`` in ``fd`` opened for listing; one whose modes the job took away
    (``chmod 000``) is given them back through an ``O_PATH`` descriptor of it (never a link)."""
    try:
        return os.open(name, _DIR, dir_fd=fd)
    except PermissionError:
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)
        return os.open(name, _DIR, dir_fd=fd)


def remove_tree(path: Path) -> None:
    """Remove a scratch dir whatever the job did to it (modes taken away, links inside, a link
    in place of a folder above it): links are removed, never followed."""
    try:
        dir_fd = open_dir(path.parent)
    except (FileNotFoundError, UntrustedFileError):
        return  # a link in place of a folder above it: nothing under it is srtui's
    try:
        _remove_at(dir_fd, path.name)
    finally:
        os.close(dir_fd)
