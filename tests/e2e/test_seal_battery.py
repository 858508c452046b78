"""Sealed jobs (#39): a battery of hostile SRBench method folders, each one attack, run at once
beside honest competitors through the real `srtui run`, under both launchers, as root and as an
ordinary account. Each hostile folder wraps LinearRegression, tries its attack in ``fit`` and
prints what it got (``SEAL-REPORT``) to its stdout, which the driver keeps in logs/; the test
reads every report, and checks from outside what it can: the honest jobs' stored results equal
those of a clean run, no record planted in cache/pids, no connection reached our listener, the
driver was never stopped (the run ends), and the job saw no terminal.

docs/untrusted-jobs.md cites each attack's test here.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO, results_json

TASK = "smoke-interaction"  # LinearRegression's R2 there is far from 1: y_test would show
HONEST = ("linear", "poly2")
SECRET = "seal-secret-4f1d"  # in the driver's environment: no job may read it
ACCOUNT = "srtui-seal"

#: attack name -> the code of ``attack()`` in a hostile regressor.py: returns (got, detail),
#: ``got`` true when the attack reached what it went for
ATTACKS = {
    "read_y_test": """
found = [p for p in npz_files() if has_y_test(p)]
STATE["y_test"] = load_y_test(found)
return bool(found), found[:5]
""",
    "update_db": """
done = []
for p in (WS + "/srtui.db", "../../../srtui.db", "../../srtui.db"):
    try:
        fd = os.open(p, os.O_RDWR)
        os.close(fd)
        with sqlite3.connect(p, timeout=5) as conn:
            conn.execute("UPDATE jobs SET status = 'error' WHERE method != 'evil'")
        done.append(p)
    except Exception:
        pass
return bool(done), done
""",
    "overwrite_other_jobs": """
done = []
for d in glob.glob(WS + "/cache/jobs/*") + glob.glob("../*"):
    if os.path.realpath(d) == os.path.realpath(".") or not os.path.exists(os.path.join(d, "job.json")):
        continue  # itself, or not a job's folder (its own private /tmp is one level up too)
    for name in ("data.npz", "predictions.npz"):
        try:
            with open(os.path.join(d, name), "wb") as fh:
                fh.write(b"poison")
            done.append(os.path.join(d, name))
        except OSError:
            pass
return bool(done), done[:5]
""",
    "stop_driver": """
stopped = []
for pid in driver_candidates():
    try:
        os.kill(pid, signal.SIGSTOP)
        stopped.append(pid)
        time.sleep(0.5)
        os.kill(pid, signal.SIGCONT)  # never leave a test's driver stopped
    except OSError:
        pass
return bool(stopped), stopped
""",
    "rewrite_task_cache": """
done = []
for p in glob.glob(WS + "/cache/tasks/*") + glob.glob(WS + "/cache/data/*") + glob.glob(WS + "/tasks/*/*"):
    try:
        with open(p, "r+b") as fh:
            fh.write(b"poison")
        done.append(p)
    except OSError:
        pass
return bool(done), done[:5]
""",
    "plant_pid_record": """
if not os.path.exists(WS + "/srtui.db"):
    return False, "the workspace is not there to plant in"  # (its private /tmp may hold the path)
try:
    os.makedirs(WS + "/cache/pids", exist_ok=True)
    with open(WS + "/cache/pids/planted", "w") as fh:
        fh.write("driver 1:0.0\\n1 0.0 1\\n")
    return True, "planted"
except OSError as exc:
    return False, str(exc)
""",
    "driver_terminal": """
done = []
ttys = [fd for fd in (0, 1, 2) if os.isatty(fd)]
for pid in driver_candidates():
    for fd in (0, 1, 2):
        try:
            with open(f"/proc/{pid}/fd/{fd}", "w") as fh:
                fh.write("\\x1b]0;PWNED\\x07")
            done.append(f"{pid}/{fd}")
        except OSError:
            pass
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        done.append(f"TIOCSTI {fd}")
    except OSError:
        pass
return bool(done or ttys), {"written": done, "ttys": ttys}
""",
    "widen_affinity": """
before = sorted(os.sched_getaffinity(0))
try:
    os.sched_setaffinity(0, range(os.cpu_count() or 1))
except OSError as exc:
    return False, f"{before}: {exc}"
after = sorted(os.sched_getaffinity(0))
return len(after) > len(before), {"before": before, "after": after}
""",
    "driver_environ": """
got = [k for k, v in os.environ.items() if SECRET in v]
for pid in driver_candidates():
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            if SECRET.encode() in fh.read():
                got.append(pid)
    except OSError:
        pass
return bool(got), got
""",
    "open_db": """
got = []
for p in ("../../srtui.db", "../../../srtui.db", WS + "/srtui.db"):
    try:
        with open(p, "rb") as fh:
            fh.read(16)
        got.append(p)
    except OSError:
        pass
return bool(got), got
""",
    "list_cache": """
got = {}
for p in ("..", "../..", WS + "/cache", WS, os.path.expanduser("~"), "/root", "/home"):
    try:
        got[p] = sorted(os.listdir(p))[:10]
    except OSError:
        pass
hit = {p: names for p, names in got.items() if {"data", "tasks", "pids", "srtui.db", "logs"} & set(names)}
return bool(hit), hit
""",
    "connect_localhost": """
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    return True, "connected"
except OSError as exc:
    return False, str(exc)
""",
    "read_other_job": """
got = []
for d in glob.glob(WS + "/cache/jobs/*") + glob.glob("../*"):
    if os.path.realpath(d) == os.path.realpath(".") or not os.path.exists(os.path.join(d, "job.json")):
        continue  # itself, or not a job's folder (its own private /tmp is one level up too)
    for name in ("job.json", "data.npz", "result.json"):
        try:
            with open(os.path.join(d, name), "rb") as fh:
                fh.read(16)
            got.append(os.path.join(d, name))
        except OSError:
            pass
return bool(got), got[:5]
""",
    "escape": """
code = chr(10).join(["import os, time", "if os.fork() == 0:", "    os.setsid()", "    time.sleep(600)  # " + MARK])
import subprocess
subprocess.Popen([sys.executable, "-c", code], start_new_session=True, env={}).wait()
return False, "left a setsid grandchild behind (the test looks for it)"
""",
    "reach_init": """
# PID 1 of the job's namespace: under fork, an init the maker forked, whose root is the host's
import ctypes
got = {}
for what in ("root", "cwd"):
    try:
        got[what] = sorted(os.listdir(f"/proc/1/{what}"))[:10]
    except OSError:
        pass
for what in ("environ", "mem", "fd/0", "fd/3"):
    try:
        with open(f"/proc/1/{what}", "rb") as fh:
            fh.read(16)
        got[what] = "read"
    except OSError:
        pass
if os.getpid() != 2:  # not sealed (the test fails on that): never signal or trace the host's init
    return True, "not PID 2 of a namespace of its own"
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
    try:
        os.kill(1, sig)
    except OSError:
        pass
if ctypes.CDLL(None, use_errno=True).ptrace(16, 1, None, None) == 0:  # PTRACE_ATTACH
    got["ptrace"] = "attached"
time.sleep(0.2)
alive = os.path.exists("/proc/1/stat")  # it ignored the signals: the job still runs, in its namespace
return bool(got) or not alive, {**got, "init alive": alive}
""",
    "write_dev_tty": """
try:
    with open("/dev/tty", "w") as fh:
        fh.write("\\x1b]0;PWNED\\x07")
    return True, "written"
except OSError as exc:
    return False, str(exc)
""",
    "read_keyring": """
# the session keyring of whoever started srtui (the test adds KEY_SECRET to it): by syscalls,
# by the keyctl tool where the job sees one, and through /proc/keys
import ctypes, subprocess
libc = ctypes.CDLL(None, use_errno=True)
got = {}
buf = ctypes.create_string_buffer(4096)
keyctl = 250 if os.uname().machine == "x86_64" else 219
for ring in (-3, -4, -5):  # session, user, user-session keyrings
    n = libc.syscall(keyctl, 6, ring, buf, 4096)  # KEYCTL_READ: the ids it holds
    if n > 0:
        for i in range(0, min(n, 4096) // 4):
            key = int.from_bytes(buf.raw[4 * i : 4 * i + 4], "little")
            m = libc.syscall(keyctl, 11, key, buf, 4096)  # KEYCTL_READ the key's payload
            if m > 0 and KEY_SECRET.encode() in buf.raw[:m]:
                got[f"ring {ring}"] = "payload"
for argv in (["keyctl", "show", "@s"], ["keyctl", "pipe", "%user:srtui-seal-key"]):
    try:
        out = subprocess.run(argv, capture_output=True, timeout=10).stdout
        if KEY_SECRET.encode() in out or b"srtui-seal-key" in out:
            got[argv[1]] = out.decode(errors="replace")[:100]
    except (OSError, subprocess.SubprocessError):
        pass
try:
    if "srtui-seal-key" in open("/proc/keys").read():
        got["/proc/keys"] = "listed"
except OSError:
    pass
return bool(got), got
""",
    "io_uring": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425 if os.uname().machine == "x86_64" else 425, 8, params)  # io_uring_setup
return fd >= 0, f"io_uring_setup: {fd}, errno {ctypes.get_errno()}"
""",
    "nested_namespaces": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
got = {}
if libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER | CLONE_NEWNS
    got["unshare"] = "user and mount namespaces"
os.makedirs("/tmp/m", exist_ok=True)
if libc.mount(b"tmpfs", b"/tmp/m", b"tmpfs", 0, None) == 0:
    got["mount"] = "tmpfs"
clone = 56 if os.uname().machine == "x86_64" else 220
pid = libc.syscall(clone, 0x10000000 | 0x20000000 | 17, 0, 0, 0, 0)  # NEWUSER | NEWPID, SIGCHLD
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0)
    got["clone"] = "a child in new user and PID namespaces"
return bool(got), got
""",
    "suid_in_job_folder": """
mounts = [ln.split() for ln in open("/proc/self/mountinfo")]
opts = [m[5] for m in mounts if len(m) > 5 and m[4] == "/job"]
ok = bool(opts) and all("nosuid" in o.split(",") and "nodev" in o.split(",") for o in opts)
return not ok, opts
""",
    "forge_result": """
# at its exit, after the worker wrote them, it rewrites its figures and its provenance: the
# driver measures the first and writes the second itself (the test checks the stored row)
import atexit

def forge():
    with open("result.json") as fh:
        result = json.load(fh)
    result.update(fit_s=1e-9, energy_j=1e-9, energy_method="rapl")
    result["notes"] = {"python": "/forged/python", "isolation": "none", "network": "forged"}
    with open("result.json", "w") as fh:
        json.dump(result, fh)

atexit.register(forge)
time.sleep(0.5)  # a fit of half a second
return False, "forges result.json at its exit"
""",
    "fallback_reach": """
# unsealed (SRTUI_ISOLATION=fallback): as root it would write anywhere and read the memory of
# the fork server that forked it (tests/e2e/test_seal_limits.py runs it there)
got = {"uid 0": True} if os.getuid() == 0 else {}
try:
    with open(os.path.join(WS, "planted"), "w") as fh:
        fh.write("x")
    got["write"] = WS
except OSError:
    pass
for pid in driver_candidates():
    for what in ("mem", "environ"):
        try:
            with open(f"/proc/{pid}/{what}", "r+b" if what == "mem" else "rb") as fh:
                fh.read(1) if what == "environ" else None
            got[f"{pid}/{what}"] = "opened"
        except OSError:
            pass
return bool(got), got
""",
}

#: what a job holds outside its processes' memory, or on disk: each ends with the status named
#: (killed before its report: a report means it held all it wanted, and the test fails)
HOLDS = {
    "fill_tmp": (
        "oom",
        """
done = 0
try:
    with open("/tmp/fill", "wb") as fh:
        for _ in range(32):  # 2 GB in 64 MB chunks: the tmpfs (size = the memory limit) refuses first
            fh.write(bytes(64 << 20))
            done += 64
except OSError:
    pass
time.sleep(60)  # holds it (the test's time limit is 120 s)
return True, f"held {done} MB in /tmp"
""",
    ),
    "fill_shm": (
        "oom",
        """
done = 0
try:
    with open("/dev/shm/fill", "wb") as fh:
        for _ in range(32):
            fh.write(bytes(64 << 20))
            done += 64
except OSError:
    pass
time.sleep(60)
return True, f"held {done} MB in /dev/shm"
""",
    ),
    "fill_memfd": (
        "oom",
        """
fd = os.memfd_create("fill")
for _ in range(32):
    os.write(fd, bytes(64 << 20))
    time.sleep(0.05)  # the driver polls every 0.25 s: it sees the growth
time.sleep(60)
return True, "held 2 GB in a memfd"
""",
    ),
    "fill_disk": (
        "disk",
        """
done = 0
for i in range(3):  # 3 x 700 MB: each file under RLIMIT_FSIZE (1 GiB), the total over disk_mb
    with open(f"fill{i}", "wb") as fh:
        for _ in range(700 // 50):
            fh.write(bytes(50 << 20))
            done += 50
return True, f"wrote {done} MB into its folder"
""",
    ),
}
KEY_SECRET = "keyring-secret-7d3a"  # in the session keyring srtui is started under

HOSTILE = """
import fcntl, glob, json, os, signal, socket, sqlite3, sys, termios, time
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression

ATTACK, WS, PORT, SECRET, MARK, KEY_SECRET = {attack!r}, {ws!r}, {port!r}, {secret!r}, {mark!r}, {key_secret!r}
STATE = {{}}
SYSTEM_TREES = {{"usr", "proc", "sys", "lib", "lib64", "etc", "site-packages", ".pyenv", ".venv", "dev"}}


def npz_files():
    out = []
    for top in (".", "..", "../..", "/tmp", WS, os.path.expanduser("~")):
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in SYSTEM_TREES]
            out += [os.path.join(root, f) for f in files if f.endswith(".npz")]
            if len(out) > 500:
                return out
    return out


def has_y_test(path):
    try:
        with np.load(path) as z:
            return "y_test" in z.files
    except Exception:
        return False


def load_y_test(paths):
    for p in paths:
        with np.load(p) as z:
            return np.asarray(z["y_test"])
    return None


def driver_candidates():
    pids = {{os.getppid()}}
    for name in ("SRTUI_PARENT_PID",):
        if os.environ.get(name, "").isdigit():
            pids.add(int(os.environ[name]))
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{{entry}}/cmdline", "rb") as fh:
                    line = fh.read()
                if b"srtui" in line or b"fork_server" in line:
                    pids.add(int(entry))
            except OSError:
                pass
    return sorted(p for p in pids if p > 1 and p != os.getpid())


def attack():
{body}


class Hostile(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        try:
            got, detail = attack()
        except Exception as exc:
            got, detail = False, f"{{type(exc).__name__}}: {{exc}}"
        report = {{"attack": ATTACK, "got": bool(got), "detail": str(detail)[:500]}}
        print("SEAL-REPORT " + json.dumps(report), flush=True)
        self.lin_ = LinearRegression().fit(X, y)
        return self

    def predict(self, X):
        y_test = STATE.get("y_test")
        if y_test is not None and len(y_test) == len(X):
            return y_test  # what a leak would score: R2 1.0
        return self.lin_.predict(X)


est = Hostile()


def model(est, X=None):
    return "x0"
"""


def write_folders(root: Path, ws: Path, port: int) -> list[Path]:
    folders = []
    bodies = {**ATTACKS, **{name: body for name, (_, body) in HOLDS.items()}}
    for name, body in bodies.items():
        folder = root / "methods" / f"evil_{name}"
        folder.mkdir(parents=True)
        indented = "\n".join("    " + line for line in body.strip().splitlines())
        text = HOSTILE.format(
            attack=name, ws=str(ws), port=port, secret=SECRET, mark=root.name, body=indented, key_secret=KEY_SECRET
        )
        (folder / "regressor.py").write_text(text)
        folders.append(folder)
    return folders


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


# --- running as an ordinary account -------------------------------------------------------------


def _account() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(ACCOUNT)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ACCOUNT], check=True)
        entry = pwd.getpwnam(ACCOUNT)
    return entry.pw_uid, entry.pw_gid


def _closed_ancestor(path: Path) -> Path | None:
    """The outermost folder above ``path`` that others may not enter (e.g. /root), if any."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & stat.S_IXOTH:
            return parent
    return None


def as_account(cmd: list[str], stage: Path) -> list[str]:
    """``cmd`` run by the ordinary account. Where this interpreter lies under a folder others may
    not enter (pyenv under /root, 0700), a mount namespace of the test's own shows an empty,
    open folder there holding only the interpreter's tree: nothing is copied, nothing changes
    for the rest of the machine."""
    script = ["set -e", "mount --make-rprivate /"]
    for tree in {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), REPO.resolve()}:
        closed = _closed_ancestor(tree)
        if closed is None:
            continue
        keep = closed / tree.relative_to(closed).parts[0]
        hold = stage / f"hold{len(script)}"
        hold.mkdir()
        script += [
            f"mount --bind '{keep}' '{hold}'",
            f"mountpoint -q '{closed}' || mount -t tmpfs -o mode=0755 tmpfs '{closed}'",
            f"mkdir -p '{keep}'",
            f"mount --bind '{hold}' '{keep}'",
        ]
    quoted = " ".join("'" + c.replace("'", "'\\''") + "'" for c in cmd)
    script.append(f"exec runuser -u {ACCOUNT} -- {quoted}")
    return ["unshare", "-m", "sh", "-c", "\n".join(script)]


# --- the battery -------------------------------------------------------------------------------


def run_battery(root: Path, launcher: str, who: str, methods_dirs: list[Path], ws: Path) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "srtui",
        "run",
        "smoke",
        "--methods",
        ",".join([*HONEST, *(f.name for f in methods_dirs)]),
        "--tasks",
        TASK,
        *[a for f in methods_dirs for a in ("--method-dir", str(f))],
        "--workspace",
        str(ws),
        "--jobs",
        "2",
        "--launcher",
        launcher,
        "--time-limit",
        "120",
        "--mem-limit",
        "400",  # the holders' 2 GB is five times over it
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "SRTUI_ISOLATION")}
    env.update({"SRTUI_SEAL_TEST": SECRET, "PYTHONPATH": str(REPO)})
    cmd = under_keyring(cmd)
    if who == "ordinary":
        cmd = as_account(cmd, root)
    # in a folder the account may enter (the test's own working directory is root's)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, cwd=root)


def under_keyring(cmd: list[str]) -> list[str]:
    """``cmd`` started in a new session keyring holding a user key whose payload is KEY_SECRET
    (the real ``keyctl``; the test needs it: ``apt-get install keyutils``)."""
    if shutil.which("keyctl") is None:
        pytest.skip("keyctl is not installed (apt-get install keyutils)")
    add = 'keyctl add user srtui-seal-key "$0" @s >/dev/null && exec "$@"'
    return ["keyctl", "session", "-", "sh", "-c", add, KEY_SECRET, *cmd]


def secret_in_logs(ws: Path) -> list[str]:
    """The job logs (and anything else under logs/) that hold KEY_SECRET."""
    return [p.name for p in (ws / "logs").rglob("*") if p.is_file() and KEY_SECRET.encode() in p.read_bytes()]


def reports(ws: Path) -> dict[str, dict]:
    out = {}
    for path in (ws / "logs").glob("*.stdout"):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("SEAL-REPORT "):
                report = json.loads(line[len("SEAL-REPORT ") :])
                out[report["attack"]] = report
    return out


def honest_results(ws: Path) -> dict[str, tuple]:
    rows = results_json(ws)
    return {r["method"]: (r["status"], r["r2_test"], r["model"]) for r in rows if r["method"] in HONEST}


@pytest.fixture(scope="module")
def clean_results(tmp_path_factory) -> dict[str, tuple]:
    """The honest competitors alone, in a workspace of their own."""
    ws = tmp_path_factory.mktemp("clean") / "ws"
    cmd = [sys.executable, "-m", "srtui", "run", "smoke", "--methods", ",".join(HONEST), "--tasks", TASK]
    proc = subprocess.run([*cmd, "--workspace", str(ws)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return honest_results(ws)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize(
    ("launcher", "who"),
    [
        ("fork", "root"),
        ("fork", "ordinary"),
        pytest.param("exec", "root", marks=pytest.mark.slow),
        pytest.param("exec", "ordinary", marks=pytest.mark.slow),
    ],
)
def test_hostile_folders_get_nothing(launcher: str, who: str, clean_results: dict[str, tuple]) -> None:
    if who == "root" and os.geteuid() != 0:
        pytest.skip("the root variant needs root; the ordinary-account variant runs as this user")
    if who == "ordinary" and os.geteuid() == 0:
        _account()
    root = Path(tempfile.mkdtemp(prefix="srtui-seal-"))
    listener = Listener()
    try:
        os.chmod(root, 0o755)
        ws = root / "ws"
        folders = write_folders(root, ws, listener.port)
        if who == "ordinary" and os.geteuid() == 0:
            uid, gid = _account()
            for path in [root, *root.rglob("*")]:
                os.chown(path, uid, gid)
        proc = run_battery(root, launcher, who, folders, ws)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        assert "isolation: fallback" not in proc.stderr
        got = reports(ws)
        assert set(ATTACKS) <= set(got), f"no report from {sorted(set(ATTACKS) - set(got))}"
        reached = {name: r["detail"] for name, r in got.items() if r["got"]}
        assert not reached, f"attacks that reached their target: {reached}"
        assert honest_results(ws) == clean_results  # nothing a hostile job did changed them
        evil = {r["method"]: r for r in results_json(ws) if r["method"].startswith("evil_")}
        held = {name: evil[f"evil_{name}"]["status"] for name in HOLDS}
        assert held == {name: status for name, (status, _) in HOLDS.items()}, held
        assert not secret_in_logs(ws)
        forged = evil["evil_forge_result"]
        assert forged["fit_s"] >= 0.4 and forged["energy_j"] > 1e-6, forged  # measured by the driver
        assert forged["method_notes"]["isolation"] == "namespaces" and "network" not in forged["method_notes"]
        assert forged["method_notes"]["reported_fit_s"] == 1e-9  # kept as the method's own figure
        assert evil["evil_read_y_test"]["r2_test"] < 0.99  # it predicted with what it could see
        assert not (ws / "cache" / "pids" / "planted").exists()
        assert listener.accepted == 0
        escaped = [p.pid for p in psutil.process_iter() if root.name in " ".join(_cmdline(p))]
        assert not escaped, f"processes the job left: {escaped}"
    finally:
        listener.close()
        shutil.rmtree(root, ignore_errors=True)


def _job_process(driver: int) -> psutil.Process | None:
    """The job's root: the exec'd worker, or the fork server's child that carries a job's token
    (not the server's other child, the maker of its jobs' inits: srtui.engine.process.job_inits)."""
    for child in psutil.Process(driver).children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            parent = child.parent()
            forked = parent is not None and "fork_server" in " ".join(parent.cmdline())
            token = child.environ().get("SRTUI_JOB_TOKEN", "") if forked else ""
            if "job_worker" in line or (forked and not token.startswith("forkserver-")):
                return child
        except psutil.Error:
            continue
    return None


@pytest.mark.parametrize("launcher", ["fork", pytest.param("exec", marks=pytest.mark.slow)])
def test_watchdog_kills_a_job_while_the_driver_is_stopped(tmp_path: Path, launcher: str) -> None:
    """SIGSTOP the driver while a job sleeps holding memory: the job's watchdog (outside its PID
    namespace: its fork server, or the exec'd worker's first process) still ends it at the wall
    limit plus grace, and RLIMIT_AS caps what it holds."""
    folder = tmp_path / "methods" / "hog"
    folder.mkdir(parents=True)
    (folder / "regressor.py").write_text(
        "import time\nfrom sklearn.linear_model import LinearRegression\n"
        "class Hog(LinearRegression):\n"
        "    def fit(self, X, y):\n"
        "        held = []\n"
        "        print('HOG-START', flush=True)\n"
        "        for _ in range(400):\n"
        "            try:\n"
        "                held.append(bytearray(8 << 20))\n"
        "            except MemoryError:\n"
        "                break\n"
        "        time.sleep(600)\n"
        "est = Hog()\n"
        "def model(est, X=None):\n    return 'x0'\n"
    )
    ws = tmp_path / "ws"
    cmd = [sys.executable, "-m", "srtui", "run", "smoke", "--methods", "hog", "--tasks", TASK]
    cmd += ["--method-dir", str(folder), "--workspace", str(ws), "--time-limit", "8", "--grace", "1"]
    cmd += ["--mem-limit", "200", "--launcher", launcher, "--no-metrics"]
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        job_tree: list[psutil.Process] = []
        deadline = time.monotonic() + 300
        while not job_tree and time.monotonic() < deadline:
            job = _job_process(driver.pid)
            try:  # the job's root with the method under it (a process of the launch may come and go)
                job_tree = [job, *job.children(recursive=True)] if job is not None else []
            except psutil.Error:
                job_tree = []
            # exec'd: the worker, its watchdog's init and the job; forked: the job (its init is the maker's)
            job_tree = job_tree if len(job_tree) > (1 if launcher == "exec" else 0) else []
            time.sleep(0.2)
        assert job_tree, "the job did not start"
        driver.send_signal(19)  # SIGSTOP: the driver's own limits are frozen
        started = time.monotonic()
        alive = job_tree
        while time.monotonic() - started < 120:
            alive = [p for p in job_tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
            if not alive:
                break
            time.sleep(0.5)
        assert not alive, "the job outlived its wall limit while the driver was stopped"
        assert time.monotonic() - started < 8 + 1 + 5 + 30  # limit + grace + the watchdog's margin, loaded
    finally:
        driver.send_signal(18)  # SIGCONT
        try:
            driver.communicate(timeout=300)
        finally:
            if driver.poll() is None:
                driver.kill()
    rows = [r for r in results_json(ws) if r["method"] == "hog"]
    assert rows and rows[0]["status"] in ("timeout", "oom"), rows
    if rows[0]["status"] == "timeout":
        assert "killed by its watchdog" in rows[0]["limit_detail"] or "wall time" in rows[0]["limit_detail"], rows


def test_fallback_is_said(tmp_path: Path) -> None:
    """The capability report: one line in --dry-run; forcing the fallback is said there and as
    a note of the run."""
    from srtui.engine.process.seal import isolation

    env = {k: v for k, v in os.environ.items() if k not in ("SRTUI_WORKSPACE", "SRTUI_ISOLATION")}
    args = [sys.executable, "-m", "srtui", "run", "smoke", "--dry-run", "--workspace", str(tmp_path / "ws")]
    plain = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert isolation().line in plain.stdout.splitlines()
    # which memory accounting is in force, and the disk limit (docs/untrusted-jobs.md)
    assert any(ln.startswith("memory: ") and "/tmp" in ln for ln in plain.stdout.splitlines()), plain.stdout
    assert "disk 1024 MB" in plain.stdout
    forced = subprocess.run(
        args, env={**env, "SRTUI_ISOLATION": "fallback"}, capture_output=True, text=True, timeout=300
    )
    assert forced.returncode == 0, forced.stderr
    line = next(ln for ln in forced.stdout.splitlines() if ln.startswith("isolation: "))
    assert line.startswith("isolation: fallback (SRTUI_ISOLATION=fallback)")
    assert f"note: {line}" in forced.stderr
