"""The deadline rule (issue 19, items 4 and 9): what the client saw is what is recorded and counted.

Short client deadlines race the pipeline: an OK reply means a SUCCESS row, DEADLINE_EXCEEDED means
no row or a FAILED one whose reason says "deadline exceeded", and evigate_sessions_total counts
every terminal state with that reason. A client that cancels sees CANCELLED, recorded as such."""

from __future__ import annotations

import asyncio

import grpc

from evigate.server.app import App
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc
from tests.server.conftest import HIGH_CPU_EN, AppFactory, slow_agents

# 5 ms to 65 ms, around what an offline session takes here, then a generous one.
TIMEOUTS = [0.005 + 0.005 * (i % 13) for i in range(52)] + [5.0]


def _count(app: App, status: str, reason: str) -> float:
    value = app.metrics.registry.get_sample_value(
        "evigate_sessions_total", {"status": status, "reason": reason}
    )
    return value or 0.0


async def _terminal(app: App, session_ids: list[str]) -> dict[str, tuple[str, str] | None]:
    """Each session's (status, failure_reason), once none is RUNNING (FAILED rows of cancelled
    handlers are written by a shielded task that may finish after the reply)."""
    assert app.database is not None
    repo = app.database.repo
    async with asyncio.timeout(20):
        while True:
            sessions = {sid: await repo.get_session(sid) for sid in session_ids}
            if all(s is None or s.status != "RUNNING" for s in sessions.values()):
                return {
                    sid: None if s is None else (s.status, s.failure_reason or "")
                    for sid, s in sessions.items()
                }
            await asyncio.sleep(0.05)


async def test_a_short_deadline_never_ends_recorded_success_when_the_client_saw_deadline_exceeded(
    app_factory: AppFactory,
) -> None:
    app = await app_factory()
    seen: dict[str, grpc.StatusCode] = {}
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        for i, timeout in enumerate(TIMEOUTS):
            session_id = f"race-{i}"
            request = chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id=session_id, language="en")
            try:
                await stub.Chat(request, timeout=timeout)
                seen[session_id] = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as error:
                seen[session_id] = error.code()
    assert set(seen.values()) == {grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED}
    recorded = await _terminal(app, list(seen))
    for session_id, code in seen.items():
        row = recorded[session_id]
        if code == grpc.StatusCode.OK:
            assert row is not None and row[0] == "SUCCESS", (session_id, row)
        else:
            assert row is None or (row[0] == "FAILED" and "deadline exceeded" in row[1]), (session_id, row)
    rows = [row for row in recorded.values() if row is not None]
    assert _count(app, "SUCCESS", "ok") == sum(1 for status, _ in rows if status == "SUCCESS")
    assert _count(app, "FAILED", "deadline_exceeded") == sum(1 for status, _ in rows if status == "FAILED")
    assert _count(app, "FAILED", "cancelled") == 0


async def test_a_cancelled_call_is_recorded_and_counted_as_cancelled(app_factory: AppFactory) -> None:
    gate = asyncio.Event()
    agents, planner = slow_agents(gate=gate)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        call = chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="gone", language="en"), timeout=60
        )
        await asyncio.wait_for(planner.started.wait(), 10)
        call.cancel()
        recorded = await _terminal(app, ["gone"])
    assert recorded["gone"] == ("FAILED", "cancelled during planner")
    assert _count(app, "FAILED", "cancelled") == 1


async def test_a_deadline_during_a_stage_is_recorded_and_counted_as_deadline_exceeded(
    app_factory: AppFactory,
) -> None:
    gate = asyncio.Event()  # never set: the planner waits until the deadline cuts it off
    agents, _ = slow_agents(gate=gate)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        try:
            await stub.Chat(
                chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="late", language="en"), timeout=0.3
            )
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        recorded = await _terminal(app, ["late"])
    assert recorded["late"] == ("FAILED", "deadline exceeded during planner")
    assert _count(app, "FAILED", "deadline_exceeded") == 1
    assert _count(app, "SUCCESS", "ok") == 0
