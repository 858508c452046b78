"""The fallback as root: a job that is not sealed still does not run as root on the host.

Under ``SRTUI_ISOLATION=fallback`` (or where sealing fails) a root driver's job becomes a uid of
its own (the one a sealed job gets, srtui.engine.process.seal) before any of the method's code: it can
then write its own folder and what is open to everyone, and can trace or read the memory of no
process of srtui's (the fork servers are not dumpable either). A tree it needs (its Python's,
srtui's engine, its folder) may lie under a folder others may not enter (pyenv under ``/root``,
pytest's ``/tmp/pytest-of-root``): a mount namespace of the job's own shows an empty, open folder
there holding only those trees, as the test battery's ordinary account sees them. Stdlib only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
from typing import Any

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 4096, 16384, 1 << 18, 2, 4


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _closed_ancestors(path: str) -> list[tuple[str, str]]:
    """(folder, its child towards ``path``) for every folder above ``path`` that others may not
    enter, outermost first."""
    parts = os.path.realpath(path).split("/")[1:]
    out = []
    for i in range(1, len(parts)):
        folder = "/" + "/".join(parts[:i])
        with contextlib.suppress(OSError):
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                out.append((folder, parts[i]))
    return out


def _open_up(trees: list[str]) -> None:
    """A private mount namespace where every closed folder above ``trees`` is an open tmpfs
    holding only the child folders that lead to them (bound from descriptors opened first)."""
    keep: dict[str, set[str]] = {}
    for tree in trees:
        for closed, child in _closed_ancestors(tree):
            keep.setdefault(closed, set()).add(child)
    if not keep:
        return
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0 or libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"a mount namespace for the job: {os.strerror(err)}")
    for closed in sorted(keep, key=len):  # outer first: an inner one is reached through its bind
        held = {name: os.open(os.path.join(closed, name), os.O_PATH) for name in sorted(keep[closed])}
        _mount(b"tmpfs", closed.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755")
        for name, fd in held.items():
            target = os.path.join(closed, name)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.mkdir(target, 0o755)
            else:
                open(target, "wb").close()
            _mount(f"/proc/self/fd/{fd}".encode(), target.encode(), None, MS_BIND | MS_REC)
            os.close(fd)


def _mount(src: bytes | None, dst: bytes, fstype: bytes | None, flags: int, data: bytes | None = None) -> None:
    if _libc().mount(src, dst, fstype, ctypes.c_ulong(flags), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {dst.decode()}: {os.strerror(err)}")


def become_job_uid(jobdir: str, uid: int, trees: list[str]) -> None:
    """In the job's process (root): its folder becomes its uid's, the trees it needs are made
    reachable, and it drops to that uid (every capability goes)."""
    from srtui.engine.process.seal_root import python_paths

    _open_up([*python_paths(), *trees, jobdir])
    os.chown(jobdir, uid, uid)  # its folder is the one place it writes
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def server_not_dumpable() -> None:
    """A fork server whose jobs run unsealed: its /proc files (mem, environ, fd) become root's
    and it cannot be traced, so the jobs it forks (its children) read none of it."""
    _libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
