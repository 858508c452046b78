"""The key under which the driver keeps what this machine gives a sealed job (issue 56).

``seal.isolation`` seals a throwaway child to learn whether jobs get namespaces: a child
interpreter, about 0.05 s of CPU, which was most of what a ``--dry-run`` or ``methods check``
spent beyond its imports. A sealed probe's answer is kept (``srtui.engine.kept``) under this digest of
everything it depends on, so it is asked again whenever any of them differs: this boot, the
user, the interpreter, ``SRTUI_ISOLATION``, the namespaces the driver itself runs in (a driver
inside a sandbox is another key), its seccomp, no_new_privs and capabilities, its uid map, the
kernel's user-namespace switches, and the sealing code itself. Only a sealed answer is kept: a
probe that failed (a timeout on a loaded machine, a full temp folder) is asked again next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path

#: files whose text decides whether a child can be sealed (missing ones count as empty)
MACHINE_FILES = (
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
    "/proc/sys/user/max_pid_namespaces",
    "/proc/sys/user/max_net_namespaces",
    "/proc/self/uid_map",
    "/proc/self/gid_map",
    "/proc/self/setgroups",
)
#: the lines of /proc/self/status that limit what a child may do
STATUS_FIELDS = ("Seccomp:", "NoNewPrivs:", "CapEff:", "CapBnd:")
NAMESPACES = ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")


def machine_key(isolation_env: str | None) -> str:
    """The digest of what a seal probe's answer depends on, for this driver."""
    digest = hashlib.sha256(f"srtui-isolation 1\0{os.geteuid()}\0{os.getegid()}\0{sys.executable}\0".encode())
    digest.update(f"{isolation_env}\0".encode())
    for file in MACHINE_FILES:
        digest.update(_read(file) + b"\0")
    status = _read("/proc/self/status").decode("ascii", "replace").splitlines()
    digest.update("\n".join(line for line in status if line.startswith(STATUS_FIELDS)).encode() + b"\0")
    for name in NAMESPACES:
        with contextlib.suppress(OSError):
            digest.update(os.readlink(f"/proc/self/ns/{name}").encode())
        digest.update(b"\0")
    here = Path(__file__).parent
    for source in ("seal.py", "seal_root.py", "seccomp.py", "fallback.py"):
        digest.update(_read(str(here / source)) + b"\0")
    return digest.hexdigest()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20)
    except OSError:
        return b""
