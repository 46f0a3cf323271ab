"""The four evigate.v1 services. They translate proto ⇄ domain and call one use case
(server.usecases) each: validation is in server.grpc.validation, conversion in server.grpc.convert,
error mapping in server.grpc.errors (applied by the call wrapper to whatever a handler raises)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc

from evigate.rules.enums import SessionStatus
from evigate.rules.language import answer_language
from evigate.server.codec import from_seed
from evigate.server.deadline import Deadline
from evigate.server.grpc import convert, validation
from evigate.server.grpc.metrics import Metrics
from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.chat import ChatInput, ChatUseCase
from evigate.server.usecases.check import CheckUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.records import TraceRecord
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.usecases.trace_cache import TraceCache
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    gatekeeper_pb2,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)

log = logging.getLogger("evigate.grpc")
FEEDBACK_RECORDED = "反馈已记录"


DEADLINE_MARGIN_S = 0.1
MIN_DEADLINE_MARGIN_S = 0.02


def deadline_of(context: grpc.aio.ServicerContext) -> Deadline:
    """The client's deadline, carried into every tool, LLM and database call of the pipeline.

    The pipeline gets a little less than the client (a tenth, between 20 and 100 ms) so that it
    times out first and records the session as FAILED before gRPC cancels the call, and so that a
    SUCCESS leaves time for the reply."""
    remaining = context.time_remaining()
    if remaining is None:
        return Deadline.none()
    margin = min(DEADLINE_MARGIN_S, max(remaining / 10, MIN_DEADLINE_MARGIN_S))
    return Deadline.after(max(0.0, remaining - margin))


class ChatServicer(chat_service_pb2_grpc.ChatServiceServicer):
    def __init__(self, chat: ChatUseCase, limits: validation.Limits) -> None:
        self._chat = chat
        self._limits = limits

    def _input(
        self, query: str, session_id: str, language: str, context: grpc.aio.ServicerContext
    ) -> ChatInput:
        validation.chat(query, session_id, language, self._limits)
        # no language asked for: the question's, by script (rules.language)
        return ChatInput(query, session_id or None, answer_language(language, query), deadline_of(context))

    async def Chat(  # noqa: N802 - generated method name
        self, request: chat_service_pb2.ChatRequest, context: grpc.aio.ServicerContext
    ) -> chat_service_pb2.ChatResponse:
        chat = self._input(request.query, request.session_id, request.language, context)
        outcome = await self._chat.run(chat)
        response = convert.chat_response(outcome.result)
        # Built before the delivery check: nothing awaits between the check and the send.
        await self._chat.deliver(outcome, context.time_remaining())
        return response

    async def StreamChat(  # noqa: N802
        self, request: chat_service_pb2.StreamChatRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[chat_service_pb2.StreamChatResponse]:
        chat = self._input(request.query, request.session_id, request.language, context)
        events = self._chat.events(chat)
        async with contextlib.aclosing(events):
            async for event in events:
                message = convert.stream_event(event.stage)
                if event.outcome is not None:
                    await self._chat.deliver(event.outcome, context.time_remaining())
                yield message


class FeedbackServicer(feedback_service_pb2_grpc.FeedbackServiceServicer):
    def __init__(self, feedback: FeedbackUseCase) -> None:
        self._feedback = feedback

    async def SubmitFeedback(  # noqa: N802
        self, request: feedback_service_pb2.SubmitFeedbackRequest, context: grpc.aio.ServicerContext
    ) -> feedback_service_pb2.SubmitFeedbackResponse:
        session_id = request.session_id  # each read of a proto string field builds a new str
        word = validation.feedback_request(session_id, request.feedback)
        outcome = await self._feedback.submit(session_id, word)
        return feedback_service_pb2.SubmitFeedbackResponse(
            success=True, message=FEEDBACK_RECORDED, case_id=outcome.case_id or ""
        )


class TraceServicer(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(
        self,
        traces: TraceUseCase,
        cache: TraceCache[trace_service_pb2.GetTraceResponse],
        cases: CaseUseCase | None = None,
    ) -> None:
        self._traces = traces
        self._cache = cache
        self._cases = cases

    async def ListCases(  # noqa: N802
        self, request: trace_service_pb2.ListCasesRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.ListCasesResponse:
        category, service, error_code, size = validation.list_cases_request(
            request.fault_category, request.service, request.error_code, request.page_size
        )
        if self._cases is None:
            return trace_service_pb2.ListCasesResponse()
        found = await self._cases.list(category, service, error_code, request.include_retired, size)
        return trace_service_pb2.ListCasesResponse(cases=[convert.case(c) for c in found])

    async def GetTrace(  # noqa: N802
        self, request: trace_service_pb2.GetTraceRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.GetTraceResponse:
        session_id = request.session_id
        validation.require("INVALID_TRACE_REQUEST", validation.session_id(session_id))
        return await self._traces.get(session_id, _trace_reply, self._cache)

    async def ListSessions(  # noqa: N802
        self, request: trace_service_pb2.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.ListSessionsResponse:
        feedback, status, size, token = validation.list_request(
            request.feedback, request.status, request.page_size, request.page_token
        )
        sessions, next_token = await self._traces.list_sessions(feedback, status, size, token)
        return trace_service_pb2.ListSessionsResponse(
            sessions=[convert.diagnosis_session(s) for s in sessions], next_page_token=next_token or ""
        )


def _trace_reply(record: TraceRecord) -> trace_service_pb2.GetTraceResponse:
    return trace_service_pb2.GetTraceResponse(trace=convert.trace(record))


class GatekeeperServicer(gatekeeper_service_pb2_grpc.GatekeeperServiceServicer):
    def __init__(self, check: CheckUseCase, limits: validation.Limits) -> None:
        self._check = check
        self._limits = limits

    async def Check(  # noqa: N802
        self, request: gatekeeper_service_pb2.CheckRequest, context: grpc.aio.ServicerContext
    ) -> gatekeeper_service_pb2.CheckResponse:
        evidence = validation.check_request(
            request.session_id, request.evidence, request.HasField("evidence"), self._limits
        )
        result = await self._check.check(request.session_id, evidence)
        return gatekeeper_service_pb2.CheckResponse(result=from_seed(gatekeeper_pb2.GatekeeperResult, result))


class MetricsObserver:
    """The chat use case's observer: stage events and finished sessions into the metrics."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def on_event(self, kind: str, data: Any) -> None:
        self._metrics.observe_event(kind, data)

    def on_finished(self, status: str, stage_latencies: Sequence[Any], answer_check: Any) -> None:
        # Sessions are counted where their end is decided: FAILED by the pipeline, SUCCESS on delivery.
        self._metrics.observe_stage_latencies(stage_latencies)
        self._metrics.observe_answer_check(answer_check)

    def on_delivered(self, session_id: str) -> None:
        self._metrics.sessions.labels(SessionStatus.SUCCESS, "ok").inc()
