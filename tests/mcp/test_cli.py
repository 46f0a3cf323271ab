"""`evigate serve --mcp`: the banner names the endpoint; a bad address or a port in use stops serve
with one clear line. `evigate mcp` over stdio listens on no port at all."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.clients import call, stdio_session
from tests.mcp.conftest import McpServer
from tests.support.server_proc import ServerProc


def test_serve_prints_where_mcp_is_served(served: McpServer) -> None:
    assert f"evigate MCP on {served.url}" in served.proc.log_text().splitlines()


def test_a_bad_mcp_address_stops_serve_before_it_starts(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evigate.server", "serve", "--mcp", "localhost:http"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip() == "evigate: configuration: mcp: expected HOST:PORT or PORT, got 'localhost:http'"
    )


def test_an_mcp_port_in_use_stops_serve_naming_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ServerProc(tmp_path, args=["--mcp", f"127.0.0.1:{port}"]).start()
        try:
            with pytest.raises(AssertionError, match=rf"cannot listen on 127.0.0.1:{port} \(mcp\)"):
                server.wait_serving()
            assert server.proc is not None and server.proc.wait(timeout=30) != 0
        finally:
            server.reap()


def _children(word: str) -> list[int]:
    """This process's children whose command line holds `word`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):  # a process that ended meanwhile
            continue
        if parent == os.getpid() and word.encode() in command:
            found.append(int(stat.parent.name))
    return found


def _listening(pid: int) -> set[str]:
    """The local addresses of the TCP sockets the process listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    listening = set()
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                listening.add(fields[1])
    return listening


async def test_mcp_over_stdio_listens_on_no_port(tmp_path: Path) -> None:
    async with stdio_session(tmp_path) as client:
        assert "sessions" in await call(client, "list_sessions")  # the service has started
        (pid,) = _children("mcp")
        assert _listening(pid) == set()
