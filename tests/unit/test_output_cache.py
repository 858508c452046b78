"""The folders of kept answers (`srtui score`, `srtui plot`: srtui.cli.output_cache) stay bounded:
past the cap the least recently written or reused entries go, a reused one stays, a link is
removed and never followed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from srtui.cli import output_cache


def _age(path: Path, seconds_ago: float) -> None:
    when = time.time() - seconds_ago
    os.utime(path, (when, when), follow_symlinks=False)


def test_past_the_file_cap_the_oldest_entries_go_and_a_reused_one_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_cache, "FOLDER_CAP_FILES", 3)
    for i in range(3):
        output_cache.write(tmp_path / f"e{i}.json", f"k{i}", {"n": i})
        _age(tmp_path / f"e{i}.json", 100 - i)  # e0 the oldest
    assert output_cache.read(tmp_path / "e0.json", "k0") == {"n": 0}  # reused: now the newest
    output_cache.write(tmp_path / "e3.json", "k3", {"n": 3})  # a fourth: one must go
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e0.json", "e2.json", "e3.json"]


def test_past_the_byte_cap_old_entries_go_and_a_link_is_removed_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_cache, "FOLDER_CAP_BYTES", 3000)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "precious"
    target.write_bytes(b"x" * 10_000)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "planted").symlink_to(target)
    _age(cache / "planted", 1000)
    for i in range(4):
        output_cache.write(cache / f"e{i}.json", f"k{i}", {"pad": "y" * 1000})
        _age(cache / f"e{i}.json", 100 - i)
    output_cache.prune(cache)
    left = sorted(p.name for p in cache.iterdir())
    assert left == ["e2.json", "e3.json"]  # ~1.2 kB each: two fit under 3 kB
    assert target.read_bytes() == b"x" * 10_000  # the link went, what it named did not
