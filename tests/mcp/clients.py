"""The SDK's own client against the real server: over streamable HTTP (with a bearer token) and over
stdio (`evigate mcp` as a subprocess, in its own work directory and embedded database)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

TOKEN = "mcp-test-token"
DEMO_QUESTION = "payment-service 现在有 HighCPUUsage 告警吗？"
TIMEOUT_S = 120.0  # a bound on a call that hangs, never a wait


@asynccontextmanager
async def http_session(url: str, token: str | None = TOKEN) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT_S) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(workdir: Path) -> AsyncIterator[ClientSession]:
    """`workdir` must exist: the process's database and log live there."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "evigate.server", "mcp", "--log-format", "json"],
        cwd=str(workdir),
        env=dict(os.environ),
    )
    with (workdir / "stderr.log").open("w") as errors:
        async with (
            stdio_client(parameters, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def data(result: CallToolResult) -> Any:
    """A successful call's JSON."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(client: ClientSession, tool: str, **arguments: Any) -> Any:
    """A tool call that must succeed: its JSON."""
    return data(await client.call_tool(tool, arguments))


async def refused(client: ClientSession, tool: str, **arguments: Any) -> str:
    """A tool call that must fail as a tool error: its text."""
    return error_text(await client.call_tool(tool, arguments))


def citing_first_ref(query: Any, excerpt: str | None = None, invocation: int | None = None) -> dict[str, Any]:
    """executor_evidence_v2 with one observation citing the first ref of a query tool's call (its
    whole text unless `excerpt`; its invocation unless `invocation`)."""
    ref = query["evidence_refs"][0]
    binding = {
        "tool_name": query["tool_name"],
        "source_invocation_id": invocation or query["invocation_id"],
        "raw_path": ref["raw_path"],
        "evidence_excerpt": excerpt if excerpt is not None else ref["text"],
    }
    claim = {
        "claim_id": "claim-1",
        "claim_type": "observation",
        "claim_text": "payment-service 记录了支付回调处理超时。",
        "support_level": "direct",
        "evidence_bindings": [binding],
    }
    return {"answer_version": "executor_evidence_v2", "claims": [claim]}
