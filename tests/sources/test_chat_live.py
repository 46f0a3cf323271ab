"""A full Chat through gRPC on live sources (in-process App, offline agents, real Alertmanager and
Prometheus): an alert question and a metric-value question each end in PASS, and every number of
the answer is in a ref text of that session's tool calls."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from evigate.server.app import App, Components
from evigate.server.sources.alertmanager import Alertmanager
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.signals import load_signal_catalog, resolve
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, evidence_pb2, session_pb2, verdict_pb2
from tests.server.conftest import make_settings

from .conftest import Servers, eventually, settings
from .exporter import Exporter

NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.fixture
async def live_app(tmp_path: Path, servers: Servers) -> AsyncIterator[App]:
    app = App(
        make_settings(
            tmp_path, prometheus_url=servers.prometheus.url, alertmanager_url=servers.alertmanager.url
        ),
        Components(),
    )
    await app.start()
    yield app
    await app.stop(grace=0)


@pytest.fixture
def live_service() -> str:
    """A service the offline agents recognise by its suffix, used by no other test."""
    return f"pay{uuid.uuid4().hex[:6]}-service"


async def _chat(app: App, query: str) -> chat_service_pb2.ChatResponse:
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        reply: chat_service_pb2.ChatResponse = await stub.Chat(
            chat_service_pb2.ChatRequest(query=query), timeout=60
        )
    return reply


async def _ref_texts(app: App, session_id: str) -> str:
    assert app.database is not None
    invocations = await app.database.repo.list_invocations(session_id)
    return "\n".join(r["text"] for i in invocations for r in i.retrieval_details.get("evidence_refs", []))


async def _assert_grounded_pass(app: App, reply: chat_service_pb2.ChatResponse, tool: str) -> None:
    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS, reply.verdict
    tools = {b.tool_name for c in reply.evidence.claims for b in c.evidence_bindings}
    assert tool in tools
    refs = await _ref_texts(app, reply.session_id)
    numbers = NUMBER.findall(reply.answer)
    assert numbers, reply.answer
    assert [n for n in numbers if n not in refs] == [], (reply.answer, refs)


async def test_an_alert_question_on_live_sources_passes_with_every_number_from_a_ref(
    live_app: App, servers: Servers, exporter: Exporter, live_service: str
) -> None:
    exporter.error_ratio.labels(live_service).set(0.2)
    am = Alertmanager(settings("alertmanager", servers.alertmanager.url))
    try:
        await eventually(lambda: _firing(am, live_service), "the alert in Alertmanager")
    finally:
        await am.aclose()
    reply = await _chat(live_app, f"{live_service} 现在有 TestHighErrorRate 告警吗？")
    await _assert_grounded_pass(live_app, reply, "query_metrics")
    assert "20%" in reply.answer and live_service in reply.answer


async def test_a_metric_value_question_is_answered_from_prometheus(
    live_app: App, servers: Servers, exporter: Exporter, live_service: str
) -> None:
    exporter.memory.labels(live_service, "app").set(3 * 2**30)
    prom = Prometheus(settings("prometheus", servers.prometheus.url))
    try:
        expr = f'container_memory_working_set_bytes{{service="{live_service}"}}'
        await eventually(lambda: _series(prom, expr), "the memory series")
    finally:
        await prom.aclose()
    reply = await _chat(live_app, f"{live_service} 的内存现在多少？")
    await _assert_grounded_pass(live_app, reply, "query_promql")
    assert "3GiB" in reply.answer and live_service in reply.answer
    # the value's claim cites the PromQL series (an alert check of the service may come with it)
    [value] = [c for c in reply.evidence.claims if "3GiB" in c.claim_text]
    binding = value.evidence_bindings[0]
    assert (binding.tool_name, binding.raw_path) == ("query_promql", "$.series[0]")

    # A signal with no series for the service: a scoped negative observation, not a guess.
    nothing = await _chat(live_app, f"{live_service} 的消息堆积现在多少？")
    assert nothing.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS, nothing.answer
    (claim,) = nothing.evidence.claims
    assert claim.claim_type == evidence_pb2.CLAIM_TYPE_NEGATIVE_OBSERVATION
    assert claim.evidence_bindings[0].raw_path == "$.no_evidence"
    assert f"当前查询未检索到 {live_service} 的 consumer_lag 指标序列" in nothing.answer


async def _series(prom: Prometheus, expr: str) -> bool:
    return bool((await prom.query(expr)).series)


async def _firing(am: Alertmanager, service: str) -> bool:
    return bool(await am.find(service=service, alertname="TestHighErrorRate"))


async def test_an_english_latency_question_names_the_service_without_a_suffix(
    live_app: App, servers: Servers, exporter: Exporter
) -> None:
    service = f"checkout{uuid.uuid4().hex[:6]}"
    prom = Prometheus(settings("prometheus", servers.prometheus.url))
    catalog = load_signal_catalog()

    async def observed() -> bool:
        exporter.duration.labels(service).observe(0.3)  # a rate needs the counter to move between scrapes
        found = await resolve(prom, catalog, catalog.signals["latency_p99"], service)
        return found.result is not None and not math.isnan(found.result.series[0].samples[-1].v)

    try:
        await eventually(observed, "a p99 latency")
    finally:
        await prom.aclose()
    async with grpc.aio.insecure_channel(live_app.address) as channel:
        reply = await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(
                query=f"what's the p99 latency of {service} right now?", language="en"
            ),
            timeout=60,
        )
    await _assert_grounded_pass(live_app, reply, "query_promql")
    assert reply.answer.count(f"latency_p99 of {service} is ") == 1 and "ms)" in reply.answer
