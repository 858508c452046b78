"""The parts of Sealed jobs 2 (#53) that run in-process: the seccomp program, the driver's
folder walk and its fit-clock marks. The end-to-end proofs are in tests/e2e/test_seal_limits.py
and tests/e2e/test_seal_battery.py."""

from __future__ import annotations

import os
from pathlib import Path

from srtui.engine.process import held, measure, seccomp

#: what Docker's default profile refuses a container without extra capabilities (the floor)
DOCKER_REFUSES = (
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "delete_module", "finit_module",
    "get_mempolicy", "init_module", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie",
    "mbind", "mount", "move_pages", "name_to_handle_at", "nfsservctl", "open_by_handle_at",
    "perf_event_open", "pivot_root", "quotactl", "reboot", "request_key", "set_mempolicy", "setns",
    "settimeofday", "swapoff", "swapon", "syslog", "umount2", "unshare", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "fsopen", "fsmount", "fsconfig", "fspick", "open_tree",
    "move_mount", "mount_setattr", "kcmp", "vhangup",
)  # fmt: skip


def test_the_filter_refuses_at_least_what_docker_s_default_profile_does() -> None:
    assert set(DOCKER_REFUSES) <= set(seccomp.DENIED)
    for index in (0, 1):  # x86_64, aarch64: every jump lands inside the program
        prog = seccomp.program(index)
        assert len(prog) < 256
        for at, (code, jt, jf, _) in enumerate(prog):
            if code & 0x07 == 0x05:  # BPF_JMP
                assert at + 1 + max(jt, jf) < len(prog)
        assert prog[-1] == (seccomp.RET_K, 0, 0, seccomp.RET_ALLOW)


def test_the_folder_walk_counts_blocks_once_and_stops_at_its_bound(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 100_000)
    os.link(tmp_path / "a", tmp_path / "b")  # a second name costs no disk
    (tmp_path / "link").symlink_to("/usr")  # never followed
    sub = tmp_path / "d"
    sub.mkdir()
    for i in range(20):
        (sub / str(i)).write_bytes(b"")
    used, entries = held.folder_bytes(str(tmp_path))
    assert 100_000 <= used < 200_000 and entries == 24
    assert held.folder_bytes(str(tmp_path), max_entries=5)[1] == 5
    (sub / "big").write_bytes(b"x" * 300_000)
    sub.chmod(0)  # hidden by its owner (a job under user namespaces is the driver's user)
    assert held.folder_bytes(str(tmp_path))[0] >= 400_000


def test_a_mark_is_found_across_reads_and_taken_out_of_the_log() -> None:
    mark = measure.FIT_MARK
    found, rest = measure.find_mark(b"", b"before" + mark + b"after", mark)
    assert found and rest == b"beforeafter"
    assert measure.find_mark(b"x" + mark[:5], mark[5:] + b"y", mark)[0]
    assert not measure.find_mark(b"", b"nothing here", mark)[0]


def test_a_folder_nested_past_path_max_is_over_the_disk_limit(tmp_path: Path) -> None:
    """A job could hide files where no path reaches (the walk opens folders by path)."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(25):  # 25 x 201 characters: past PATH_MAX (4096)
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    assert held.folder_bytes(str(tmp_path))[1] == held.MAX_ENTRIES
