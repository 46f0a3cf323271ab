"""betterproto2's async client (grpclib, generated/evigate/bp) against an in-process server."""

from __future__ import annotations

import grpclib
import pytest
from grpclib.client import Channel

from evigate.bp.evigate import v1 as bp
from evigate.server.app import App
from tests.server.conftest import HIGH_CPU_EN


def _channel(app: App) -> Channel:
    host, port = app.address.rsplit(":", 1)
    return Channel(host, int(port))


async def test_chat_feedback_trace_and_stream(app: App) -> None:
    channel = _channel(app)
    try:
        chat = bp.ChatServiceStub(channel)
        reply = await chat.chat(bp.ChatRequest(query=HIGH_CPU_EN, language="en"), timeout=60)
        assert reply.status == bp.SessionStatus.SUCCESS
        assert reply.verdict is not None and reply.verdict.verdict == bp.VerdictLabel.PASS
        assert reply.evidence is not None and reply.evidence.claims[0].claim_type == bp.ClaimType.OBSERVATION

        feedback = await bp.FeedbackServiceStub(channel).submit_feedback(
            bp.SubmitFeedbackRequest(session_id=reply.session_id, feedback=bp.Feedback.USEFUL)
        )
        assert feedback.success and feedback.case_id

        trace = (
            await bp.TraceServiceStub(channel).get_trace(bp.GetTraceRequest(session_id=reply.session_id))
        ).trace
        assert trace is not None and trace.case_id == feedback.case_id
        assert trace.session is not None and trace.session.answer == reply.answer

        kinds = []
        names = (
            "plan",
            "tool_invocation",
            "executor_evidence",
            "gatekeeper_result",
            "verdict",
            "composer_output",
        )
        async for event in chat.stream_chat(
            bp.StreamChatRequest(query=HIGH_CPU_EN, language="en"), timeout=60
        ):
            kinds.append(next(name for name in (*names, "result") if getattr(event, name) is not None))
        assert kinds[0] == "plan" and kinds[-1] == "result"
    finally:
        channel.close()


async def test_errors_carry_grpc_status(app: App) -> None:
    channel = _channel(app)
    try:
        with pytest.raises(grpclib.GRPCError) as info:
            await bp.TraceServiceStub(channel).get_trace(bp.GetTraceRequest(session_id="missing"))
        assert info.value.status == grpclib.Status.NOT_FOUND
        with pytest.raises(grpclib.GRPCError) as info:
            await bp.FeedbackServiceStub(channel).submit_feedback(bp.SubmitFeedbackRequest(session_id="x"))
        assert info.value.status == grpclib.Status.INVALID_ARGUMENT
    finally:
        channel.close()
