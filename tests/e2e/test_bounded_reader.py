"""Issue 43, breaks 2-6: what srtui reads or downloads that is not its own goes through one
bounded reader (srtui.engine.untrusted.read_file): no link followed, no FIFO or device read, the size
checked before a byte is read or hashed, hashed and parsed from the same bytes; a download's
``.part`` is never written through a link; a transfer has a deadline and a minimum rate."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import shared_data_dir, srtui

NAME = "579_fri_c0_250_5"
TASK = "srbench2021-bb-579-fri-c0-250-5"
REL = Path("pmlb") / f"{NAME}.tsv.gz"


@pytest.fixture
def good() -> Path:
    shared = shared_data_dir()
    path = shared / "srbench2022" / "qualification" / f"{NAME}.tsv.gz" if shared else None
    if path is None or not path.is_file():
        pytest.skip("needs the shared qualification files (../shared/data or $SRTUI_DATA_DIR)")
    return path


def offline(**extra: str) -> dict[str, str]:
    return {"SRTUI_DATA_DIR": "", "SRTUI_OFFLINE": "1", "SRTUI_PMLB_MIRROR": "", **extra}


def one_line(proc) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _cache(ws: Path) -> Path:
    folder = ws / "cache" / "data" / "pmlb"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- break 3: a 100 GB sparse file in the data cache is refused by its size, at once ---------


def test_a_100_gb_sparse_file_in_the_data_cache_is_refused_at_once(workspace: Path, good: Path) -> None:
    with open(_cache(workspace) / f"{NAME}.tsv.gz", "wb") as fh:
        fh.truncate(100 << 30)
    for args in (("tasks", "show", TASK), ("tasks", "fetch", TASK)):
        started = time.process_time()
        proc = srtui(*args, "-w", str(workspace), env=offline(), timeout=120)  # today: 7 minutes of hashing
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "too large" in proc.stderr and "expected" in proc.stderr, proc.stderr
        assert time.process_time() - started < 5


# -- break 4: a file swapped between its hash and its read; a cached build re-checked -----------

SWAPPER = """
import hashlib, os
_spec = os.environ.get("SRTUI_TEST_SWAP")
if _spec:
    _bad, _target = _spec.split(os.pathsep)
    _size, _real = os.path.getsize(_target), hashlib.sha256
    class _Swapping:  # once a hash has seen the whole file, the file is replaced by another
        def __init__(self, data=b"", **kw):
            self._h, self._n = _real(data, **kw), len(data)
        def update(self, data):
            self._h.update(data)
            self._n += len(data)
        def hexdigest(self):
            if self._n == _size and os.path.exists(_bad):
                os.replace(_bad, _target)
            return self._h.hexdigest()
        def digest(self):
            return self._h.digest()
    hashlib.sha256 = _Swapping
"""


def _poisoned(good: Path, to: Path) -> None:
    import pandas as pd

    df = pd.read_csv(good, sep="\t")
    df["target"] = 42.0
    buf = io.StringIO()
    df.to_csv(buf, sep="\t", index=False)
    to.write_bytes(gzip.compress(buf.getvalue().encode()))


def _fingerprint(proc) -> str:
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"fingerprint: (\w+)", proc.stdout)
    assert found is not None, proc.stdout
    return found.group(1)


def test_a_file_swapped_after_its_hash_is_never_parsed_and_a_cached_build_is_checked(
    workspace: Path, good: Path, tmp_path: Path
) -> None:
    clean_ws = tmp_path / "clean"
    shutil.copyfile(good, _cache(clean_ws) / f"{NAME}.tsv.gz")
    honest = _fingerprint(srtui("tasks", "show", TASK, "-w", str(clean_ws), env=offline()))
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SWAPPER)
    target = _cache(workspace) / f"{NAME}.tsv.gz"
    shutil.copyfile(good, target)
    bad = tmp_path / "bad.tsv.gz"
    _poisoned(good, bad)
    path = os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    swap = offline(PYTHONPATH=path, SRTUI_TEST_SWAP=os.pathsep.join([str(bad), str(target)]))
    # the file is replaced right after it was hashed: the task is built from the bytes hashed
    assert _fingerprint(srtui("tasks", "show", TASK, "-w", str(workspace), env=swap)) == honest
    assert not bad.exists(), "the swap did not happen"
    # the cached build is checked against its data file, which is now the wrong one: refused
    line = one_line(srtui("tasks", "show", TASK, "-w", str(workspace), env=offline()))
    assert "expected sha256" in line and "has sha256" in line, line
    # the good file back: the honest task again
    shutil.copyfile(good, target)
    assert _fingerprint(srtui("tasks", "show", TASK, "-w", str(workspace), env=offline())) == honest


# -- break 5: a user task's files replaced by a link to /dev/zero or a FIFO ----------------------


@pytest.mark.parametrize("how", ["devzero", "fifo"])
def test_a_user_tasks_file_replaced_by_a_device_or_a_fifo_is_refused(workspace: Path, tmp_path: Path, how: str) -> None:
    csv = tmp_path / "data.csv"
    csv.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{2 * i + 1}\n" for i in range(20)))
    srtui("tasks", "add", "mine", str(csv), "--target", "y", "-w", str(workspace), check=True)
    train = workspace / "tasks" / "mine" / "train.csv"
    train.unlink()
    if how == "devzero":
        os.symlink("/dev/zero", train)
    else:
        os.mkfifo(train)
    line = one_line(srtui("tasks", "show", "mine", "-w", str(workspace), timeout=60))  # today: 8 GB, or a hang
    assert "user task" in line and "train.csv" in line, line
    run = srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "mine", "--seeds", "1", "-w", str(workspace), timeout=120
    )
    assert "train.csv" in one_line(run), run.stderr


# -- breaks 2 and 6: a download's .part and its pace ------------------------------------------


@dataclass
class Server:
    data: bytes
    honour_range: bool = True
    trickle_s: float = 0.0  # > 0: one byte each this many seconds
    url: str = ""


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            rng = self.headers.get("Range", "") if server.honour_range else ""
            start = int(rng.removeprefix("bytes=").rstrip("-")) if rng else 0
            if start >= len(server.data):
                self.send_error(416)
                return
            self.send_response(206 if rng else 200)
            self.send_header("Content-Length", str(len(server.data) - start))
            self.end_headers()
            if not server.trickle_s:
                self.wfile.write(server.data[start:])
                return
            try:
                for at in range(start, len(server.data)):
                    self.wfile.write(server.data[at : at + 1])
                    self.wfile.flush()
                    time.sleep(server.trickle_s)
            except OSError:
                pass  # the client gave up

    return Handler


@pytest.fixture
def serve(good: Path) -> Iterator[Server]:
    srv = Server(good.read_bytes())
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(srv))
    httpd.daemon_threads = True
    srv.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield srv
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("honour_range", [True, False])
def test_a_link_planted_at_a_downloads_part_is_never_followed(
    serve: Server, workspace: Path, tmp_path: Path, honour_range: bool
) -> None:
    serve.honour_range = honour_range
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"the user's own file\n")
    part = _cache(workspace) / f"{NAME}.tsv.gz.part"
    os.symlink(victim, part)
    env = offline(SRTUI_OFFLINE="", SRTUI_PMLB_MIRROR=serve.url)
    srtui("tasks", "fetch", TASK, "-w", str(workspace), env=env, check=True)
    assert victim.read_bytes() == b"the user's own file\n"  # today: appended to, or overwritten
    got = _cache(workspace) / f"{NAME}.tsv.gz"
    assert (
        not got.is_symlink() and hashlib.sha256(got.read_bytes()).hexdigest() == hashlib.sha256(serve.data).hexdigest()
    )
    assert not part.exists() and not part.is_symlink()


@pytest.mark.parametrize(
    "limit", [{"SRTUI_DOWNLOAD_DEADLINE_S": "3"}, {"SRTUI_DOWNLOAD_RATE_WINDOW_S": "2"}], ids=["deadline", "rate"]
)
def test_a_trickling_download_source_is_given_up_on(serve: Server, workspace: Path, limit: dict) -> None:
    serve.trickle_s = 0.2  # 5 bytes/s: today waited on for days
    env = offline(SRTUI_OFFLINE="", SRTUI_PMLB_MIRROR=serve.url, **limit)
    started = time.monotonic()
    proc = srtui("tasks", "fetch", TASK, "-w", str(workspace), env=env, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "download failed" in proc.stderr and ("within" in proc.stderr or "bytes/s" in proc.stderr), proc.stderr
    assert time.monotonic() - started < 100
