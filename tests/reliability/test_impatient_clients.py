"""Clients that give up: deadlines from a millisecond up, and streams cancelled after a few events.
Every session they started still ends SUCCESS or FAILED with a reason (none stays RUNNING), the
codes are documented ones, and the server stays healthy."""

from __future__ import annotations

import asyncio
import random

import grpc
from grpc_health.v1 import health_pb2

from evigate.v1 import chat_service_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import QUESTIONS, Client, db_rows, wait_for

ALLOWED = {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}


async def test_deadlines_and_cancelled_streams_leave_no_session_running(
    servers: ServerFactory, any_url: str
) -> None:
    server = servers(any_url, args=["--instance-name", "impatient"])
    await server.start().wait_ready()
    rng = random.Random(3)
    codes: list[str] = []
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)

        async def hurried(n: int) -> None:
            timeout = rng.choice([0.001, 0.01, 0.05, 0.2, 0.5, 1.0, 5.0])
            try:
                await client.chat(
                    QUESTIONS[n % len(QUESTIONS)], session_id=f"hurried-{n}", rpc_timeout=timeout
                )
                codes.append("OK")
            except grpc.aio.AioRpcError as error:
                assert error.code() in ALLOWED, error
                codes.append(error.code().name)

        async def walks_away(n: int) -> None:
            request = chat_service_pb2.StreamChatRequest(
                query=QUESTIONS[n % len(QUESTIONS)], session_id=f"gone-{n}"
            )
            call = client.chat_stub.StreamChat(request, timeout=30)
            seen = 0
            try:
                async for _ in call:
                    seen += 1
                    if seen >= 1 + n % 3:
                        call.cancel()
                        break
            except grpc.aio.AioRpcError as error:
                assert error.code() in ALLOWED, error
            codes.append(f"stream after {seen}")

        await asyncio.gather(*(hurried(n) for n in range(24)), *(walks_away(n) for n in range(12)))
        health = await client.health_stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        after = await client.chat(QUESTIONS[0], session_id="after-the-rush")
        assert after.status == 2  # SUCCESS

    await wait_for(
        lambda: db_rows(any_url, "SELECT COUNT(*) FROM diagnosis_session WHERE status = 'RUNNING'") == [(0,)],
        20,
        "no session left RUNNING by a client that gave up",
    )
    for sid, status, reason in db_rows(
        any_url, "SELECT session_id, status, failure_reason FROM diagnosis_session"
    ):
        assert status in ("SUCCESS", "FAILED"), sid
        assert status == "SUCCESS" or reason, sid
    assert "DEADLINE_EXCEEDED" in codes  # the fastest deadlines really cut calls short
