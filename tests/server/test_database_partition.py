"""A database partition (issue 19, item 7): packets dropped, nothing refused. A loopback proxy that
accepts connections and then silently drops every byte stands between the server and MariaDB.
Calls must not hang until their own deadlines: the first waits at most the database timeout, then
every call fails fast with UNAVAILABLE and a retry delay while the database is known unreachable;
health says NOT_SERVING; once the partition ends the same process serves again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import App
from evigate.storage import migrate
from evigate.storage.errors import DatabaseRefused
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.server.conftest import HIGH_CPU_EN, AppFactory
from tests.server.tcp_proxy import TcpProxy
from tests.support.waiting import holds

DB_TIMEOUT_S = 1.5
CLIENT_TIMEOUT_S = 30.0  # far beyond the database timeout: the server must answer first
CHAT_RPC = "/evigate.v1.ChatService/Chat"


def _metric(app: App, name: str, **labels: str) -> float:
    return app.metrics.registry.get_sample_value(name, labels) or 0.0


async def _health(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return int(reply.status)


async def _wait_health(channel: grpc.aio.Channel, wanted: int) -> None:
    async with asyncio.timeout(20):
        while await _health(channel) != wanted:  # noqa: ASYNC110 - polling a remote status
            await asyncio.sleep(0.1)


def _retry_delay(error: grpc.aio.AioRpcError) -> float:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return float(info.retry_delay.ToTimedelta().total_seconds())
    raise AssertionError("no RetryInfo in the status details")


async def _unavailable(call: Callable[[], Awaitable[object]]) -> float:
    """The retry delay the call carried; it must fail UNAVAILABLE, not at the caller's deadline."""
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE, info.value
    return _retry_delay(info.value)


def _count_refusals(app: App) -> list[DatabaseRefused]:
    """Every unit of work the breaker refused at once, without reaching the database."""
    assert app.database is not None
    breaker = app.database.repo._runner.breaker
    admit = breaker.admit
    refused: list[DatabaseRefused] = []

    def counting() -> bool:
        try:
            return admit()
        except DatabaseRefused as error:
            refused.append(error)
            raise

    breaker.admit = counting  # type: ignore[method-assign]
    return refused


async def test_a_blackholed_database_fails_fast_with_unavailable_and_recovers(
    app_factory: AppFactory, mysql_database_factory: Callable[[], str]
) -> None:
    direct = mysql_database_factory()
    await migrate(direct)
    proxy = TcpProxy("127.0.0.1", 3306)
    await proxy.open()
    app = await app_factory(
        database_url=direct.replace("127.0.0.1:3306", f"127.0.0.1:{proxy.port}"),
        db_timeout_s=DB_TIMEOUT_S,
        health_check_interval_s=0.2,
    )
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            chat = chat_service_pb2_grpc.ChatServiceStub(channel)
            traces = trace_service_pb2_grpc.TraceServiceStub(channel)
            feedback = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
            request = chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, language="en")
            answered = await chat.Chat(request, timeout=CLIENT_TIMEOUT_S)

            proxy.blackhole()
            refused = _count_refusals(app)
            delay = await _unavailable(
                lambda: traces.GetTrace(
                    trace_service_pb2.GetTraceRequest(session_id="no-such"), timeout=CLIENT_TIMEOUT_S
                )
            )
            assert delay > 0  # bounded by the database timeout (UNAVAILABLE), not the caller's deadline
            await _wait_health(channel, health_pb2.HealthCheckResponse.NOT_SERVING)
            calls: list[Callable[[], Awaitable[object]]] = [
                lambda: traces.ListSessions(
                    trace_service_pb2.ListSessionsRequest(), timeout=CLIENT_TIMEOUT_S
                ),
                lambda: feedback.SubmitFeedback(
                    feedback_service_pb2.SubmitFeedbackRequest(
                        session_id=answered.session_id, feedback=session_pb2.FEEDBACK_NOT_USEFUL
                    ),
                    timeout=CLIENT_TIMEOUT_S,
                ),
                lambda: chat.Chat(request, timeout=CLIENT_TIMEOUT_S),
            ]
            for call in calls:  # known unreachable: none of them waits for the timeout
                before = len(refused)
                assert await _unavailable(call) > 0
                assert len(refused) > before  # refused at once, no wait on the database
            # The Chat was refused before its INSERT: no session exists, so none is counted in
            # evigate_sessions_total (issue 19, item 9); the refused call is, in evigate_rpc_total.
            assert _metric(app, "evigate_sessions_total", status="FAILED", reason="database_unavailable") == 0
            await holds(  # recorded in the event loop's next pass after the reply
                lambda: _metric(app, "evigate_rpc_total", method=CHAT_RPC, code="UNAVAILABLE") == 1,
                within=5,
                what="the refused Chat counted as an UNAVAILABLE call",
            )

            proxy.restore()
            await _wait_health(channel, health_pb2.HealthCheckResponse.SERVING)
            again = await chat.Chat(request, timeout=CLIENT_TIMEOUT_S)
            assert again.status == session_pb2.SESSION_STATUS_SUCCESS
            listed = await traces.ListSessions(
                trace_service_pb2.ListSessionsRequest(), timeout=CLIENT_TIMEOUT_S
            )
            assert {s.session_id for s in listed.sessions} == {answered.session_id, again.session_id}
            assert _metric(app, "evigate_sessions_total", status="SUCCESS", reason="ok") == 2
    finally:
        await proxy.close()
