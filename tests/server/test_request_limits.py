"""Requests are bounded to what the contract needs (issue 19, item 8): the default receive limit is
256 KiB (a question is at most 4,000 characters; a Check at its binding limit fits), replies may be
larger, and at most max_concurrent_rpcs calls are handled at once, the rest refused at once."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from evigate.server.config import Settings
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, trace_service_pb2, trace_service_pb2_grpc
from tests.server.conftest import HIGH_CPU_EN, AppFactory, slow_agents


def test_the_default_receive_limit_fits_the_contract() -> None:
    settings = Settings()
    assert settings.max_request_bytes == 256 * 1024
    assert settings.max_query_chars * 4 < settings.max_request_bytes  # any question, in UTF-8
    assert settings.max_message_bytes > settings.max_request_bytes  # traces may be large


async def test_a_request_over_the_receive_limit_is_refused_before_it_is_read(
    channel: grpc.aio.Channel,
) -> None:
    stub = chat_service_pb2_grpc.ChatServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.Chat(chat_service_pb2.ChatRequest(query="x" * (300 * 1024)), timeout=10)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(grpc.aio.AioRpcError) as info:  # under the limit: validation speaks
        await stub.Chat(chat_service_pb2.ChatRequest(query="x" * (200 * 1024)), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_calls_beyond_max_concurrent_rpcs_are_refused_at_once(app_factory: AppFactory) -> None:
    gate = asyncio.Event()
    agents, planner = slow_agents(gate=gate)
    app = await app_factory(agents=agents, max_concurrent_rpcs=2)
    async with grpc.aio.insecure_channel(app.address) as channel:
        chat = chat_service_pb2_grpc.ChatServiceStub(channel)
        request = chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, language="en")
        held = [asyncio.ensure_future(chat.Chat(request, timeout=30)) for _ in range(2)]
        async with asyncio.timeout(10):
            while planner.calls < 2:  # noqa: ASYNC110 - both calls are inside the pipeline
                await asyncio.sleep(0.01)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await trace_service_pb2_grpc.TraceServiceStub(channel).ListSessions(
                trace_service_pb2.ListSessionsRequest(), timeout=10
            )
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        gate.set()
        replies = await asyncio.gather(*held)
    assert all(reply.answer for reply in replies)
