"""Requests are bounded to what the contract needs (issue 19, item 8): the default receive limit is
256 KiB (a question is at most 4,000 characters; a Check at its binding and excerpt limits fits, and
one over them is INVALID_ARGUMENT, not RESOURCE_EXHAUSTED), replies may be larger, at most
max_concurrent_rpcs calls are handled at once, the rest refused at once, and the request bytes in
flight stay within max_request_bytes_in_flight."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from evigate.server.grpc.memory import RequestBytes, RequestsTooLarge
from evigate.server.settings import Settings
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    evidence_pb2,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.server.conftest import HIGH_CPU_EN, AppFactory, slow_agents
from tests.server.status import decode


def _check(excerpt_chars: int, char: str, settings: Settings) -> gatekeeper_service_pb2.CheckRequest:
    """max_bindings bindings over max_claims claims whose excerpts hold `excerpt_chars` in all."""
    per, extra = divmod(excerpt_chars, settings.limits.bindings)
    claims = [
        evidence_pb2.Claim(claim_id=f"claim-{i}", claim_text="payment-service CPU at 92%")
        for i in range(settings.limits.claims)
    ]
    for j in range(settings.limits.bindings):
        claims[j % len(claims)].evidence_bindings.add(
            tool_name="query_logs",
            source_invocation_id=1000 + j,
            raw_path=f"$.logs[{j}]",
            evidence_excerpt=char * (per + (1 if j < extra else 0)),
        )
    evidence = evidence_pb2.ExecutorEvidence(answer_version="executor_evidence_v2", claims=claims)
    return gatekeeper_service_pb2.CheckRequest(session_id="no-such-session", evidence=evidence)


def test_the_default_receive_limit_fits_the_contract() -> None:
    settings = Settings()
    assert settings.grpc.max_request_bytes == 256 * 1024
    assert settings.limits.query_chars * 4 < settings.grpc.max_request_bytes  # any question, in UTF-8
    assert settings.grpc.max_message_bytes > settings.grpc.max_request_bytes  # traces may be large
    # A Check at every limit at once, its excerpts in 4-byte UTF-8 (the widest), fits.
    assert _check(settings.limits.excerpt_chars, "😀", settings).ByteSize() < settings.grpc.max_request_bytes


async def test_a_check_over_its_excerpt_limit_is_invalid_argument_and_one_at_it_is_read(
    channel: grpc.aio.Channel,
) -> None:
    settings = Settings()
    stub = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as info:  # read, validated, then the session is unknown
        await stub.Check(_check(settings.limits.excerpt_chars, "😀", settings), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    over = _check(settings.limits.excerpt_chars + 1, "耗", settings)
    assert over.ByteSize() < settings.grpc.max_request_bytes
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.Check(over, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Named: the binding where the sum passes the limit, here the last (bindings go round the claims).
    (field, description), *_ = decode(info.value).violations.items()
    assert field == "evidence.claims[31].evidence_bindings[7].evidence_excerpt"
    assert f"at most {settings.limits.excerpt_chars} excerpt characters" in description


def test_request_bytes_in_flight_stay_within_the_budget_and_are_trimmed_once_quiet() -> None:
    budget = RequestBytes(1000, trim_after=0)
    budget.admit(2000)  # alone: always read (the receive limit bounds one request)
    with pytest.raises(RequestsTooLarge) as refused:
        budget.admit(1)
    assert refused.value.retry_after_seconds()
    budget.release(2000)
    budget.admit(600)
    with pytest.raises(RequestsTooLarge):
        budget.admit(500)
    budget.admit(400)
    assert budget.in_flight == 1000


async def test_the_heap_is_trimmed_when_quiet_after_large_requests() -> None:
    trimmed = asyncio.Event()
    budget = RequestBytes(10**6, trim_after=300 * 1024, trim=trimmed.set)
    for _ in range(2):
        with budget.hold(200 * 1024):
            pass
    async with asyncio.timeout(5):
        await trimmed.wait()
    assert budget.trims == 1 and budget.in_flight == 0


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
