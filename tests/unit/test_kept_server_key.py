"""The key a kept fork server is found by (srtui.engine.process.kept_servers.key) for a method
environment's interpreter: its own libraries are in it, as the driver's are for its own."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from srtui.engine.process import kept_servers


def _dist(site: Path, version: str) -> None:
    info = site / f"foo-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: foo\nVersion: {version}\n")


def test_an_environment_upgraded_at_the_same_path_is_another_kept_servers_key(tmp_path: Path) -> None:
    """A server of ``ENV/bin/python`` has ENV's libraries imported: an upgrade or a re-created
    environment at the same path (same interpreter path, same environment variables) must not
    find it, or its jobs run the old libraries for as long as it is kept."""
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    _dist(site, "1.0")
    python = str(env / "bin" / "python")
    assert kept_servers.environment_paths(python) == [str(site)]
    first = kept_servers.key("fam", {"A": "1"}, python, "namespaces")
    assert kept_servers.key("fam", {"A": "1"}, python, "namespaces") == first  # stable
    shutil.rmtree(site / "foo-1.0.dist-info")
    _dist(site, "2.0")
    assert kept_servers.key("fam", {"A": "1"}, python, "namespaces") != first
