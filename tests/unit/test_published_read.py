"""Issue 43: a published file is read once, through the one bounded reader (srtui.engine.untrusted
read_file), and parsed from the bytes that were hashed: results/scoring/published/read.py used to
verify a feather's sha256 and then read the file again by its path (a file swapped in between was
parsed), and to open the user's `--published FILE` by path (a link followed, a FIFO waited on)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from srtui.results.scoring.published.read import MAX_BYTES, PublishedError, locate, read_file
from srtui.results.scoring.published.sources import PublishedFile

GOOD = b"algorithm,dataset,random_state,r2_test\nOperon,d1,1,0.9\n"
SWAPPED = b"algorithm,dataset,random_state,r2_test\nOperon,d1,1,-42.0\n"


def test_a_published_file_is_parsed_from_the_bytes_its_checksum_was_taken_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SRTUI_OFFLINE", "1")  # found in --data-dir, never downloaded
    path = tmp_path / "data" / "srbench" / "results" / "runs.csv"
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD)
    pf = PublishedFile("black-box", "results/runs.csv", "master", sha256=hashlib.sha256(GOOD).hexdigest())
    found = locate(pf, None, tmp_path / "data")
    path.write_bytes(SWAPPED)  # swapped after its sha256 was checked
    assert read_file(found)["r2_test"].tolist() == [0.9]  # before: -42.0, the swapped file's


def test_the_users_published_file_goes_through_the_bounded_reader(tmp_path: Path) -> None:
    real = tmp_path / "runs.csv"
    real.write_bytes(GOOD)
    assert read_file(locate(PublishedFile("black-box", str(real), ""), None, None))["r2_test"].tolist() == [0.9]
    link = tmp_path / "link.csv"
    link.symlink_to("/dev/zero")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.feather"
    with huge.open("wb") as fh:  # sparse: refused by its size before a byte is read
        fh.truncate(MAX_BYTES + 1)
    for path, words in ((link, "is a symbolic link"), (fifo, "is not a regular file"), (huge, "is too large")):
        with pytest.raises(PublishedError, match=words):  # before: /dev/zero read forever, the FIFO waited on
            locate(PublishedFile("black-box", str(path), ""), None, None)
