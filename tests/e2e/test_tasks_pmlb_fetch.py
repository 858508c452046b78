"""SRBench 2021's black-box data route, end to end through the real CLI.

A PMLB-shaped folder (``datasets/NAME/NAME.tsv.gz``, made of the shared qualification files,
which are PMLB's own bytes) is served over HTTP by a real server on 127.0.0.1 that honours Range
requests and can cut a transfer short; srtui downloads from it as from PMLB
(``$SRTUI_PMLB_MIRROR``), resumes, refuses a wrong file, reads a checkout and a pmlb cache in
place, and runs offline from a folder written by ``tasks fetch --to``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import shared_data_dir, srtui

SMALL = ("579_fri_c0_250_5", "556_analcatdata_apnea2", "666_rmftsa_ladata")
WRONG = "654_fri_c0_500_10"  # served with other bytes: must be refused


def task(name: str) -> str:
    return "srbench2021-bb-" + name.replace("_", "-").lower()


@dataclass
class Server:
    root: Path
    url: str = ""
    ranges: list[tuple[str, str]] = field(default_factory=list)  # (path, Range header) of each GET
    cut_once: set[str] = field(default_factory=set)  # paths whose next full transfer stops halfway
    pause_s: float = 0.0  # sleep between 32 KB blocks (a slow link, for the progress bar)
    httpd: ThreadingHTTPServer | None = None


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = server.root / self.path.lstrip("/")
            rng = self.headers.get("Range", "")
            server.ranges.append((self.path, rng))
            if not path.is_file():
                self.send_error(404)
                return
            data = path.read_bytes()
            start = int(rng.removeprefix("bytes=").rstrip("-")) if rng else 0
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206 if rng else 200)
            self.send_header("Content-Length", str(len(data) - start))
            if rng:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if self.path in server.cut_once and not rng:
                server.cut_once.discard(self.path)
                self.wfile.write(data[: len(data) // 2])  # then the connection drops
                self.close_connection = True
                return
            for at in range(start, len(data), 32768):
                self.wfile.write(data[at : at + 32768])
                time.sleep(server.pause_s)

    return Handler


@pytest.fixture
def pmlb_dir(tmp_path: Path) -> Path:
    shared = shared_data_dir()
    qual = shared / "srbench2022" / "qualification" if shared else None
    if qual is None or not qual.is_dir():
        pytest.skip("needs the shared qualification files (../shared/data or $SRTUI_DATA_DIR)")
    root = tmp_path / "pmlb"
    for name in SMALL:
        (root / "datasets" / name).mkdir(parents=True)
        shutil.copyfile(qual / f"{name}.tsv.gz", root / "datasets" / name / f"{name}.tsv.gz")
    (root / "datasets" / WRONG).mkdir(parents=True)
    bad = gzip.decompress((qual / f"{WRONG}.tsv.gz").read_bytes()).replace(b"\t0.", b"\t1.", 1)
    (root / "datasets" / WRONG / f"{WRONG}.tsv.gz").write_bytes(gzip.compress(bad))
    return root


@pytest.fixture
def server(pmlb_dir: Path) -> Iterator[Server]:
    srv = Server(pmlb_dir)
    srv.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(srv))
    srv.url = f"http://127.0.0.1:{srv.httpd.server_address[1]}"
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def env(**extra: str) -> dict[str, str]:
    """No shared data dir: every file must come from where the test says."""
    return {"SRTUI_DATA_DIR": "", "SRTUI_OFFLINE": "", "SRTUI_PMLB_MIRROR": "", **extra}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fetch_downloads_in_parallel_resumes_a_cut_transfer_and_refuses_a_wrong_file(
    server: Server, workspace: Path, pmlb_dir: Path
) -> None:
    first, cut = SMALL[0], SMALL[1]
    cut_path = f"/datasets/{cut}/{cut}.tsv.gz"
    server.cut_once.add(cut_path)
    names = [task(first), task(cut)]
    out = srtui("tasks", "fetch", *names, "-w", str(workspace), env=env(SRTUI_PMLB_MIRROR=server.url))
    assert out.returncode == 2, out.stderr
    cache = workspace / "cache" / "data" / "pmlb"
    assert sha(cache / f"{first}.tsv.gz") == sha(pmlb_dir / "datasets" / first / f"{first}.tsv.gz")
    part = cache / f"{cut}.tsv.gz.part"
    half = (pmlb_dir / "datasets" / cut / f"{cut}.tsv.gz").stat().st_size // 2
    assert part.stat().st_size == half  # what came before the cut is kept for the resume
    assert f"pmlb/{cut}.tsv.gz is missing and could not be downloaded" in out.stderr
    assert "2 files: 1 downloaded" in out.stdout and "1 failed" in out.stdout
    # again: the first is verified in place, the second resumes from the byte it stopped at
    again = srtui("tasks", "fetch", *names, "-w", str(workspace), env=env(SRTUI_PMLB_MIRROR=server.url), check=True)
    assert (cut_path, f"bytes={half}-") in server.ranges
    assert sha(cache / f"{cut}.tsv.gz") == sha(pmlb_dir / "datasets" / cut / f"{cut}.tsv.gz")
    assert not part.exists()
    assert "2 files: 1 downloaded" in again.stdout and "1 already present and verified" in again.stdout
    # a file whose bytes are not PMLB's: refused in one line naming it, where to place it, the hash
    wrong = srtui("tasks", "fetch", task(WRONG), "-w", str(workspace), env=env(SRTUI_PMLB_MIRROR=server.url))
    assert wrong.returncode == 2
    line = next(ln for ln in wrong.stderr.splitlines() if WRONG in ln)
    assert f"expected sha256 {pmlb_sha(WRONG)}" in line and str(cache / f"{WRONG}.tsv.gz") in line
    assert not list(cache.glob(f"{WRONG}*"))  # nothing wrong is kept


def pmlb_sha(name: str) -> str:
    from srtui.tasks.loaders import pmlb_files

    return str(pmlb_files.info(name)["sha256"])


def test_a_pmlb_checkout_and_a_pmlb_cache_are_read_in_place_and_checked(
    pmlb_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    name = SMALL[0]
    offline = env(SRTUI_OFFLINE="1")
    # a PMLB checkout: datasets/NAME/NAME.tsv.gz
    out = srtui("tasks", "show", task(name), "--json", "-w", str(workspace), "--data-dir", str(pmlb_dir), env=offline)
    assert out.returncode == 0, out.stderr
    assert f'"sha256": "{pmlb_sha(name)}"' in out.stdout and '"pmlb": "579_fri_c0_250_5"' in out.stdout
    assert not (workspace / "cache" / "data" / "pmlb").exists()  # read in place, not copied
    # pmlb.fetch_data(local_cache_dir=DIR): DIR/NAME/NAME.tsv.gz
    cache = tmp_path / "pmlb-cache"
    shutil.copytree(pmlb_dir / "datasets", cache)
    ws2 = tmp_path / "ws2"
    out = srtui("tasks", "show", task(name), "-w", str(ws2), "--data-dir", str(cache), env=offline)
    assert out.returncode == 0, out.stderr
    # a wrong copy in a checkout is refused in one line, as is a Git LFS pointer left unpulled
    bad = srtui("tasks", "show", task(WRONG), "-w", str(ws2), "--data-dir", str(pmlb_dir), env=offline)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert f"refusing {pmlb_dir / 'datasets' / WRONG / f'{WRONG}.tsv.gz'}" in bad.stderr
    assert f"expected sha256 {pmlb_sha(WRONG)}" in bad.stderr
    pointer = cache / SMALL[1] / f"{SMALL[1]}.tsv.gz"
    pointer.write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{pmlb_sha(SMALL[1])}\nsize 1\n")
    lfs = srtui("tasks", "show", task(SMALL[1]), "-w", str(ws2), "--data-dir", str(cache), env=offline)
    assert lfs.returncode == 2 and "is a Git LFS pointer, not the data (git lfs pull)" in lfs.stderr


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_fetch_to_a_folder_then_run_offline_from_it(server: Server, workspace: Path, tmp_path: Path) -> None:
    suite = tmp_path / "bb.toml"
    tasks = ", ".join(f'"{task(n)}"' for n in SMALL[:2])
    suite.write_text(
        f'name = "bb"\ntasks = [{tasks}]\nmethods = ["linear"]\nseeds = [1]\n[limits]\ntime_s = 60\nmem_mb = 2000\n'
    )
    # a run whose data are missing says so before any job starts, with the command that fetches them
    refused = srtui("run", str(suite), "-w", str(workspace), env=env(SRTUI_OFFLINE="1"))
    assert refused.returncode == 2
    assert "2 of the 2 data files this run reads are missing" in refused.stderr
    assert f"srtui tasks fetch {suite} -w {workspace}" in refused.stderr
    assert not (workspace / "srtui.db").exists()
    folder = tmp_path / "for-the-cluster"
    out = srtui(
        "tasks", "fetch", str(suite), "--to", str(folder), "-w", str(workspace), env=env(SRTUI_PMLB_MIRROR=server.url)
    )
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (folder / "pmlb").iterdir()) == sorted(f"{n}.tsv.gz" for n in SMALL[:2])
    assert not (workspace / "cache" / "data" / "pmlb").exists()
    server.httpd.shutdown()  # type: ignore[union-attr] # no network from here on
    other = tmp_path / "ws-offline"
    run = srtui("run", str(suite), "-w", str(other), "--data-dir", str(folder), env=env(SRTUI_OFFLINE="1"))
    assert run.returncode == 0, run.stderr
    assert "ok 2" in run.stderr


BIG = "564_fried"  # 1.5 MB: long enough on a slow link to see the bar move


def test_the_progress_bar_in_a_real_terminal_shows_files_bytes_and_eta(
    server: Server, workspace: Path, tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux for a real terminal")
    shared = shared_data_dir()
    assert shared is not None
    (server.root / "datasets" / BIG).mkdir()
    shutil.copyfile(
        shared / "srbench2022" / "qualification" / f"{BIG}.tsv.gz", server.root / "datasets" / BIG / f"{BIG}.tsv.gz"
    )
    server.pause_s = 0.1
    session = f"srtui-fetch-{os.getpid()}"
    command = " ".join(
        [
            f"SRTUI_DATA_DIR= SRTUI_PMLB_MIRROR={server.url}",
            shlex.quote(sys.executable), "-m", "srtui", "tasks", "fetch", task(BIG), task(SMALL[0]),
            "-w", shlex.quote(str(workspace)),
            f"> {shlex.quote(str(tmp_path / 'out.txt'))}; sleep 60",
        ]
    )  # fmt: skip
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "10", command], check=True)
    out = tmp_path / "out.txt"
    try:
        seen, deadline = "", time.monotonic() + 120
        while time.monotonic() < deadline and not (out.exists() and out.read_text()):
            pane = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if "files " in pane and "MB" in pane:
                seen = pane
            time.sleep(0.2)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert "files 0/2" in seen or "files 1/2" in seen, seen
    assert re.search(r"\d+\.\d+/1\.\d MB", seen) and re.search(r"\d:\d\d:\d\d", seen), seen  # bytes, ETA
    assert out.read_text().startswith("2 files: 2 downloaded")
