"""The llm agent backend wired through the server (against the scripted OpenAI-compatible server),
client cancellation of a stream, and the message-size limit."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
    verdict_pb2,
)
from tests.server.conftest import HIGH_CPU_ZH, AppFactory, ServerProcess, slow_agents, wait_until
from tests.support.fake_openai import (
    FakeOpenAI,
    RecordedRequest,
    Reply,
    Responder,
    json_reply,
    tool_call,
    tool_calls,
)

PLAN = {
    "selected_skill": "diagnose-high-cpu",
    "selection_reason": "alert",
    "plan": ["query_metrics"],
    "reasoning": "",
}


def _evidence_from(request: RecordedRequest) -> Reply:
    [result] = request.tool_results()
    ref = result["evidence_refs"][0]
    return json_reply(
        {
            "answer_version": "executor_evidence_v2",
            "claims": [
                {
                    "claim_id": "claim-1",
                    "claim_type": "observation",
                    "claim_text": "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。",
                    "support_level": "direct",
                    "evidence_bindings": [
                        {
                            "tool_name": result["tool_name"],
                            "source_invocation_id": result["source_invocation_id"],
                            "raw_path": ref["raw_path"],
                            "evidence_excerpt": ref["text"],
                        }
                    ],
                }
            ],
            "hypotheses": [],
            "recommended_actions": [],
            "missing_info": [],
        }
    )


VERDICT: dict[str, Any] = {
    "verdict": "PASS",
    "groundedness_score": 1.0,
    "critical_fact_count": 1,
    "claim_checks": [
        {"claim_id": "claim-1", "supported": True, "reason": "matches", "unsupported_facts": []}
    ],
    "facts_checked": [],
    "rationale": "the excerpt states it",
}
# code's draft reworded, every name and value kept (a slot text that drops one is refused)
ANSWER = (
    "payment-service 的 HighCPUUsage 告警在触发（当前 92%，阈值 80%，持续 25m，级别 critical，"
    '开始于 2026-07-08 23:05:00）："CPU usage above 80% for more than 5 minutes"'
    '（pod "payment-service-7d9f8b6c4-x2k9p"）。'
)
COMPOSED = {"sentences": [{"slot": 1, "text": ANSWER}]}  # the model's text for the draft's one slot


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.mark.parametrize("anchor", ["none", "offline"])
async def test_llm_backend_answers_through_the_server(
    app_factory: AppFactory, fake: FakeOpenAI, anchor: str
) -> None:
    """Every stage on the model (`none`), or code first (the default): code plans the question's
    exact call, quotes the alert it finds and its check passes the claim, and the model composes."""
    model_plans: list[Responder] = [
        json_reply(PLAN),
        tool_calls(tool_call("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})),
        _evidence_from,
    ]
    model_verifies = [json_reply(VERDICT)] if anchor == "none" else []
    fake.script([*(model_plans if anchor == "none" else []), *model_verifies, json_reply(COMPOSED)])
    app = await app_factory(
        agent_backend="llm",
        llm_base_url=fake.base_url,
        llm_model="test-model",
        llm_api_key="sk-test-secret",
        llm_planner_anchor=anchor,
    )
    async with grpc.aio.insecure_channel(app.address) as channel:
        reply = await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=60
        )
        trace = (
            await trace_service_pb2_grpc.TraceServiceStub(channel).GetTrace(
                trace_service_pb2.GetTraceRequest(session_id=reply.session_id)
            )
        ).trace
    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
    assert reply.answer == f"{ANSWER} [1]"  # the model's sentence, its citation marker added
    assert trace.agent_backend == "llm" and trace.prompt_versions
    assert {r.model for r in fake.requests} == {"test-model"}
    assert "sk-test-secret" not in json.dumps(app.settings.describe())
    assert fake.pending == 0
    by_code = sorted(n.stage for n in trace.stage_notes if n.kind == "by_code")
    assert by_code == ([] if anchor == "none" else ["executor", "planner", "verifier"])
    # the model's answer: its note says who wrote the slot sentences, and no fallback
    assert [n.kind for n in trace.stage_notes if n.stage == "composer"] == ["composer_slots"]


async def test_cancelling_a_stream_stops_the_pipeline(app_factory: AppFactory) -> None:
    gate = asyncio.Event()
    agents, planner = slow_agents(gate=gate)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        call = chat_service_pb2_grpc.ChatServiceStub(channel).StreamChat(
            chat_service_pb2.StreamChatRequest(query=HIGH_CPU_ZH, session_id="cancel-1"), timeout=60
        )
        await asyncio.wait_for(planner.started.wait(), 10)
        call.cancel()
        trace_stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = trace_service_pb2.GetTraceRequest(session_id="cancel-1")
        async with asyncio.timeout(10):
            status = session_pb2.SESSION_STATUS_RUNNING
            while status == session_pb2.SESSION_STATUS_RUNNING:
                await asyncio.sleep(0.05)
                status = (await trace_stub.GetTrace(request)).trace.session.status
        trace = (await trace_stub.GetTrace(request)).trace
    assert trace.session.status == session_pb2.SESSION_STATUS_FAILED
    assert "cancel" in trace.session.failure_reason
    assert not trace.tool_invocations  # the planner never finished, no tool ran


async def test_messages_over_the_limit_are_resource_exhausted(app_factory: AppFactory) -> None:
    app = await app_factory(max_request_bytes=2048)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.Chat(chat_service_pb2.ChatRequest(query="x" * 4096), timeout=10)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_sigterm_lets_the_in_flight_call_finish(
    fake: FakeOpenAI, server_process: Callable[..., ServerProcess]
) -> None:
    """A served process (llm backend against the scripted server, slow planner) gets SIGTERM while
    a Chat is in flight: the call still succeeds, new calls are refused, the process exits 0."""
    fake.script(
        [
            json_reply(PLAN, delay=1.5),
            tool_calls(
                tool_call("query_metrics", {"service": "payment-service", "alert_name": "HighCPUUsage"})
            ),
            _evidence_from,
            json_reply(VERDICT),
            json_reply(COMPOSED),
        ]
    )
    server = server_process(
        env={
            "EVIGATE_AGENT_BACKEND": "llm",
            "EVIGATE_LLM_BASE_URL": fake.base_url,
            "EVIGATE_LLM_MODEL": "test-model",
            "EVIGATE_GRACE_PERIOD_S": "20",
        }
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        future = stub.Chat.future(chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=60)
        assert fake.wait_for_requests(1, 10)  # the planner's request is in flight
        server.send_signal(signal.SIGTERM)
        refused: list[grpc.StatusCode] = []

        def new_calls_refused() -> bool:
            try:
                trace_service_pb2_grpc.TraceServiceStub(channel).ListSessions(
                    trace_service_pb2.ListSessionsRequest(), timeout=5
                )
            except grpc.RpcError as error:
                refused.append(error.code())
                # A call racing the server's GOAWAY may be CANCELLED; once it stopped accepting,
                # new calls are UNAVAILABLE.
                return bool(error.code() == grpc.StatusCode.UNAVAILABLE)
            return False

        wait_until(new_calls_refused, timeout=10, interval=0.02)
        reply = future.result(timeout=30)
    assert set(refused) <= {grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE}
    assert refused[-1] == grpc.StatusCode.UNAVAILABLE
    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert server.stop() == 0
