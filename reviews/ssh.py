"""The ``authorized_keys`` line that lets one SSH key do one thing: rate one expert's items.

OpenSSH runs a key's ``command="..."`` instead of whatever the client asked for (the request
is only passed in ``SSH_ORIGINAL_COMMAND``, and `review open` refuses when it is set); ``restrict`` turns off port,
agent and X11 forwarding, ``~/.ssh/rc`` and the pty, and ``pty`` gives the pty back so the
terminal UI can draw. The command is fixed: the absolute srtui executable, the session, the
expert and the absolute workspace, each from a strict alphabet (no quoting games).
"""

from __future__ import annotations

import base64
import binascii
import shlex
import struct
import sys
from pathlib import Path

from srtui.reviews.storage import ReviewError, check_name

KEY_TYPES = frozenset(
    {
        "ssh-ed25519",
        "ssh-rsa",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
    }
)


def parse_public_key(text: str) -> tuple[str, str]:
    """(type, base64 blob) of an OpenSSH public key line; options or a mismatched blob are refused."""
    parts = (text or "").strip().split()
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        raise ReviewError(
            "--key must be an OpenSSH public key such as 'ssh-ed25519 AAAA... comment' (no options before it)"
        )
    kind, blob = parts[0], parts[1]
    try:
        raw = base64.b64decode(blob, validate=True)
        (n,) = struct.unpack(">I", raw[:4])
        inner = raw[4 : 4 + n].decode("ascii")
    except (binascii.Error, struct.error, UnicodeDecodeError, ValueError):
        raise ReviewError("--key: the key's base64 part is not a valid OpenSSH public key") from None
    if inner != kind:
        raise ReviewError(f"--key: the key says {kind} but its data is a {inner or 'malformed'} key")
    return kind, blob


def srtui_command() -> list[str]:
    """How to start this srtui from sshd (which has its own PATH): this interpreter, absolutely."""
    return [str(Path(sys.executable).absolute()), "-P", "-m", "srtui"]


def forced_command(session: str, expert: str, workspace: Path) -> str:
    check_name(session, "session name")
    check_name(expert, "expert name")
    ws = str(Path(workspace).absolute())
    if '"' in ws or "\\" in ws or "\n" in ws:
        raise ReviewError(f"workspace path {ws!r} cannot go into an authorized_keys command (quote or backslash)")
    return shlex.join([*srtui_command(), "review", "open", session, "--expert", expert, "--workspace", ws])


def authorized_keys_line(session: str, expert: str, key: str, workspace: Path) -> str:
    kind, blob = parse_public_key(key)
    command = forced_command(session, expert, workspace)
    return f'restrict,pty,command="{command}" {kind} {blob} srtui-review:{session}:{expert}'
