"""The seccomp filter every job runs under, and its fresh session keyring (stdlib only: a
method environment's interpreter runs it too).

Docker's default profile is the floor: what it refuses a container is refused here, plus what a
benchmark job never needs and a hostile one would use (docs/untrusted-jobs.md lists each
difference). A refused call fails with EPERM (``clone3`` with ENOSYS, as under Docker, so that
glibc falls back to ``clone``, whose flags are checked); the filter is installed last, after the
seal has made its mounts and namespaces, and holds for every process the job starts.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
from typing import Any

#: (x86_64, aarch64) numbers of the calls refused outright, by name
DENIED: dict[str, tuple[int, int]] = {
    # the keyrings: a job would read the keys of whoever started srtui
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    # io_uring: a second kernel interface that seccomp does not see into
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    # nested namespaces and mounts: the seal's own work, never a job's
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "open_tree": (428, 428), "move_mount": (429, 429), "mount_setattr": (442, 442),
    # other processes' memory, even its own children's (stricter than Docker: it allows these)
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "kcmp": (312, 272),
    # kernel attack surface
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "acct": (163, 89), "swapon": (167, 224),
    "swapoff": (168, 225), "reboot": (169, 142), "syslog": (103, 116), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "lookup_dcookie": (212, 18), "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264), "fanotify_init": (300, 262), "nfsservctl": (180, 42),
    "clock_settime": (227, 112), "clock_adjtime": (305, 266), "settimeofday": (164, 170),
    "vhangup": (153, 58), "mbind": (237, 235), "set_mempolicy": (238, 237), "get_mempolicy": (239, 236),
    "move_pages": (279, 239),
    # the driver's one-core pin (stricter than Docker)
    "sched_setaffinity": (203, 122),
}  # fmt: skip
#: x86_64 only (aarch64 has none of these)
DENIED_X86 = {"iopl": 172, "ioperm": 173, "create_module": 174, "get_kernel_syms": 177, "query_module": 178,
              "uselib": 134, "ustat": 136, "sysfs": 139, "_sysctl": 156}  # fmt: skip
CLONE, CLONE3, PERSONALITY = (56, 220), (435, 435), (135, 92)
#: clone's flags that make namespaces (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET)
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
#: the personalities Docker allows (PER_LINUX, UNAME26, PER_LINUX32, their mix, and the query)
PERSONALITIES = (0x0, 0x0008, 0x20000, 0x20008, 0xFFFFFFFF)
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
KEYCTL_JOIN_SESSION_KEYRING = 1

LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
SECCOMP_DATA_NR, SECCOMP_DATA_ARCH, SECCOMP_DATA_ARG0 = 0, 4, 16  # arg0's low word (little-endian)


def _arch_index() -> int | None:
    machine = platform.machine()
    return {"x86_64": 0, "aarch64": 1}.get(machine)


def denied_names() -> list[str]:
    """The calls refused outright on this machine (the docs' list)."""
    return sorted([*DENIED, *(DENIED_X86 if _arch_index() == 0 else ())])


def program(arch_index: int) -> list[tuple[int, int, int, int]]:
    """The BPF program (code, jt, jf, k); jumps are resolved from labels."""
    arch = AUDIT_ARCH["x86_64" if arch_index == 0 else "aarch64"]
    numbers = [pair[arch_index] for pair in DENIED.values()]
    if arch_index == 0:
        numbers += list(DENIED_X86.values())
    # (code, jump-true label, jump-false label, k); a label is an int offset (0: next) or a name
    prog: list[tuple[int | str, int | str, int | str, int]] = [
        (LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        (JEQ_K, 1, 0, arch),
        (RET_K, 0, 0, RET_KILL),
        (LD_W_ABS, 0, 0, SECCOMP_DATA_NR),
        (JGE_K, "deny", 0, 0x40000000),  # the x32 ABI's numbers (nothing srtui runs uses it)
        (JEQ_K, "clone", 0, CLONE[arch_index]),
        (JEQ_K, "enosys", 0, CLONE3[arch_index]),
        (JEQ_K, "personality", 0, PERSONALITY[arch_index]),
        *[(JEQ_K, "deny", 0, nr) for nr in sorted(set(numbers))],
        (RET_K, 0, 0, RET_ALLOW),
        ("clone", 0, 0, 0),
        (LD_W_ABS, 0, 0, SECCOMP_DATA_ARG0),
        (JSET_K, "deny", 0, CLONE_NAMESPACES),
        (RET_K, 0, 0, RET_ALLOW),
        ("personality", 0, 0, 0),
        (LD_W_ABS, 0, 0, SECCOMP_DATA_ARG0),
        *[(JEQ_K, "allow", 0, p) for p in PERSONALITIES],
        ("deny", 0, 0, 0),
        (RET_K, 0, 0, RET_ERRNO | errno.EPERM),
        ("enosys", 0, 0, 0),
        (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        ("allow", 0, 0, 0),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    labels: dict[str, int] = {}
    out: list[tuple[int | str, int | str, int | str, int]] = []
    for ins in prog:
        if isinstance(ins[0], str):
            labels[ins[0]] = len(out)
        else:
            out.append(ins)

    def target(at: int, jump: int | str) -> int:
        return jump if isinstance(jump, int) else labels[jump] - at - 1

    return [(int(c), target(i, jt), target(i, jf), k) for i, (c, jt, jf, k) in enumerate(out)]


def fresh_session_keyring(libc: Any) -> None:
    """Join a new, empty session keyring (the one it inherited holds its starter's keys); the
    filter then refuses ``keyctl`` itself. Where keyrings are not built into the kernel, nothing."""
    index = _arch_index()
    if index is not None:
        libc.syscall(DENIED["keyctl"][index], KEYCTL_JOIN_SESSION_KEYRING, None)


def install(libc: Any) -> int:
    """Install the filter on this thread and its future children; 0 or the errno."""
    index = _arch_index()
    if index is None:
        return 0
    prog = program(index)
    code = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    filt = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(filt))
    # PR_SET_SECCOMP (22), SECCOMP_MODE_FILTER (2)
    if libc.prctl(22, 2, ctypes.create_string_buffer(fprog), 0, 0) != 0:
        return ctypes.get_errno() or errno.EINVAL
    return 0
