"""The deadline rule (issue 19, items 4 and 9): what the client saw is what is recorded and counted.

Short client deadlines race the pipeline: an OK reply means a SUCCESS row, DEADLINE_EXCEEDED means
no row or a FAILED one whose reason says "deadline exceeded", and evigate_sessions_total counts
every terminal state with that reason. A client that cancels sees CANCELLED, recorded as such."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from evigate.server.agents.base import Skill, StageOutput
from evigate.server.app import App
from evigate.server.deadline import Deadline
from evigate.storage import Database
from evigate.storage.records import SessionRecord
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, session_pb2
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
    agents, planner = slow_agents(gate=gate)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        try:
            await stub.Chat(
                # long enough for the INSERT on a loaded machine: the deadline passes in the planner
                chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="late", language="en"),
                timeout=3.0,
            )
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        else:
            raise AssertionError("the call outlived its deadline")
        assert planner.started.is_set()
        recorded = await _terminal(app, ["late"])
    assert recorded["late"] == ("FAILED", "deadline exceeded during planner")
    assert _count(app, "FAILED", "deadline_exceeded") == 1
    assert _count(app, "SUCCESS", "ok") == 0


class _SlowInsert:
    """Wraps Repository.create_session: the INSERT commits, then its reply is held `hold` seconds
    (or until `gate` is set): the deadline passes during a write made before the pipeline starts."""

    def __init__(self, app: App, hold: float | None = None, gate: asyncio.Event | None = None) -> None:
        assert app.database is not None
        self._inner = app.database.repo.create_session
        self._hold, self._gate = hold, gate
        self.committed = asyncio.Event()
        app.database.repo.create_session = self  # type: ignore[method-assign]

    async def __call__(
        self,
        session_id: str,
        query: str,
        language: str,
        owner: str,
        *,
        status: str = "RUNNING",
        extras: dict[str, Any] | None = None,
    ) -> SessionRecord:
        record = await self._inner(session_id, query, language, owner, status=status, extras=extras)
        self.committed.set()
        if self._gate is not None:
            await self._gate.wait()
        if self._hold is not None:
            await asyncio.sleep(self._hold)  # a slow reply of the database, not a synchronisation
        return record


async def _call(app: App, rpc: str, session_id: str, client_timeout: float) -> grpc.StatusCode:
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        try:
            if rpc == "Chat":
                await stub.Chat(
                    chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id=session_id, language="en"),
                    timeout=client_timeout,
                )
            else:
                request = chat_service_pb2.StreamChatRequest(
                    query=HIGH_CPU_EN, session_id=session_id, language="en"
                )
                async for _ in stub.StreamChat(request, timeout=client_timeout):
                    pass
        except grpc.aio.AioRpcError as error:
            return error.code()
        return grpc.StatusCode.OK


@pytest.mark.parametrize("rpc", ["Chat", "StreamChat"])
async def test_the_server_deadline_passing_during_the_session_insert_ends_it_failed(
    app_factory: AppFactory, rpc: str
) -> None:
    """The INSERT commits but answers after the server's deadline (the caller's, less 100 ms) and
    before the caller's: the pipeline never starts, the row is FAILED, the caller sees the deadline."""
    app = await app_factory()
    insert = _SlowInsert(app, hold=0.95)  # the server's deadline is at 0.9 s, the caller's at 1 s
    code = await _call(app, rpc, "slow-insert", client_timeout=1.0)
    assert insert.committed.is_set()
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    recorded = await _terminal(app, ["slow-insert"])
    assert recorded["slow-insert"] == ("FAILED", "deadline exceeded before the pipeline started")
    assert _count(app, "FAILED", "deadline_exceeded") == 1
    assert _count(app, "SUCCESS", "ok") == 0


@pytest.mark.parametrize("rpc", ["Chat", "StreamChat"])
async def test_the_caller_deadline_passing_during_the_session_insert_ends_it_failed(
    app_factory: AppFactory, rpc: str
) -> None:
    """The INSERT's reply outlasts the caller's deadline: gRPC cancels the call while it waits."""
    app = await app_factory()
    gate = asyncio.Event()
    _SlowInsert(app, gate=gate)
    code = await _call(app, rpc, "lost-insert", client_timeout=3.0)  # the read before the INSERT fits
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    gate.set()
    recorded = await _terminal(app, ["lost-insert"])
    assert recorded["lost-insert"] == ("FAILED", "deadline exceeded before the pipeline started")
    assert _count(app, "FAILED", "deadline_exceeded") == 1


async def test_the_server_deadline_bounds_the_read_of_a_client_chosen_id(app_factory: AppFactory) -> None:
    """The read that looks for a finished session of this id, before anything is written, is cut
    by the server's own deadline: the server answers DEADLINE_EXCEEDED itself (its message, not the
    client's timer) and no session is created."""
    app = await app_factory()
    assert app.database is not None
    repo = app.database.repo
    read = repo.get_trace
    gate = asyncio.Event()

    async def slow_read(session_id: str) -> object:
        await gate.wait()
        return await read(session_id)

    repo.get_trace = slow_read  # type: ignore[assignment,method-assign]
    async with grpc.aio.insecure_channel(app.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
                chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="slow-read", language="en"),
                timeout=1.0,
            )
    gate.set()
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert info.value.details() == "deadline exceeded"  # the server's answer, before the caller's
    repo.get_trace = read  # type: ignore[method-assign]
    assert await repo.get_session("slow-read") is None
    assert _count(app, "FAILED", "deadline_exceeded") == 0  # no session ended: nothing counted


class _FailingPlanner:
    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        raise RuntimeError("planner broke")


async def test_a_session_a_stage_failed_is_counted_as_an_error(app_factory: AppFactory) -> None:
    agents, _ = slow_agents()
    app = await app_factory(agents=dataclasses.replace(agents, planner=_FailingPlanner()))
    async with grpc.aio.insecure_channel(app.address) as channel:
        reply = await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="broken", language="en"), timeout=30
        )
    assert reply.status == session_pb2.SESSION_STATUS_FAILED  # what the caller saw
    assert (await _terminal(app, ["broken"]))["broken"] == (
        "FAILED",
        "planner failed: RuntimeError: planner broke",
    )
    assert _count(app, "FAILED", "error") == 1
    assert _count(app, "SUCCESS", "ok") == 0


async def test_sessions_a_restart_fails_are_counted(app_factory: AppFactory, tmp_path: Path) -> None:
    """Sessions a crashed process of this owner left RUNNING end FAILED at the next start: counted."""
    url = f"sqlite+aiosqlite:///{tmp_path}/restart.db"
    database = await Database.open(url)
    for session_id in ("left-1", "left-2"):
        await database.repo.create_session(session_id, "q", "en", "me")
    await database.repo.create_session("theirs", "q", "en", "someone-else")
    await database.close()
    app = await app_factory(database_url=url, instance_name="me")
    recorded = await _terminal(app, ["left-1", "left-2"])
    assert {row[0] if row else None for row in recorded.values()} == {"FAILED"}
    assert _count(app, "FAILED", "server_restarted") == 2
