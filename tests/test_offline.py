"""An offline memory engine stays offline: ``reverie demo`` — the embedding model, the write path, the dream cycle
and the searches — opens no socket to anything but the machine itself and writes nothing outside reverie's own
directories.

Two checks, in a child process running the demo: Python's own socket calls are refused outside loopback (a
``connect`` or name lookup of another host raises and is recorded), and — since native libraries (onnxruntime's
telemetry, say) do not go through Python's socket module — every ``connect``/``sendto`` system call of every
thread is traced with ``strace`` and must stay on loopback or local (Unix) sockets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

#: the demo with Python's socket calls guarded: a call for another host raises and is listed on stderr
_GUARDED_DEMO = r"""
import ipaddress, socket, sys
attempts = []

def local(host):
    if host is None or host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False

def guard(name, host):
    if not local(host):
        attempts.append(f"{name} {host}")
        raise OSError(f"reverie's offline test: {name} of {host} refused")

real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        guard("connect", address[0])
    return real_connect(self, address)

def connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        guard("connect_ex", address[0])
    return real_connect_ex(self, address)

def getaddrinfo(host, *args, **kwargs):
    guard("getaddrinfo", host)
    return real_getaddrinfo(host, *args, **kwargs)

socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
from reverie.cli import main
sys.argv = ["reverie", "demo", "--months", "1"]
try:
    main()
finally:
    sys.stderr.write("\nPYTHON-SOCKET-ATTEMPTS " + repr(attempts) + "\n")
"""

_SYSCALL = re.compile(
    r"(connect|sendto|sendmsg)\(\d+, \{sa_family=(AF_INET6?), "
    r".*?(?:inet_addr\(\"([^\"]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\")"
)


def _non_local(trace: str) -> list[str]:
    """The traced system calls that address another host (IPv4 or IPv6, loopback excepted)."""
    import ipaddress

    found = []
    for line in trace.splitlines():
        m = _SYSCALL.search(line)
        if m and not ipaddress.ip_address(m.group(3) or m.group(4)).is_loopback:
            found.append(line.strip()[:200])
    return found


def test_the_demo_opens_no_socket_to_another_host(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "REVERIE_"))}
    env.update(HOME=str(home), REVERIE_OPSLOG__PATH=str(tmp_path / "ops.jsonl"))
    cmd = [sys.executable, "-c", _GUARDED_DEMO]
    strace = shutil.which("strace")
    trace = tmp_path / "trace.txt"
    if strace is not None:
        cmd = [strace, "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace), *cmd]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "months later: evidence in the top 3" in run.stdout
    attempts = run.stderr.rsplit("PYTHON-SOCKET-ATTEMPTS ", 1)[1].strip()
    assert attempts == "[]", f"Python code reached for another host: {attempts}"
    # nothing written outside reverie's own directories under the home directory (its model cache)
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert [p for p in written if not re.match(r"\.(cache|local/share)/reverie/", p)] == []
    if strace is None:
        pytest.skip("strace is not installed: the native libraries' system calls were not traced")
    assert _non_local(trace.read_text(encoding="utf-8", errors="replace")) == []
