"""Health that follows the database, graceful shutdown with a call in flight, metrics, settings."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import SERVICE_NAMES
from evigate.server.settings import ConfigError, Settings, load_settings, mask_url
from evigate.storage import migrate
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.server.conftest import HIGH_CPU_ZH, AppFactory, slow_agents
from tests.server.tcp_proxy import TcpProxy
from tests.support.waiting import eventually

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _status(channel: grpc.aio.Channel, service: str = "") -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return int(reply.status)


async def _wait_status(channel: grpc.aio.Channel, wanted: int) -> None:
    await eventually(
        lambda: _status(channel), lambda s: s == wanted, within=15, what=f"health status {wanted}"
    )


async def test_health_is_serving_for_every_service(channel: grpc.aio.Channel) -> None:
    for service in ("", *SERVICE_NAMES):
        assert await _status(channel, service) == SERVING
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _status(channel, "no.such.Service")
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


async def test_health_flips_when_mariadb_becomes_unreachable_and_back(
    app_factory: AppFactory, mysql_database_factory: Callable[[], str]
) -> None:
    direct = mysql_database_factory()
    await migrate(direct)
    proxy = TcpProxy("127.0.0.1", 3306)
    await proxy.open()
    proxied = direct.replace("127.0.0.1:3306", f"127.0.0.1:{proxy.port}")
    app = await app_factory(database_url=proxied)
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            await _wait_status(channel, SERVING)
            await proxy.close()
            await _wait_status(channel, NOT_SERVING)
            for service in SERVICE_NAMES:
                assert await _status(channel, service) == NOT_SERVING
            stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.SubmitFeedback(
                    feedback_service_pb2.SubmitFeedbackRequest(
                        session_id="s", feedback=session_pb2.FEEDBACK_USEFUL
                    ),
                    timeout=20,
                )
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
            await proxy.open()
            await _wait_status(channel, SERVING)
            trace = trace_service_pb2_grpc.TraceServiceStub(channel)
            await trace.ListSessions(trace_service_pb2.ListSessionsRequest(), timeout=20)
    finally:
        await proxy.close()


async def test_graceful_shutdown_lets_an_in_flight_call_finish(app_factory: AppFactory) -> None:
    agents, planner = slow_agents(delay=1.0)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        in_flight = asyncio.ensure_future(
            stub.Chat(chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=30)
        )
        await asyncio.wait_for(planner.started.wait(), 10)
        stopping = asyncio.ensure_future(app.stop(grace=10))
        health = app.health
        assert health is not None

        async def local_status() -> int:
            return int(health.servicer._server_status[""])

        await eventually(
            local_status, lambda s: s == NOT_SERVING, within=5, what="health NOT_SERVING on stop"
        )
        reply = await in_flight
        await stopping
    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS
    async with grpc.aio.insecure_channel(app.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await trace_service_pb2_grpc.TraceServiceStub(channel).ListSessions(
                trace_service_pb2.ListSessionsRequest(), timeout=2
            )
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_metrics_endpoint(app_factory: AppFactory) -> None:
    app = await app_factory(metrics_port=_free_port())
    async with grpc.aio.insecure_channel(app.address) as channel:
        await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=60
        )
        with pytest.raises(grpc.aio.AioRpcError):
            await trace_service_pb2_grpc.TraceServiceStub(channel).GetTrace(
                trace_service_pb2.GetTraceRequest(session_id="missing")
            )
        assert app.health is not None
        await app.health.check_once()
    url = f"http://127.0.0.1:{app.metrics_port}/metrics"
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    assert 'evigate_rpc_total{code="OK",method="/evigate.v1.ChatService/Chat"} 1.0' in text
    assert 'evigate_rpc_total{code="NOT_FOUND",method="/evigate.v1.TraceService/GetTrace"} 1.0' in text
    assert 'evigate_rpc_latency_seconds_count{code="OK",method="/evigate.v1.ChatService/Chat"} 1.0' in text
    assert 'evigate_stage_latency_seconds_count{stage="planner"} 1.0' in text
    assert 'evigate_gatekeeper_results_total{severity="none"}' in text
    assert 'evigate_verdicts_total{verdict="PASS"}' in text
    assert 'evigate_tool_calls_total{status="success",tool="query_metrics"}' in text
    assert 'evigate_jobs{state="pending"}' in text
    assert "evigate_database_up 1.0" in text


def _free_port() -> int:
    from tests.support.server_proc import free_port

    return free_port()


def test_flags_win_over_environment_and_defaults_are_embedded(tmp_path: Path) -> None:
    env = {"EVIGATE_LISTEN": "127.0.0.1:6000", "EVIGATE_MAX_CLAIMS": "7", "EVIGATE_WORKER_ENABLED": "false"}
    settings = load_settings({"listen": "127.0.0.1:7000"}, env)
    assert settings.grpc.listen == "127.0.0.1:7000"
    assert settings.limits.claims == 7 and settings.worker.enabled is False
    defaults = load_settings({}, {})
    assert defaults == Settings.of(
        state_dir=defaults.storage.state_dir, instance_name=defaults.grpc.instance_name
    )
    assert defaults.grpc.listen == "127.0.0.1:50051"
    assert defaults.storage.resolved_database_url.endswith("/.evigate/evigate.db")
    assert defaults.agents.backend == "offline" and defaults.sources.data_dir is None


@pytest.mark.parametrize(
    "env",
    [
        {"EVIGATE_AGENT_BACKEND": "magic"},
        {"EVIGATE_AGENT_BACKEND": "llm"},
        {"EVIGATE_LISTEN": "nowhere"},
        {"EVIGATE_TLS_CERT": "/x.pem"},
        {"EVIGATE_MAX_CLAIMS": "many"},
        {"EVIGATE_METRICS_PORT": "70000"},
        {"EVIGATE_EMBEDDING_BACKEND": "word2vec"},
        {"EVIGATE_EMBEDDING_BACKEND": "openai", "EVIGATE_EMBEDDING_BASE_URL": "http://127.0.0.1:1/v1"},
        {"EVIGATE_EMBEDDING_TIMEOUT_S": "0"},
        {"EVIGATE_LLM_EXECUTOR_FALLBACK": "retry"},
        {"EVIGATE_LLM_EXECUTOR_RETRY": "twice"},
    ],
)
def test_bad_settings_are_named(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        load_settings({}, env)


def test_secrets_are_masked() -> None:
    settings = load_settings(
        {},
        {
            "EVIGATE_AGENT_BACKEND": "llm",
            "EVIGATE_LLM_BASE_URL": "http://127.0.0.1:1/v1",
            "EVIGATE_LLM_MODEL": "m",
            "EVIGATE_LLM_API_KEY": "sk-secret",
            "EVIGATE_DATABASE_URL": "mysql+aiomysql://app:hunter2@db:3306/evigate",
            "EVIGATE_AUTH_TOKENS": "t1",
        },
    )
    text = str(settings.describe())
    assert "sk-secret" not in text and "hunter2" not in text and "t1'" not in text
    assert mask_url("mysql+aiomysql://root:@h/d") == "mysql+aiomysql://root:@h/d"
