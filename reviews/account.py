"""Can the account experts log in to run this srtui? Checked as that account would, before sshd does.

The forced command names this srtui's interpreter by its absolute path. If that path (or the
interpreter a venv links to, the standard library, srtui's package and its site-packages, or the
workspace) passes through a directory the account may not enter, every expert's login ends in
"Permission denied" from Python, not from srtui. :func:`check_account` walks each of those paths
component by component with the account's own uid and groups and names the first closed one:

- as root, in a forked child that drops to the account (``setgroups``/``setgid``/``setuid``) and
  asks the kernel (``os.access``: modes, ACLs, mounts), then runs ``PYTHON -c 'import srtui'``
  as the account;
- as the account itself, with ``os.access`` and the same import;
- as anyone else (who cannot switch to the account), from the permission bits (no ACLs), said so.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from srtui.reviews.storage import ReviewError

#: what the account needs: enter every directory on the way; then, at the end, this
EXECUTE, READ, WRITE = os.X_OK, os.R_OK | os.X_OK, os.R_OK | os.W_OK | os.X_OK


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str

    @classmethod
    def named(cls, name: str) -> Account:
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            raise ReviewError(f"--account {name}: there is no such account on this machine") from None
        return cls(name, pw.pw_uid, pw.pw_gid, tuple(os.getgrouplist(name, pw.pw_gid)), pw.pw_dir)


def needed_paths(workspace: Path) -> list[tuple[str, int, str]]:
    """(path, access needed at its end, what it is): the interpreter as the forced command names it
    and as its links resolve, the standard library, srtui's package, its site-packages, the workspace."""
    from importlib.util import find_spec

    spec = find_spec("srtui")  # where the forced command's `-m srtui` comes from (not imported here)
    python = str(Path(sys.executable).absolute())
    out = [(python, EXECUTE, "srtui's Python")]
    out.append((os.path.dirname(os.__file__), READ, "Python's standard library"))
    package = Path(spec.origin if spec and spec.origin else __file__).resolve().parent
    out += [(str(package), READ, "srtui's package"), (str(package.parent), READ, "srtui's package")]
    out += [(p, READ, "srtui's site-packages") for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    out.append((str(Path(workspace).absolute()), WRITE, "the workspace"))
    return out


def _components(path: str) -> list[str]:
    parts = Path(path).parts
    return [str(Path(*parts[: i + 1])) for i in range(len(parts))]


def first_closed(paths: list[tuple[str, int, str]], access: Callable[[str, int], bool]) -> tuple[str, str] | None:
    """(closed path, what it was on the way to) of the first path the account cannot use: each
    path's real one first (a venv's python links to its base interpreter: a closed directory
    there is the one to name), then the path as written (the directories holding its links)."""
    for path, mode, what in paths:
        for candidate in dict.fromkeys((os.path.realpath(path), path)):
            steps = _components(candidate)
            for step in steps[:-1]:
                if not access(step, os.X_OK):
                    return step, what
            if not access(steps[-1], mode):
                return steps[-1], what
    return None


def by_mode_bits(account: Account) -> Callable[[str, int], bool]:
    """``os.access`` for another account, from the permission bits alone (root passes all)."""

    def access(path: str, mode: int) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if account.uid == 0:
            return not (mode & os.X_OK) or stat.S_ISDIR(st.st_mode) or bool(st.st_mode & 0o111)
        shift = 6 if st.st_uid == account.uid else 3 if st.st_gid in account.groups else 0
        bits = (st.st_mode >> shift) & 0o7
        return bits & mode == mode

    return access


def _as_account(account: Account, paths: list[tuple[str, int, str]]) -> tuple[str, str] | None:
    """:func:`first_closed` in a forked child that has become the account (needs root)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to the account, ask the kernel, report, leave
        code = 0
        try:
            os.close(read)
            os.setgroups(list(account.groups))
            os.setgid(account.gid)
            os.setuid(account.uid)
            found = first_closed(paths, lambda p, m: os.access(p, m))
            os.write(write, json.dumps(found).encode())
        except BaseException:  # noqa: BLE001 - the parent reads "no answer" as a failure
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        answer = fh.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not answer:
        raise ReviewError(f"--account {account.name}: could not check what the account can open")
    found = json.loads(answer)
    return None if found is None else (found[0], found[1])


def _import_as(account: Account, python: str) -> str | None:
    """The last line of ``PYTHON -c 'import srtui'`` run as the account, if it fails."""
    same = account.uid == os.geteuid()
    try:
        proc = subprocess.run(
            [python, "-c", "import srtui.cli"],
            user=None if same else account.uid,
            group=None if same else account.gid,
            extra_groups=None if same else list(account.groups),
            env={"HOME": account.home, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _refusal(account: Account, closed: str, what: str) -> str:
    try:
        st = os.stat(closed)
        owner = f"{stat.filemode(st.st_mode)} {pwd.getpwuid(st.st_uid).pw_name}"
    except (OSError, KeyError):
        owner = "not there"
    if what == "the workspace":
        return (
            f"account {account.name} cannot use {what}: {closed} ({owner}) is closed to it; give the "
            "account's group read, write and execute there (chgrp GROUP PATH && chmod g+rwx PATH), "
            "or choose a workspace it owns"
        )
    return (
        f"account {account.name} cannot run {what}: {closed} ({owner}) is closed to it; install srtui "
        "where every account can run it (a shared install under /opt, see docs/reviews.md), or give "
        f"the account's group read and execute on {closed} (chgrp GROUP {closed} && chmod g+rx {closed})"
    )


def check_account(name: str, workspace: Path) -> str:
    """Refuse (ReviewError, one line) unless account ``name`` can run this srtui on ``workspace``;
    returns how it was checked."""
    account = Account.named(name)
    paths = needed_paths(workspace)
    if os.geteuid() == 0 and account.uid != 0:
        found, how = _as_account(account, paths), "as the account"
    elif os.geteuid() == account.uid:
        found, how = first_closed(paths, lambda p, m: os.access(p, m)), "as the account"
    else:
        found, how = first_closed(paths, by_mode_bits(account)), "from permission bits (run as root to check ACLs too)"
    if found is not None:
        raise ReviewError(_refusal(account, *found))
    if how == "as the account":
        failure = _import_as(account, paths[0][0])
        if failure:
            raise ReviewError(f"account {account.name} cannot import srtui with {paths[0][0]}: {failure}")
    return how


__all__ = ["Account", "by_mode_bits", "check_account", "first_closed", "needed_paths"]
