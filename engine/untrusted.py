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
import shutil
import stat
import zipfile
from pathlib import Path
from typing import BinaryIO

import numpy as np

from engine.errors import SrtuiError

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UntrustedFileError(SrtuiError):
    """A job's file that is not a regular file within its cap; one line, the job is an error."""


def open_dir(path: Path) -> int:
    """A descriptor of the directory ``path`` itself (never of what a link there points to)."""
    try:
        return os.open(path, _DIR)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UntrustedFileError(f"{path.name} is not a directory (a link or a file took its place)") from None
        raise


def read_capped(dir_fd: int, name: str, cap: int) -> bytes:
    """The bytes of the regular file ``name`` in ``dir_fd``, at most ``cap`` of them."""
    try:
        fd = os.open(name, _READ, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileError(f"{name} is a symbolic link: not read") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFileError(f"{name} is not a regular file: not read")
        if st.st_size > cap:
            raise UntrustedFileError(f"{name} is too large ({st.st_size} bytes > {cap})")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, cap + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:  # it grew while we read it
                raise UntrustedFileError(f"{name} is too large (more than {cap} bytes)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file, not a link (a workspace file a job
    could have replaced: the task data the driver reads back)."""
    try:
        fd = os.open(path, _READ)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileError(f"{path} is a symbolic link: not read") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UntrustedFileError(f"{path} is not a regular file: not read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def load_vectors(data: bytes, names: tuple[str, ...], cap: int) -> dict[str, np.ndarray]:
    """float64 vectors of an ``.npz`` a job wrote: each member's size checked before it is
    inflated and each array's header before it is allocated (no zip or header bomb)."""
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
    fh = io.BytesIO(raw)
    version = np.lib.format.read_magic(fh)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(fh)
    count = math.prod(int(n) for n in shape)  # Python ints: a huge shape cannot wrap around
    if dtype.hasobject or count * dtype.itemsize > len(raw):
        raise UntrustedFileError(f"{name}: header does not match its data")
    return np.asarray(np.load(io.BytesIO(raw), allow_pickle=False), dtype=np.float64).reshape(-1)


def real_dir(path: Path) -> Path:
    """``path`` as a directory of its own: a link (or file) in its place is removed first."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True)
        return path
    if not stat.S_ISDIR(st.st_mode):
        path.unlink()
        path.mkdir()
    return path


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in a real directory, never through a link: whatever is in the
    way (a symlink, a FIFO, a hard link to a file elsewhere) is removed first, and the file is
    created new (``O_EXCL``, ``O_NOFOLLOW``): one put back in between makes this fail, not write."""
    real_dir(path.parent)
    dir_fd = open_dir(path.parent)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=dir_fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def remove_tree(path: Path) -> None:
    """Remove a scratch dir whatever the job did to it (modes taken away, links inside: links
    are removed, never followed)."""

    def retry(func: object, failed: str, exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)

    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        path.unlink()
        return
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    shutil.rmtree(path, onerror=retry)
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
