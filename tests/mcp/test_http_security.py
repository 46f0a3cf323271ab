"""The HTTP transport's guard: the gRPC bearer tokens, the Origin check, loopback by default; and
nothing recorded lost when the process is killed."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

from evigate.server.mcp.http import McpHttpServer, origin_allowed
from tests.mcp.clients import TOKEN, call, http_session
from tests.mcp.conftest import McpServer

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


def _reason(response: httpx.Response) -> Any:
    return response.json()["error"]["reason"]


def test_a_missing_or_wrong_token_is_refused_and_the_right_one_admitted(served: McpServer) -> None:
    missing = _post(served.url)
    wrong = _post(served.url, Authorization="Bearer not-the-token")
    not_bearer = _post(served.url, Authorization=f"Basic {TOKEN}")
    right = _post(served.url, Authorization=f"Bearer {TOKEN}")
    assert (missing.status_code, _reason(missing)) == (401, "MISSING_TOKEN")
    assert (wrong.status_code, _reason(wrong)) == (401, "INVALID_TOKEN")
    assert (not_bearer.status_code, _reason(not_bearer)) == (401, "INVALID_TOKEN")
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert right.status_code == 200 and right.json()["result"]["serverInfo"]["name"] == "evigate"


async def test_the_sdk_client_with_a_wrong_token_gets_no_session(served: McpServer) -> None:
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": "Bearer not-the-token"}
    with pytest.raises(Exception, match="unhandled errors"):  # the SDK's error for a refused request
        async with (
            httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http,
            streamable_http_client(served.url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
    assert statuses and set(statuses) == {401}
    async with http_session(served.url) as client:  # the server is unharmed
        assert "sessions" in await call(client, "list_sessions", limit=1)


def test_a_foreign_origin_is_refused_and_a_loopback_one_admitted(served: McpServer) -> None:
    auth = f"Bearer {TOKEN}"
    foreign = _post(served.url, Authorization=auth, Origin="https://evil.example")
    lookalike = _post(served.url, Authorization=auth, Origin="http://localhost.evil.example")
    local = _post(served.url, Authorization=auth, Origin=f"http://localhost:{served.mcp_port}")
    assert (foreign.status_code, _reason(foreign)) == (403, "FORBIDDEN_ORIGIN")
    assert (lookalike.status_code, _reason(lookalike)) == (403, "FORBIDDEN_ORIGIN")
    assert local.status_code == 200


def test_origins_allowed_are_loopback_ones_and_those_listed() -> None:
    listed = ("https://ide.example.com",)
    assert origin_allowed(None, listed) and origin_allowed("", listed)
    assert origin_allowed("http://127.0.0.1:6274", listed) and origin_allowed("http://[::1]", listed)
    assert origin_allowed("https://ide.example.com", listed)
    assert not origin_allowed("https://ide.example.com.evil", listed)
    assert not origin_allowed("http://127.0.0.1.evil:80", listed)


def test_an_address_off_loopback_needs_tokens() -> None:
    with pytest.raises(OSError, match="non-loopback address needs auth tokens"):
        McpHttpServer(MCPServer("t"), "0.0.0.0", 0, ())


async def test_a_recorded_call_survives_a_killed_process(tmp_path: Path) -> None:
    server = McpServer(tmp_path).start()
    try:
        async with http_session(server.url) as client:
            query = await call(client, "query_logs", service="payment-service", keyword="超时")
        server.proc.kill(signal.SIGKILL)
        server.proc.start().wait_serving()
        async with http_session(server.url) as client:
            trace = await call(client, "get_trace", session_id=query["session_id"])
    finally:
        server.proc.reap()
    (invocation,) = trace["invocations"]
    assert invocation["id"] == query["invocation_id"] and invocation["status"] == "success"
    assert invocation["raw_result"] == query["result"]
