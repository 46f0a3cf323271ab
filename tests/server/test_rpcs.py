"""Every RPC's success and error paths through a real channel, with the status details decoded."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from evigate.server.app import App
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    evidence_pb2,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    gatekeeper_pb2,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
    verdict_pb2,
)
from tests.server.conftest import HIGH_CPU_EN, HIGH_CPU_ZH, AppFactory, slow_agents
from tests.server.status import Decoded, decode
from tests.support.waiting import eventually

OK_STATUS = session_pb2.SESSION_STATUS_SUCCESS


async def _fails(call: object) -> Decoded:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call  # type: ignore[misc]
    return decode(info.value)


def _chat(channel: grpc.aio.Channel) -> chat_service_pb2_grpc.ChatServiceStub:
    return chat_service_pb2_grpc.ChatServiceStub(channel)


async def test_chat_answers_with_a_grounded_pass(channel: grpc.aio.Channel) -> None:
    reply = await _chat(channel).Chat(chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=60)
    assert reply.status == OK_STATUS
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
    assert "92%" in reply.answer
    assert [c.claim_type for c in reply.evidence.claims] == [evidence_pb2.CLAIM_TYPE_OBSERVATION]
    binding = reply.evidence.claims[0].evidence_bindings[0]
    assert binding.tool_name == "query_metrics" and binding.raw_path.startswith("$.alerts[")
    assert reply.gatekeeper_result.severity == gatekeeper_pb2.SEVERITY_NONE
    assert reply.session_id


async def test_chat_with_a_finished_session_id_returns_the_stored_result(app_factory: AppFactory) -> None:
    agents, planner = slow_agents()
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = _chat(channel)
        request = chat_service_pb2.ChatRequest(query=HIGH_CPU_EN, session_id="client-chosen:1", language="en")
        first = await stub.Chat(request, timeout=60)
        again = await stub.Chat(request, timeout=60)
    assert first.session_id == "client-chosen:1"
    assert again == first
    assert planner.calls == 1


async def test_chat_with_a_running_session_id_is_already_exists(app_factory: AppFactory) -> None:
    gate = asyncio.Event()
    agents, planner = slow_agents(gate=gate)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = _chat(channel)
        request = chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH, session_id="busy-1")
        first = asyncio.ensure_future(stub.Chat(request, timeout=60))
        await asyncio.wait_for(planner.started.wait(), 10)
        error = await _fails(stub.Chat(request, timeout=10))
        gate.set()
        assert (await first).status == OK_STATUS
    assert error.code == grpc.StatusCode.ALREADY_EXISTS
    assert error.reason == "SESSION_RUNNING" and error.domain == "evigate"
    assert error.metadata == {"session_id": "busy-1"}


async def test_stream_chat_sends_each_stage_then_the_result(channel: grpc.aio.Channel) -> None:
    kinds = []
    async for event in _chat(channel).StreamChat(
        chat_service_pb2.StreamChatRequest(query=HIGH_CPU_EN, language="en"), timeout=60
    ):
        kinds.append(event.WhichOneof("event"))
        last = event
    assert kinds[0] == "plan"
    assert "tool_invocation" in kinds
    assert kinds.index("executor_evidence") < kinds.index("gatekeeper_result") < kinds.index("verdict")
    assert kinds[-2:] == ["composer_output", "result"]
    assert last.result.status == OK_STATUS and last.result.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS


@pytest.mark.parametrize(
    ("request_fields", "violations"),
    [
        ({"query": ""}, {"query"}),
        ({"query": "   "}, {"query"}),
        ({"query": "x" * 4001}, {"query"}),
        ({"query": "ok", "language": "fr"}, {"language"}),
        ({"query": "ok", "session_id": "has space"}, {"session_id"}),
        ({"query": "ok", "session_id": "x" * 65}, {"session_id"}),
        ({"query": "", "session_id": "bad/id", "language": "de"}, {"query", "session_id", "language"}),
    ],
)
async def test_chat_rejects_bad_input_with_field_violations(
    channel: grpc.aio.Channel, request_fields: dict[str, str], violations: set[str]
) -> None:
    stub = _chat(channel)
    error = await _fails(stub.Chat(chat_service_pb2.ChatRequest(**request_fields), timeout=10))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert set(error.violations) == violations
    assert error.reason == "INVALID_CHAT_REQUEST" and error.domain == "evigate"
    stream = stub.StreamChat(chat_service_pb2.StreamChatRequest(**request_fields), timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for _ in stream:
            pass
    assert set(decode(info.value).violations) == violations


async def test_malformed_request_bytes_are_invalid_argument_not_internal(channel: grpc.aio.Channel) -> None:
    raw = channel.unary_unary(
        "/evigate.v1.ChatService/Chat", request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    error = await _fails(raw(b"\xff\xff\xff\xff", timeout=10))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "MALFORMED_REQUEST"


async def test_client_deadline_stops_the_pipeline(app_factory: AppFactory) -> None:
    agents, _ = slow_agents(delay=5)
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = _chat(channel)
        error = await _fails(
            stub.Chat(chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH, session_id="dl-1"), timeout=0.5)
        )
        assert error.code == grpc.StatusCode.DEADLINE_EXCEEDED
        trace_stub = trace_service_pb2_grpc.TraceServiceStub(channel)

        async def status() -> int:
            request = trace_service_pb2.GetTraceRequest(session_id="dl-1")
            return int((await trace_stub.GetTrace(request)).trace.session.status)

        # the session is marked FAILED once the pipeline noticed
        await eventually(
            status, lambda s: s == session_pb2.SESSION_STATUS_FAILED, within=5, what="dl-1 recorded FAILED"
        )


# -- feedback ---------------------------------------------------------------------------------


async def _finished_session(channel: grpc.aio.Channel, query: str = HIGH_CPU_ZH) -> str:
    reply = await _chat(channel).Chat(chat_service_pb2.ChatRequest(query=query), timeout=60)
    return str(reply.session_id)


async def test_feedback_useful_creates_one_case(channel: grpc.aio.Channel) -> None:
    session_id = await _finished_session(channel)
    stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    request = feedback_service_pb2.SubmitFeedbackRequest(
        session_id=session_id, feedback=session_pb2.FEEDBACK_USEFUL
    )
    first, second = await stub.SubmitFeedback(request), await stub.SubmitFeedback(request)
    assert first.success and first.message == "反馈已记录" and first.case_id
    assert second.case_id == first.case_id
    bad = await stub.SubmitFeedback(
        feedback_service_pb2.SubmitFeedbackRequest(
            session_id=session_id, feedback=session_pb2.FEEDBACK_NOT_USEFUL
        )
    )
    assert bad.success and bad.case_id == ""
    trace_stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    trace = (await trace_stub.GetTrace(trace_service_pb2.GetTraceRequest(session_id=session_id))).trace
    assert trace.feedback == session_pb2.FEEDBACK_NOT_USEFUL
    assert trace.session.status == OK_STATUS  # feedback never changes status


@pytest.mark.parametrize(("value", "detail"), [(0, "required"), (7, "unknown value 7")])
async def test_feedback_rejects_unspecified_and_unknown_values(
    channel: grpc.aio.Channel, value: int, detail: str
) -> None:
    stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    request = feedback_service_pb2.SubmitFeedbackRequest(session_id="s-1", feedback=value)  # type: ignore[arg-type]
    error = await _fails(stub.SubmitFeedback(request))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert detail in error.violations["feedback"]
    assert error.reason == "INVALID_FEEDBACK_REQUEST"


async def test_feedback_unknown_session_is_not_found(channel: grpc.aio.Channel) -> None:
    stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    error = await _fails(
        stub.SubmitFeedback(
            feedback_service_pb2.SubmitFeedbackRequest(
                session_id="nope", feedback=session_pb2.FEEDBACK_USEFUL
            )
        )
    )
    assert error.code == grpc.StatusCode.NOT_FOUND
    assert error.reason == "SESSION_NOT_FOUND" and error.resource == "nope"


async def test_useful_feedback_without_an_answer_is_failed_precondition(app: App) -> None:
    assert app.database is not None
    repo = app.database.repo
    await repo.create_session("no-answer", "q", "zh", "test")
    await repo.finish_failed("no-answer", "boom", {})
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
        error = await _fails(
            stub.SubmitFeedback(
                feedback_service_pb2.SubmitFeedbackRequest(
                    session_id="no-answer", feedback=session_pb2.FEEDBACK_USEFUL
                )
            )
        )
        ok = await stub.SubmitFeedback(
            feedback_service_pb2.SubmitFeedbackRequest(
                session_id="no-answer", feedback=session_pb2.FEEDBACK_NOT_USEFUL
            )
        )
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "SESSION_HAS_NO_ANSWER" and error.precondition == ["SESSION_HAS_NO_ANSWER"]
    assert ok.success


# -- trace ------------------------------------------------------------------------------------


async def test_get_trace_replays_every_stage(channel: grpc.aio.Channel) -> None:
    session_id = await _finished_session(channel)
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    trace = (await stub.GetTrace(trace_service_pb2.GetTraceRequest(session_id=session_id))).trace
    assert trace.session.session_id == session_id and trace.session.status == OK_STATUS
    assert trace.session.verdict == verdict_pb2.VERDICT_LABEL_PASS
    assert trace.planner_plan.plan
    assert trace.rounds and trace.rounds[0].gatekeeper_result.checked_bindings
    binding = trace.rounds[0].executor_output.claims[0].evidence_bindings[0]
    assert binding.source_invocation_id in {inv.id for inv in trace.tool_invocations}
    assert trace.composer_output.user_facing_answer == trace.session.answer
    assert {latency.stage for latency in trace.stage_latencies} >= {"planner", "executor", "composer"}
    assert trace.agent_backend == "offline"


@pytest.mark.parametrize(("session_id", "code"), [("", "INVALID_ARGUMENT"), ("missing", "NOT_FOUND")])
async def test_get_trace_errors(channel: grpc.aio.Channel, session_id: str, code: str) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    error = await _fails(stub.GetTrace(trace_service_pb2.GetTraceRequest(session_id=session_id)))
    assert error.code.name == code


async def test_list_sessions_filters_and_pages(channel: grpc.aio.Channel) -> None:
    ids = [await _finished_session(channel, HIGH_CPU_ZH) for _ in range(3)]
    feedback = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    await feedback.SubmitFeedback(
        feedback_service_pb2.SubmitFeedbackRequest(
            session_id=ids[0], feedback=session_pb2.FEEDBACK_NOT_USEFUL
        )
    )
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    bad = await stub.ListSessions(
        trace_service_pb2.ListSessionsRequest(feedback=session_pb2.FEEDBACK_NOT_USEFUL)
    )
    assert [s.session_id for s in bad.sessions] == [ids[0]]
    seen: list[str] = []
    token = ""
    while True:
        page = await stub.ListSessions(trace_service_pb2.ListSessionsRequest(page_size=2, page_token=token))
        seen += [s.session_id for s in page.sessions]
        token = page.next_page_token
        if not token:
            break
    assert seen == list(reversed(ids))
    ok = await stub.ListSessions(trace_service_pb2.ListSessionsRequest(status=OK_STATUS, page_size=10_000))
    assert len(ok.sessions) == 3


@pytest.mark.parametrize(
    ("fields", "violation"),
    [
        ({"page_size": -1}, "page_size"),
        ({"page_token": "not-a-token"}, "page_token"),
        ({"page_token": "x" * 2000}, "page_token"),
        ({"feedback": 9}, "feedback"),
        ({"status": 9}, "status"),
    ],
)
async def test_list_sessions_rejects_bad_input(
    channel: grpc.aio.Channel, fields: dict[str, object], violation: str
) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    error = await _fails(stub.ListSessions(trace_service_pb2.ListSessionsRequest(**fields)))  # type: ignore[arg-type]
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert violation in error.violations


# -- gatekeeper -------------------------------------------------------------------------------


async def test_check_passes_real_citations_and_rejects_forged_ones(channel: grpc.aio.Channel) -> None:
    reply = await _chat(channel).Chat(chat_service_pb2.ChatRequest(query=HIGH_CPU_ZH), timeout=60)
    stub = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
    good = await stub.Check(
        gatekeeper_service_pb2.CheckRequest(session_id=reply.session_id, evidence=reply.evidence)
    )
    assert good.result.status == gatekeeper_pb2.GATEKEEPER_STATUS_PASS
    forged = evidence_pb2.ExecutorEvidence()
    forged.CopyFrom(reply.evidence)
    forged.claims[0].evidence_bindings[0].source_invocation_id = 999_999
    bad = await stub.Check(gatekeeper_service_pb2.CheckRequest(session_id=reply.session_id, evidence=forged))
    assert bad.result.status == gatekeeper_pb2.GATEKEEPER_STATUS_FAIL
    assert bad.result.severity == gatekeeper_pb2.SEVERITY_REJECT


async def test_check_errors(app_factory: AppFactory) -> None:
    app = await app_factory(max_claims=2, max_bindings=3)
    evidence = evidence_pb2.ExecutorEvidence(answer_version="executor_evidence_v2")
    async with grpc.aio.insecure_channel(app.address) as channel:
        stub = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
        missing = await _fails(
            stub.Check(gatekeeper_service_pb2.CheckRequest(session_id="x", evidence=evidence))
        )
        assert missing.code == grpc.StatusCode.NOT_FOUND
        no_evidence = await _fails(stub.Check(gatekeeper_service_pb2.CheckRequest(session_id="x")))
        assert no_evidence.violations == {"evidence": "required"}
        many = evidence_pb2.ExecutorEvidence()
        many.CopyFrom(evidence)
        for i in range(3):
            many.claims.add(claim_id=f"c{i}")
        too_many = await _fails(
            stub.Check(gatekeeper_service_pb2.CheckRequest(session_id="x", evidence=many))
        )
        assert "evidence.claims" in too_many.violations
        odd = evidence_pb2.ExecutorEvidence()
        odd.claims.add(claim_id="c", claim_type=42)
        unknown_enum = await _fails(
            stub.Check(gatekeeper_service_pb2.CheckRequest(session_id="x", evidence=odd))
        )
        assert unknown_enum.code == grpc.StatusCode.INVALID_ARGUMENT
        assert any(path.startswith("evidence.claims[0].claim_type") for path in unknown_enum.violations)


async def test_cached_traces_see_local_feedback_at_once_and_others_after_the_ttl(
    app_factory: AppFactory,
) -> None:
    app = await app_factory(trace_cache_ttl_s=0.5)
    async with grpc.aio.insecure_channel(app.address) as channel:
        session_id = await _finished_session(channel)
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = trace_service_pb2.GetTraceRequest(session_id=session_id)
        before = await _scored_trace(stub, request)  # the worker's score also drops the entry
        assert before.feedback == session_pb2.FEEDBACK_UNSPECIFIED
        await feedback_service_pb2_grpc.FeedbackServiceStub(channel).SubmitFeedback(
            feedback_service_pb2.SubmitFeedbackRequest(
                session_id=session_id, feedback=session_pb2.FEEDBACK_USEFUL
            )
        )
        assert (await stub.GetTrace(request)).trace.feedback == session_pb2.FEEDBACK_USEFUL
        assert app.database is not None  # a change this process did not make (another replica's)
        await app.database.repo.submit_feedback(session_id, "not_useful")
        assert (await stub.GetTrace(request)).trace.feedback == session_pb2.FEEDBACK_USEFUL

        async def feedback() -> int:
            return int((await stub.GetTrace(request)).trace.feedback)

        # the cached reply expires after its TTL (0.5 s): the other replica's change shows
        await eventually(
            feedback, lambda f: f == session_pb2.FEEDBACK_NOT_USEFUL, within=5, what="the entry expired"
        )


async def _scored_trace(
    stub: trace_service_pb2_grpc.TraceServiceStub, request: trace_service_pb2.GetTraceRequest
) -> session_pb2.Trace:
    async def trace() -> session_pb2.Trace:
        reply: trace_service_pb2.GetTraceResponse = await stub.GetTrace(request)
        return reply.trace

    return await eventually(
        trace, lambda t: t.HasField("evidence_score"), within=5, what="the evidence score was written"
    )


async def test_the_in_process_workers_score_drops_the_cached_trace(app_factory: AppFactory) -> None:
    app = await app_factory(trace_cache_ttl_s=60)
    async with grpc.aio.insecure_channel(app.address) as channel:
        session_id = await _finished_session(channel)
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = trace_service_pb2.GetTraceRequest(session_id=session_id)
        await stub.GetTrace(request)  # cached, usually before the score is written
        await _scored_trace(stub, request)  # well before the 60 s ttl


async def test_every_violation_of_a_request_is_reported_at_once(channel: grpc.aio.Channel) -> None:
    feedback = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    error = await _fails(
        feedback.SubmitFeedback(feedback_service_pb2.SubmitFeedbackRequest(session_id="bad id", feedback=5))  # type: ignore[arg-type]
    )
    assert set(error.violations) == {"session_id", "feedback"}
    trace = trace_service_pb2_grpc.TraceServiceStub(channel)
    error = await _fails(
        trace.ListSessions(trace_service_pb2.ListSessionsRequest(feedback=4, status=9, page_size=-2))  # type: ignore[arg-type]
    )
    assert set(error.violations) == {"feedback", "status", "page_size"}
    gate = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
    error = await _fails(gate.Check(gatekeeper_service_pb2.CheckRequest(session_id="")))
    assert set(error.violations) == {"session_id", "evidence"}


class _GatedExecutor:
    def __init__(self, inner: Any, gate: asyncio.Event) -> None:
        self.inner, self.gate = inner, gate

    async def execute(self, task: Any) -> Any:
        await self.gate.wait()
        return await self.inner.execute(task)


async def test_stream_events_arrive_while_later_stages_are_still_running(app_factory: AppFactory) -> None:
    gate = asyncio.Event()
    agents, _ = slow_agents()
    agents = dataclasses.replace(agents, executor=_GatedExecutor(agents.executor, gate))
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        call = _chat(channel).StreamChat(chat_service_pb2.StreamChatRequest(query=HIGH_CPU_ZH), timeout=60)
        first = await asyncio.wait_for(call.read(), 10)  # the executor is still blocked
        assert first.WhichOneof("event") == "plan"
        gate.set()
        rest = []
        while (event := await call.read()) is not grpc.aio.EOF:
            rest.append(event.WhichOneof("event"))
    assert rest[-1] == "result"
