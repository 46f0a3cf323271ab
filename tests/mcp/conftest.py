"""One `evigate serve --mcp` for a module of tests, and a client of each transport."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from mcp import ClientSession

from tests.mcp.clients import TOKEN, http_session, stdio_session
from tests.support.server_proc import ServerProc, free_port

Connect = Callable[[], AbstractAsyncContextManager[ClientSession]]


class McpServer:
    """`evigate serve --mcp 127.0.0.1:<port>` with a bearer token, as a subprocess."""

    def __init__(self, workdir: Path, *extra: str) -> None:
        self.mcp_port = free_port()
        self.proc = ServerProc(
            workdir,
            name="mcp",
            args=["--mcp", f"127.0.0.1:{self.mcp_port}", *extra],
            env={"EVIGATE_AUTH_TOKENS": TOKEN},
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.mcp_port}/mcp"

    def start(self) -> McpServer:
        self.proc.start().wait_serving()
        return self


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    server = McpServer(tmp_path_factory.mktemp("mcp")).start()
    yield server
    server.proc.stop()
    server.proc.reap()


@pytest.fixture(params=["http", "stdio"])
def connect(request: pytest.FixtureRequest, served: McpServer, tmp_path: Path) -> Connect:
    """A new client session over the transport of this run."""
    if request.param == "http":
        return lambda: http_session(served.url)
    workdir = tmp_path / "stdio"
    workdir.mkdir()
    return lambda: stdio_session(workdir)
