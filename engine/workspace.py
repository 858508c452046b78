"""The workspace: the one directory srtui writes to.

<workspace>/srtui.db     SQLite store (srtui.results.store.store), WAL mode
<workspace>/logs/        per-job stdout/stderr, capped
<workspace>/cache/       task data (npz), job scratch directories, downloads
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from srtui.engine.errors import SrtuiError
from srtui.engine.untrusted import real_dir, trust_root

#: file systems on which SQLite's WAL mode (shared memory) is unsafe
NETWORK_FS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "afs", "lustre", "gpfs", "ceph", "glusterfs"}
)


class WorkspaceError(SrtuiError):
    """The workspace cannot be used; one line for the CLI."""


@dataclass(frozen=True)
class Workspace:
    root: Path

    def __post_init__(self) -> None:
        trust_root(self.root)  # its folders are opened one at a time from the root, never via a link

    @property
    def db_path(self) -> Path:
        return self.root / "srtui.db"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def data_cache(self) -> Path:
        return self.cache / "data"

    @property
    def jobs_dir(self) -> Path:
        return self.cache / "jobs"

    def exists(self) -> bool:
        return self.db_path.is_file()

    def ensure(self) -> Workspace:
        """Create the layout, or fail with one line if the place is not writable."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            for d in (self.logs, self.cache, self.data_cache, self.jobs_dir):
                real_dir(d)  # a link a job planted in place of logs/ or cache/ is not written through
            probe = self.root / f".write-test-{uuid.uuid4().hex}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise WorkspaceError(f"workspace {self.root} is not writable: {exc.strerror or exc}") from None
        return self

    def filesystem_type(self) -> str | None:
        """The mount's file system type from /proc/mounts (longest matching mount point)."""
        try:
            target = self.root.resolve()
            best, fstype = "", None
            with open("/proc/mounts") as mounts:
                for line in mounts:
                    parts = line.split()
                    if len(parts) < 3:
                        continue
                    mount = parts[1].replace("\\040", " ")
                    if (str(target) == mount or str(target).startswith(mount.rstrip("/") + "/")) and len(mount) > len(
                        best
                    ):
                        best, fstype = mount, parts[2]
            return fstype
        except OSError:
            return None

    def refuse_network_filesystem(self) -> None:
        fstype = self.filesystem_type()
        if fstype in NETWORK_FS:
            raise WorkspaceError(
                f"workspace {self.root} is on a network file system ({fstype}); SQLite's WAL mode "
                "does not work there - use a local directory"
            )


def resolve(path: str | os.PathLike[str] | None) -> Workspace:
    """``--workspace``, else ``$SRTUI_WORKSPACE``, else ``./srtui-workspace``."""
    if path is None:
        path = os.environ.get("SRTUI_WORKSPACE") or "srtui-workspace"
    return Workspace(Path(path).absolute())  # jobs run with another cwd
