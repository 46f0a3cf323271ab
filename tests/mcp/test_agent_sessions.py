"""An agent session is AGENT on every front end: gRPC ListSessions and GetTrace, and the CLI, on the
same process that serves MCP."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import grpc

from evigate.v1 import session_pb2, trace_service_pb2, trace_service_pb2_grpc
from tests.mcp.clients import TOKEN, call, http_session
from tests.mcp.conftest import McpServer


async def test_an_agent_session_is_listed_as_agent_over_grpc_and_the_cli(served: McpServer) -> None:
    async with http_session(served.url) as client:
        query = await call(client, "query_logs", service="payment-service", keyword="超时")
    session = query["session_id"]
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    async with grpc.aio.insecure_channel(served.proc.address) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        agents = await stub.ListSessions(
            trace_service_pb2.ListSessionsRequest(status=session_pb2.SESSION_STATUS_AGENT, page_size=100),
            metadata=metadata,
        )
        failed = await stub.ListSessions(
            trace_service_pb2.ListSessionsRequest(status=session_pb2.SESSION_STATUS_FAILED, page_size=100),
            metadata=metadata,
        )
        trace = await stub.GetTrace(trace_service_pb2.GetTraceRequest(session_id=session), metadata=metadata)
    assert session in {s.session_id for s in agents.sessions}
    assert session not in {s.session_id for s in failed.sessions}
    assert trace.trace.session.status == session_pb2.SESSION_STATUS_AGENT
    assert not trace.trace.session.failure_reason
    listed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "evigate.server", "sessions", "--status", "agent", "--limit", "100",
         "--target", served.proc.address, "--token", TOKEN],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    (row,) = [line.split() for line in listed.stdout.splitlines() if line.startswith(session)]
    assert row[1] == "AGENT"
