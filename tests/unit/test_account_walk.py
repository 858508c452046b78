"""srtui.reviews.account: the walk that names the first directory an account cannot enter."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from srtui.reviews.account import Account, by_mode_bits, first_closed

NOBODY = Account("someone", 54321, 54321, (54321,), "/")


@pytest.fixture
def base():
    path = Path(tempfile.mkdtemp(prefix="srtui-walk-", dir="/tmp"))  # pytest's own tmp is 0700
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_the_first_closed_directory_on_the_way_is_named(base):
    for where, mode in (("open", 0o755), ("closed", 0o700)):
        (base / where / "bin").mkdir(parents=True)
        (base / where / "bin").chmod(0o755)
        (base / where).chmod(mode)
        (base / where / "bin" / "python").write_text("")
        (base / where / "bin" / "python").chmod(0o755)
    access = by_mode_bits(NOBODY)
    walk = lambda path, mode=os.X_OK: first_closed([(str(path), mode, "py")], access)  # noqa: E731
    assert walk(base / "open" / "bin" / "python") is None
    assert walk(base / "closed" / "bin" / "python") == (str(base / "closed"), "py")
    # a link is followed: the closed directory is its target's
    (base / "open" / "bin" / "link").symlink_to(base / "closed" / "bin" / "python")
    assert walk(base / "open" / "bin" / "link") == (str(base / "closed"), "py")
    # write access (the workspace's) is asked at the end only
    assert walk(base / "open", os.W_OK | os.X_OK) == (str(base / "open"), "py")
    if os.geteuid() == 0:  # the account's group opens it
        os.chown(base / "closed", -1, 54321)
        (base / "closed").chmod(0o750)
        assert walk(base / "closed" / "bin" / "python") is None
