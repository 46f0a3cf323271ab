"""Contract details independent clients found missing (issue 19, items 1-3 and 6): StreamChat's
tool-invocation events carry what GetTrace shows, page tokens outside int64 are INVALID_ARGUMENT,
UNAUTHENTICATED carries an ErrorInfo, and Health/Watch streams the database's status changes."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.storage import migrate
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, trace_service_pb2, trace_service_pb2_grpc
from tests.server.conftest import HIGH_CPU_EN, AppFactory
from tests.server.status import decode
from tests.server.tcp_proxy import TcpProxy


async def test_stream_tool_invocations_carry_latency_and_create_time_as_in_the_trace(
    channel: grpc.aio.Channel,
) -> None:
    streamed = {}
    async for event in chat_service_pb2_grpc.ChatServiceStub(channel).StreamChat(
        chat_service_pb2.StreamChatRequest(query=HIGH_CPU_EN, language="en"), timeout=60
    ):
        if event.WhichOneof("event") == "tool_invocation":
            streamed[event.tool_invocation.id] = event.tool_invocation
        session_id = event.session_id
    assert streamed
    trace = await trace_service_pb2_grpc.TraceServiceStub(channel).GetTrace(
        trace_service_pb2.GetTraceRequest(session_id=session_id), timeout=10
    )
    stored = {invocation.id: invocation for invocation in trace.trace.tool_invocations}
    assert set(streamed) == set(stored)
    for invocation_id, event in streamed.items():
        assert event.HasField("create_time") and event.latency_ms > 0
        assert event.create_time == stored[invocation_id].create_time
        assert event.latency_ms == pytest.approx(stored[invocation_id].latency_ms)


def _token(row_id: int) -> str:
    body = json.dumps({"c": "2026-07-08T23:30:00+00:00", "i": row_id, "f": [None, None]})
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


@pytest.mark.parametrize("row_id", [2**63, -(2**63) - 1, 10**40])
async def test_page_token_with_an_id_outside_int64_is_invalid_argument(
    channel: grpc.aio.Channel, row_id: int
) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    assert (await stub.ListSessions(trace_service_pb2.ListSessionsRequest(page_token=_token(1)))) is not None
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.ListSessions(trace_service_pb2.ListSessionsRequest(page_token=_token(row_id)), timeout=10)
    error = decode(info.value)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in error.violations
    assert error.reason == "INVALID_PAGE_TOKEN"


@pytest.mark.parametrize(("token", "reason"), [(None, "MISSING_TOKEN"), ("tok-wrong", "INVALID_TOKEN")])
async def test_unauthenticated_carries_an_error_info(
    app_factory: AppFactory, token: str | None, reason: str
) -> None:
    app = await app_factory(auth_tokens=("tok-right",))
    metadata = None if token is None else (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.GetTrace(
                trace_service_pb2.GetTraceRequest(session_id="s"), metadata=metadata, timeout=10
            )
        unary = decode(info.value)
        chat = chat_service_pb2_grpc.ChatServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in chat.StreamChat(
                chat_service_pb2.StreamChatRequest(query="q"), metadata=metadata, timeout=10
            ):
                pass
        streamed = decode(info.value)
    for error in (unary, streamed):
        assert error.code == grpc.StatusCode.UNAUTHENTICATED
        assert (error.reason, error.domain) == (reason, "evigate")


async def test_health_watch_streams_serving_not_serving_and_back(
    app_factory: AppFactory, mysql_database_factory: Callable[[], str]
) -> None:
    direct = mysql_database_factory()
    await migrate(direct)
    proxy = TcpProxy("127.0.0.1", 3306)
    await proxy.open()
    app = await app_factory(database_url=direct.replace("127.0.0.1:3306", f"127.0.0.1:{proxy.port}"))
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            for service in ("", "evigate.v1.ChatService"):
                watch = health_pb2_grpc.HealthStub(channel).Watch(
                    health_pb2.HealthCheckRequest(service=service), timeout=60
                )
                assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
                await proxy.close()
                assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
                await proxy.open()
                assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
                watch.cancel()
        # stopped while its database answers (stop is idempotent): a stop with the proxy already
        # closed once hung its worker's last poll past the suite's timeout under a loaded machine
        await app.stop(grace=0)
    finally:
        await proxy.close()
