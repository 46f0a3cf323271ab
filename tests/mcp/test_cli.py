"""`evigate serve --mcp`: the banner names the endpoint; a bad address or a port in use stops serve
with one clear line."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

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
