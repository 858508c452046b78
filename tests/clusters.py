"""Real clusters on 127.0.0.1 for the Dask tests: an own sshd on a high port with a test key, and
a single-node SLURM (munge + slurmctld + slurmd from Debian's packages) in a temp directory.

Each ``start_*`` returns a handle whose ``stop()`` ends every process it started (by pid, never
by name), or raises ``Unavailable`` with the reason the tests skip with. Nothing listens on or
advertises another address than 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SLURM_PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client")


class Unavailable(Exception):
    """A cluster that cannot be brought up here; the message is the skip reason."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(check, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log and log.exists() else []
    raise Unavailable(f"{what} did not come up within {timeout:.0f} s {' | '.join(tail)}".strip())


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Servers:
    root: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    def spawn(self, args: list[str], log: str, env: dict | None = None) -> subprocess.Popen:
        with open(self.root / log, "ab") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
            )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)


# --- sshd ----------------------------------------------------------------------------------------


@dataclass
class SSHD(Servers):
    port: int = 0
    key: Path | None = None

    def connect_options(self) -> dict:
        return {
            "port": self.port,
            "client_keys": [str(self.key)],
            "known_hosts": str(self.root / "known_hosts"),
            "username": _user(),
        }


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def start_sshd() -> SSHD:
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
    keygen = shutil.which("ssh-keygen")
    if not sshd or not keygen:
        raise Unavailable("openssh-server is not installed (apt-get install -y openssh-server)")
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        raise Unavailable("asyncssh is not installed") from None
    root = Path(tempfile.mkdtemp(prefix="srtui-sshd-"))
    os.chmod(root, 0o700)
    for name in ("host_key", "client_key"):
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)], check=True)
    (root / "authorized_keys").write_text((root / "client_key.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    server = SSHD(root, port=free_port(), key=root / "client_key")
    host_key = (root / "host_key.pub").read_text().split()
    (root / "known_hosts").write_text(f"[127.0.0.1]:{server.port} {host_key[0]} {host_key[1]}\n")
    Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation directory sshd insists on
    (root / "sshd_config").write_text(
        f"Port {server.port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile none\nAcceptEnv none\n"
        f"PermitUserEnvironment no\nSubsystem sftp internal-sftp\nMaxSessions 50\nMaxStartups 50:30:100\n"
    )
    server.spawn([sshd, "-D", "-e", "-f", str(root / "sshd_config")], "sshd.log")
    try:
        _wait_for(lambda: _port_open(server.port), 20, "sshd", root / "sshd.log")
    except Unavailable:
        server.stop()
        raise
    return server


# --- SLURM ---------------------------------------------------------------------------------------


@dataclass
class Slurm(Servers):
    conf: Path | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def cancel_all(self) -> None:
        env = {**os.environ, **self.env}
        subprocess.run(["scancel", "--full", "-u", _user()], env=env, capture_output=True, timeout=30)

    def stop(self) -> None:
        try:
            self.cancel_all()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.queue():
                time.sleep(0.5)
        except (OSError, subprocess.SubprocessError):
            pass
        super().stop()

    def queue(self) -> list[str]:
        out = subprocess.run(
            ["squeue", "-h", "-o", "%i %T"], env={**os.environ, **self.env}, capture_output=True, text=True, timeout=30
        )
        return out.stdout.split("\n")[:-1] if out.returncode == 0 else []


def start_slurm() -> Slurm:
    missing = [
        exe
        for exe in ("munged", "slurmctld", "slurmd", "sbatch", "squeue")
        if not (shutil.which(exe) or Path(f"/usr/sbin/{exe}").exists())
    ]
    if missing:
        raise Unavailable(
            f"SLURM is not installed ({', '.join(missing)} missing; apt-get install -y {' '.join(SLURM_PACKAGES)})"
        )
    if os.geteuid() != 0:
        raise Unavailable("a single-node SLURM needs root here (slurmd runs jobs as their user)")
    root = Path(tempfile.mkdtemp(prefix="srtui-slurm-"))
    os.chmod(root, 0o755)
    for sub in ("state", "spool", "munge"):
        (root / sub).mkdir()
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    os.chmod(root / "munge", 0o700)
    socket_path = root / "munge" / "munge.socket"
    conf = root / "slurm.conf"
    server = Slurm(root, conf=conf)
    memory_mb = 4096
    conf.write_text(
        "ClusterName=srtuitest\nSlurmctldHost=localhost(127.0.0.1)\n"
        f"SlurmctldPort={free_port()}\nSlurmdPort={free_port()}\n"
        f"AuthType=auth/munge\nAuthInfo=socket={socket_path}\nCredType=cred/munge\n"
        f"SlurmUser=root\nSlurmdUser=root\nStateSaveLocation={root / 'state'}\nSlurmdSpoolDir={root / 'spool'}\n"
        f"SlurmctldPidFile={root / 'slurmctld.pid'}\nSlurmdPidFile={root / 'slurmd.pid'}\n"
        f"SlurmctldLogFile={root / 'slurmctld.log'}\nSlurmdLogFile={root / 'slurmd.log'}\n"
        "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSchedulerType=sched/backfill\n"
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nReturnToService=2\nMpiDefault=none\n"
        "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
        "JobCompType=jobcomp/none\nSwitchType=switch/none\nSchedulerParameters=sched_interval=2\n"
        "SlurmctldTimeout=30\nSlurmdTimeout=30\nMinJobAge=5\nKillWait=5\n"
        f"NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory={memory_mb} State=UNKNOWN\n"
        "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n"
    )
    env = {**os.environ, "SLURM_CONF": str(server.conf)}
    try:
        server.spawn(
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={socket_path}",
                f"--key-file={key}",
                f"--pid-file={root / 'munge' / 'munged.pid'}",
                f"--log-file={root / 'munge.log'}",
                f"--seed-file={root / 'munge' / 'seed'}",
            ],
            "munged.out",
        )
        _wait_for(socket_path.exists, 20, "munged", root / "munge.log")
        server.spawn(["slurmctld", "-D", "-i", "-f", str(server.conf)], "slurmctld.out", env)
        server.spawn(["slurmd", "-D", "-N", "localhost", "-f", str(server.conf)], "slurmd.out", env)
        _wait_for(lambda: _node_idle(env), 90, "slurmd (node idle)", root / "slurmd.log")
    except Unavailable:
        server.stop()
        raise
    return server


def _node_idle(env: dict) -> bool:
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True, timeout=30)
    return out.returncode == 0 and out.stdout.strip().startswith("idle")
